/** `berth agent`: parse flags, start, run until SIGINT/SIGTERM, stop cleanly. */
import { createLogger } from "../internal/log.js";
import { asBerthError } from "../structs/errors.js";
import { Agent } from "./agent.js";
import { installLastResortGuard } from "./last_resort.js";
import { AGENT_USAGE } from "./agent_usage.js";
import { loadAgentOptions, type AgentOptions } from "./options.js";

export async function runAgent(argv: string[]): Promise<number> {
  if (argv.some((a) => a === "-h" || a === "-help" || a === "--help")) {
    process.stdout.write(AGENT_USAGE + "\n");
    return 0;
  }
  let opts: AgentOptions;
  try {
    // The flags and the config files they name: a bad one stops the agent before anything is made.
    opts = await loadAgentOptions(argv);
  } catch (err) {
    process.stderr.write(`Error: ${asBerthError(err).message}\n`);
    return 1;
  }
  const log = createLogger({
    level: (process.env.BERTH_LOG_LEVEL as AgentOptions["logLevel"] | undefined) ?? opts.logLevel,
  });
  installLastResortGuard(log);
  // Nomad keys berth accepts but does not use (config_triage.ts): said once, before anything starts.
  for (const warning of opts.fileConfig.warnings ?? []) log.warn(`config: ${warning}`);
  const agent = new Agent(opts, log);
  // The first signal starts a graceful stop; repeats are noted, not fatal, so a supervisor that
  // signals the whole process group twice cannot cut the release of volumes short.
  let signals = 0;
  const stopRequested = new Promise<string>((resolve) => {
    const onSignal = (name: string) => {
      signals += 1;
      if (signals === 1) resolve(name);
      else log.warn(`caught ${name} again; still stopping (allocs are being stopped and volumes released)`);
    };
    process.on("SIGINT", () => onSignal("SIGINT"));
    process.on("SIGTERM", () => onSignal("SIGTERM"));
  });
  try {
    await agent.start();
  } catch (err) {
    log.error("agent failed to start", { error: asBerthError(err).message });
    await agent.stop().catch(() => undefined);
    return 1;
  }
  const mode = opts.dev
    ? "dev"
    : [opts.server && "server", opts.client && "client"].filter(Boolean).join("+");
  process.stdout.write(
    `==> berth agent started (${mode})${agent.httpBind ? `; HTTP API listening on ${agent.httpBind}` : ""}\n`,
  );
  const signal = await stopRequested;
  log.info(`caught ${signal}; stopping`);
  try {
    await agent.stop();
  } catch (err) {
    log.error("agent did not stop cleanly", { error: asBerthError(err).message });
    return 1;
  }
  process.stdout.write("==> berth agent stopped\n");
  return 0;
}
