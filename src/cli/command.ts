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
