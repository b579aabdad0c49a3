/** The `berth` executable (bin/berth imports this module). */
import { ApiClient } from "../api/index.js";
import { runCli } from "./dispatch.js";
import { describeError } from "./format.js";
import { processIO } from "./io.js";

const out = (line: string) => process.stdout.write(line + "\n");
const err = (line: string) => process.stderr.write(line + "\n");

try {
  process.exitCode = await runCli(process.argv.slice(2), {
    stdout: out,
    stderr: err,
    io: (address) => processIO(new ApiClient({ address })),
    env: process.env,
  });
} catch (e) {
  err(`Error: ${describeError(e)}`);
  process.exitCode = 1;
}
