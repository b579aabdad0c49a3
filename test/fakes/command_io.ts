/** An in-memory CommandIO for the CLI tests: talks to an API address, records output, reads canned files. */
import { ApiClient } from "../../src/api/index.js";
import type { CommandIO } from "../../src/cli/io.js";
import { NOW } from "../builders/api_records.js";

export interface CapturedIO extends CommandIO {
  out: string[];
  err: string[];
}

/** A CommandIO that talks to `address`, records output, and reads "files" from `files`. */
export function captureIO(address: string, files: Record<string, string> = {}): CapturedIO {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    api: new ApiClient({ address }),
    readFile: async (path) => {
      const text = files[path];
      if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
      return text;
    },
    now: () => NOW,
  };
}
