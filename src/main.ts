/**
 * The `berth` program (bin/berth imports this module): routes the first argument to the agent, the
 * hostpath plugin, the node simulator or the CLI. Each is loaded only when asked for, so the CLI's start-up never pays
 * for the server, client or gRPC code, and the CLI itself stays an HTTP client (it imports api/ only;
 * `berth -h` still lists agent and csi-hostpath, see cli/help.ts).
 */
const [program, ...rest] = process.argv.slice(2);

async function route(): Promise<number> {
  // The agent and the plugin run long and shut down cleanly on their own.
  if (program === "agent") return (await import("./agent/main.js")).runAgent(rest);
  if (program === "csi-hostpath") return (await import("./csi/hostpath/main.js")).hostpathMain(rest);
  // A task's log collector, started detached by the agent (client/logmon/logmon_process.ts).
  if (program === "logmon") return (await import("./client/logmon/logmon_main.js")).logmonMain(rest);
  if (program === "nodesim") return (await import("./nodesim/main.js")).nodesimMain(rest);
  return (await import("./cli/main.js")).cliMain(process.argv.slice(2));
}

try {
  process.exitCode = await route();
} catch (e) {
  process.stderr.write(`Error: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
}
