/**
 * `berth nodesim`: parse flags, start the simulated nodes (printing progress), print a status line
 * every 10 s, run until SIGINT/SIGTERM, stop cleanly.
 */
import { createLogger } from "../internal/log.js";
import { NodeSim } from "./nodesim.js";
import { NODESIM_USAGE, parseNodeSimArgs, type NodeSimCli } from "./options.js";

const STATUS_EVERY_MS = 10_000;

export async function nodesimMain(argv: string[]): Promise<number> {
  if (argv.some((a) => a === "-h" || a === "-help" || a === "--help")) {
    process.stdout.write(NODESIM_USAGE + "\n");
    return 0;
  }
  let cli: NodeSimCli;
  try {
    cli = parseNodeSimArgs(argv);
  } catch (err) {
    process.stderr.write(`Error: ${(err as Error).message}\n\n${NODESIM_USAGE}\n`);
    return 1;
  }
  const log = createLogger({ level: cli.logLevel, component: "nodesim" });
  const sim = new NodeSim({ ...cli.sim, log });
  const stopRequested = new Promise<string>((resolve) => {
    process.once("SIGINT", () => resolve("SIGINT"));
    process.once("SIGTERM", () => resolve("SIGTERM"));
  });
  const t0 = performance.now();
  const out = (line: string) => process.stdout.write(`==> nodesim: ${line}\n`);
  out(`starting ${cli.sim.count} nodes against ${cli.sim.servers.join(", ")}`);
  let lastProgress = 0;
  const started = sim
    .start((registered) => {
      if (registered - lastProgress >= Math.max(100, cli.sim.count / 10)) {
        lastProgress = registered;
        out(`${registered}/${cli.sim.count} nodes registered`);
      }
    })
    .then(() => {
      const c = sim.counts();
      out(`${c.registered}/${c.nodes} nodes registered in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    });
  const status = setInterval(() => {
    const c = sim.counts();
    out(
      `${c.registered}/${c.nodes} registered, ${c.registrations} registrations, ${c.heartbeats} heartbeats, ` +
        `${c.mounts} mounts, ${c.injectedErrors} injected CSI errors`,
    );
  }, STATUS_EVERY_MS);
  const signal = await Promise.race([stopRequested, started.then(() => stopRequested)]);
  clearInterval(status);
  out(`caught ${signal}; stopping${cli.drainOnExit ? " (stopping allocs and releasing volumes first)" : ""}`);
  await sim.stop(cli.drainOnExit);
  out("stopped");
  return 0;
}
