/** The `berth` executable (bin/berth imports this module). */
import { ApiClient } from "../api/index.js";
import { runCli } from "./dispatch.js";
import { describeError } from "./format.js";
import { exitQuietlyOnBrokenPipe, processIO } from "./io.js";

const out = (line: string) => process.stdout.write(line + "\n");
const err = (line: string) => process.stderr.write(line + "\n");

const argv = process.argv.slice(2);
// The agent and the plugin run long and shut down cleanly on their own; the commands are tools.
if (argv[0] !== "agent" && argv[0] !== "csi-hostpath") exitQuietlyOnBrokenPipe();

try {
  process.exitCode = await runCli(argv, {
    stdout: out,
    stderr: err,
    io: (address) => processIO(new ApiClient({ address })),
    env: process.env,
  });
} catch (e) {
  err(`Error: ${describeError(e)}`);
  process.exitCode = 1;
}
