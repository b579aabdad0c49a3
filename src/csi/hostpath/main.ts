/** `berth csi-hostpath …`: runs the hostpath plugin until SIGTERM/SIGINT. */
import { createLogger } from "../../internal/log.js";
import { HOSTPATH_USAGE, parseHostpathFlags, type HostpathConfig } from "./flags.js";
import { startHostpathServer } from "./server.js";

/** `argv` is what follows `csi-hostpath`. Resolves with the process exit code. */
export async function hostpathMain(argv: string[]): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(HOSTPATH_USAGE + "\n");
    return 0;
  }
  let config: HostpathConfig;
  try {
    config = parseHostpathFlags(argv);
  } catch (err) {
    process.stderr.write(`csi-hostpath: ${(err as Error).message}\n${HOSTPATH_USAGE}\n`);
    return 2;
  }
  const log = createLogger({ component: "csi-hostpath" });
  let server;
  try {
    server = await startHostpathServer(config, log);
  } catch (err) {
    log.error("cannot start", { error: err });
    return 1;
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.off("SIGTERM", on);
      process.off("SIGINT", on);
      resolve(s);
    };
    process.on("SIGTERM", on);
    process.on("SIGINT", on);
  });
  log.info("stopping", { signal });
  await server.stop();
  return 0;
}
