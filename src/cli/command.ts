/**
 * The shape every CLI command has: `parse` turns argv (after `berth <noun> <verb>`) into a value or
 * throws UsageError; `run` does the work against CommandIO and resolves with the exit code.
 */
import type { CommandIO } from "./io.js";
import { describeError } from "./format.js";

export interface Parsed {
  /** From `-address`; the dispatcher falls back to BERTH_ADDR, then the default. */
  address: string | undefined;
}

export interface Command<P extends Parsed = Parsed> {
  /** `berth job run [options] <path>` */
  usage: string;
  /** One paragraph shown under the usage line by `-h`. */
  help: string;
  parse(argv: string[]): P;
  run(parsed: P, io: CommandIO): Promise<number>;
}

/** Reports a failed step as `Error <doing>: <why>` on stderr; returns the exit code 1. */
export function fail(io: CommandIO, doing: string, err: unknown): number {
  io.stderr(`Error ${doing}: ${describeError(err)}`);
  return 1;
}

/** Runs a step that prints its own success: exit 0, or `Error <doing>: <why>` and exit 1 if it throws. */
export async function attempt(io: CommandIO, doing: string, step: () => Promise<void>): Promise<number> {
  try {
    await step();
    return 0;
  } catch (err) {
    return fail(io, doing, err);
  }
}

/** A spec file read (`-` is stdin), parsed, then submitted; either step failing is one error line. */
export interface SpecSubmission<S> {
  file: string;
  /** "job" or "volume", for `Error parsing <kind> file <path>`. */
  kind: string;
  parse(file: string, text: string): Promise<S>;
  /** What a failed submission reports: `Error <doing>: <why>`. */
  doing: string;
  submit(spec: S): Promise<void>;
}

export async function submitSpec<S>(io: CommandIO, s: SpecSubmission<S>): Promise<number> {
  let spec: S;
  try {
    spec = await s.parse(s.file, await io.readFile(s.file));
  } catch (err) {
    return fail(io, `parsing ${s.kind} file ${s.file}`, err);
  }
  return attempt(io, s.doing, () => s.submit(spec));
}
