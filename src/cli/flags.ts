/**
 * Nomad-style flags on top of util.parseArgs: a single dash (`-address=ADDR`, `-address ADDR`,
 * `-json`) as well as a double one. Every command also takes the global `-address`.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import type { ConnectionFlags } from "../api/index.js";

/** A mistake in how a command was invoked: reported with the command's usage line, exit 1. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** `-flag` and `-flag=v` become `--flag` and `--flag=v`; everything after `--` stays as written. */
export function normaliseFlags(argv: readonly string[]): string[] {
  const out: string[] = [];
  let rest = false;
  for (const arg of argv) {
    if (rest || arg === "--") {
      rest = true;
      out.push(arg);
    } else if (/^-[a-zA-Z][\w-]*(=.*)?$/s.test(arg)) {
      out.push("-" + arg);
    } else {
      out.push(arg);
    }
  }
  return out;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * The connection flags every command takes, as Nomad's: each falls back to BERTH_*, then NOMAD_*
 * (api/address.ts resolveConnection).
 */
const COMMON = {
  address: { type: "string" },
  namespace: { type: "string" },
  token: { type: "string" },
  region: { type: "string" },
  // Client TLS, as Nomad's (api/tls.ts): each falls back to BERTH_*, then NOMAD_* (NOMAD_CACERT, …).
  "ca-cert": { type: "string" },
  "ca-path": { type: "string" },
  "client-cert": { type: "string" },
  "client-key": { type: "string" },
  "tls-server-name": { type: "string" },
  "tls-skip-verify": { type: "boolean" },
} as const satisfies Options;

/** The string-valued connection flags and their ConnectionFlags names. */
const STRING_FLAGS: Record<string, Exclude<keyof ConnectionFlags, "tlsSkipVerify">> = {
  address: "address",
  namespace: "namespace",
  token: "token",
  region: "region",
  "ca-cert": "caCert",
  "ca-path": "caPath",
  "client-cert": "clientCert",
  "client-key": "clientKey",
  "tls-server-name": "tlsServerName",
};

/**
 * The connection flags out of a command line, whatever command it is for: the dispatcher reads them
 * here so each command's parse need only know its own flags (it still accepts these). A flag given
 * twice: the last wins, as parseArgs does.
 */
export function connectionFlags(argv: readonly string[]): ConnectionFlags {
  const out: ConnectionFlags = {};
  const args = normaliseFlags(argv);
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "--") break;
    if (arg === "--tls-skip-verify") {
      out.tlsSkipVerify = true;
      continue;
    }
    const m = /^--([a-z-]+)(?:=(.*))?$/s.exec(arg);
    const name = m ? STRING_FLAGS[m[1]!] : undefined;
    if (!m || name === undefined) continue;
    if (m[2] !== undefined) out[name] = m[2];
    else if (i + 1 < args.length) out[name] = args[++i];
  }
  return out;
}

/** True when the user asked for a command's help (`-h`, `-help`, `--help`) before any `--`. */
export function wantsHelp(argv: readonly string[]): boolean {
  for (const arg of argv) {
    if (arg === "--") return false;
    if (arg === "-h" || arg === "-help" || arg === "--help") return true;
  }
  return false;
}

/** Parses a command's flags plus the common ones; unknown flags are usage errors. */
export function parseCommandArgs<O extends Options>(argv: readonly string[], options: O) {
  try {
    return parseArgs({
      args: normaliseFlags(argv),
      options: { ...COMMON, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

/** Checks the positional count: `min..max` arguments, each named in `what` for the message. */
export function expectArgs(positionals: string[], min: number, max: number, what: string): void {
  if (positionals.length < min || positionals.length > max) {
    const count = (k: number) => (k === 1 ? "one argument" : `${k} arguments`);
    if (max === 0) throw new UsageError("this command takes no arguments");
    const n = min === max ? `exactly ${count(min)}` : `${min === 0 ? "at most" : `${min} to`} ${count(max)}`;
    throw new UsageError(`this command takes ${n}: ${what}`);
  }
}
