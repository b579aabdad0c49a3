/**
 * `berth tls cert create -server|-client|-cli [options]` (Nomad's `tls cert create`): makes a
 * certificate signed by the cluster's CA, in the current directory, named after its role as Nomad's
 * are: `<region>-<role>-<domain>.pem` and `…-key.pem` (global-server-nomad.pem for a server). Its
 * common name is `<role>.<region>.<domain>` (server.global.nomad), the name verify_server_hostname
 * checks; SANs add `localhost`, and for -server/-client `127.0.0.1`, plus the -additional-dnsname
 * and -additional-ipaddress given. The region is -region (a connection flag, as in Nomad), else
 * BERTH_REGION/NOMAD_REGION, else "global".
 */
import fs from "node:fs/promises";
import net from "node:net";
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { assertAbsent, CERT_MODE, daysFlag, dnsPart, generator, KEY_MODE, writeNew } from "./tls_files.js";

export type CertRole = "server" | "client" | "cli";

export interface TlsCertCreateArgs extends Parsed {
  role: CertRole;
  /** Undefined: the connection's region (BERTH_REGION/NOMAD_REGION), else "global". */
  region: string | undefined;
  domain: string;
  days: number;
  caFile: string;
  keyFile: string;
  dnsNames: string[];
  ipAddresses: string[];
}

/** Nomad's certificate lifetime: one year. */
export const DEFAULT_CERT_DAYS = 365;

const ROLE_TITLE: Record<CertRole, string> = { server: "Server", client: "Client", cli: "CLI" };

export const tlsCertCreate: Command<TlsCertCreateArgs> = {
  usage: "Usage: berth tls cert create -server|-client|-cli [options]",
  help: `Creates a certificate for a server, a node agent (client) or the CLI, signed by the CA (-ca, default <domain>-agent-ca.pem; -key, default <domain>-agent-ca-key.pem), as <region>-<role>-<domain>.pem and its -key.pem in the current directory; existing files are never replaced. Its name is <role>.<region>.<domain> (server.global.nomad), plus localhost, 127.0.0.1 (server, client), -additional-dnsname and -additional-ipaddress (repeatable). -days sets its lifetime (default ${DEFAULT_CERT_DAYS}).`,
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      server: { type: "boolean" },
      client: { type: "boolean" },
      cli: { type: "boolean" },
      days: { type: "string" },
      domain: { type: "string" },
      ca: { type: "string" },
      key: { type: "string" },
      "additional-dnsname": { type: "string", multiple: true },
      "additional-ipaddress": { type: "string", multiple: true },
    });
    if (positionals[0] !== "create") throw new UsageError('the subcommand is "tls cert create"');
    expectArgs(positionals.slice(1), 0, 0, "no arguments");
    const roles = (["server", "client", "cli"] as const).filter((r) => values[r]);
    if (roles.length !== 1) throw new UsageError("give exactly one of -server, -client or -cli");
    const domain = dnsPart("-domain", values.domain ?? "nomad");
    const dnsNames = (values["additional-dnsname"] ?? []).map((d) => d.trim()).filter((d) => d !== "");
    for (const d of dnsNames) {
      if (!/^(\*\.)?[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(d)) {
        throw new UsageError(`-additional-dnsname ${JSON.stringify(d)} is not a DNS name`);
      }
    }
    const ipAddresses = (values["additional-ipaddress"] ?? []).map((i) => i.trim()).filter((i) => i !== "");
    for (const ip of ipAddresses) {
      if (net.isIP(ip) === 0)
        throw new UsageError(`-additional-ipaddress ${JSON.stringify(ip)} is not an IP address`);
    }
    return {
      address: values.address,
      role: roles[0]!,
      region: values.region ? dnsPart("-region", values.region) : undefined,
      domain,
      days: daysFlag(values.days, DEFAULT_CERT_DAYS),
      caFile: values.ca ?? `${domain}-agent-ca.pem`,
      keyFile: values.key ?? `${domain}-agent-ca-key.pem`,
      dnsNames,
      ipAddresses,
    };
  },
  async run(p, io) {
    const region = p.region ?? regionFromEnv(io.env) ?? "global";
    const name = `${p.role}.${region}.${p.domain}`;
    const prefix = `${region}-${p.role}-${p.domain}`;
    const certFile = `${prefix}.pem`;
    const keyFile = `${prefix}-key.pem`;
    const ips = p.role === "cli" ? p.ipAddresses : [...p.ipAddresses, "127.0.0.1"];
    try {
      dnsPart("the region", region);
      await assertAbsent([
        { path: certFile, what: "Certificate" },
        { path: keyFile, what: "Key" },
      ]);
      const ca = {
        cert: await readNamed(p.caFile, "CA"),
        key: await readNamed(p.keyFile, "CA key"),
      };
      if (p.role === "server") {
        io.stderr("==> WARNING: a server certificate lets its holder act as a server: it receives");
        io.stderr("    every node's connection and the volumes' secrets. Give it to server hosts only,");
        io.stderr("    and keep it as safe as the CA key.");
      }
      io.stdout(`==> Using CA file ${p.caFile} and CA key ${p.keyFile}`);
      const pem = await (
        await generator()
      ).generateCert({
        ca,
        name,
        days: p.days,
        dnsNames: [...new Set([...p.dnsNames, name, "localhost"])],
        ipAddresses: [...new Set(ips)],
      });
      await writeNew(certFile, pem.cert, CERT_MODE);
      io.stdout(`==> ${ROLE_TITLE[p.role]} Certificate saved to ${certFile}`);
      await writeNew(keyFile, pem.key, KEY_MODE);
      io.stdout(`==> ${ROLE_TITLE[p.role]} Certificate key saved to ${keyFile}`);
      return 0;
    } catch (err) {
      return fail(io, `creating the ${p.role} certificate`, err);
    }
  },
};

function regionFromEnv(env: NodeJS.ProcessEnv | undefined): string | undefined {
  return env?.BERTH_REGION || env?.NOMAD_REGION || undefined;
}

async function readNamed(file: string, what: string): Promise<string> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (err) {
    throw new Error(
      `reading ${what} ${JSON.stringify(file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      { cause: err },
    );
  }
}
