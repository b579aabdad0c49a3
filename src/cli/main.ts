/** The CLI as a program: `berth <noun> <verb> …` on the process's real streams (see ../main.ts). */
import { ApiClient } from "../api/index.js";
import { runCli } from "./dispatch.js";
import { describeError } from "./format.js";
import { exitQuietlyOnBrokenPipe, lineWriter, processIO } from "./io.js";

/** `argv` is everything after `berth`. Resolves with the process exit code. */
export async function cliMain(argv: string[]): Promise<number> {
  const err = lineWriter(process.stderr);
  // The commands are tools: `berth … | head` ends them quietly.
  exitQuietlyOnBrokenPipe();
  try {
    return await runCli(argv, {
      stdout: lineWriter(process.stdout),
      stderr: err,
      io: (connection) => processIO(new ApiClient(connection)),
      env: process.env,
    });
  } catch (e) {
    err(`Error: ${describeError(e)}`);
    return 1;
  }
}
