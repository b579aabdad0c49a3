/** The top-level help text. */
import { COMMANDS } from "./commands/index.js";

export function mainHelp(): string[] {
  const lines = [
    "Usage: berth [-help] <command> [args]",
    "",
    "Commands:",
    "  agent          Runs a berth agent (server and/or client)",
    "  csi-hostpath   Runs berth's reference CSI plugin (directory-backed volumes)",
    "  nodesim        Runs many simulated node agents against a server (scale testing)",
  ];
  for (const [noun, verbs] of Object.entries(COMMANDS)) {
    lines.push(`  ${noun.padEnd(13)}  ${Object.keys(verbs).join(", ")}`);
  }
  lines.push(
    "  version        Prints berth's version",
    "",
    "Nomad's shortcuts work: run, plan, validate, stop, inspect, init (job …), logs, fs, exec,",
    "alloc-status (alloc …), eval-status, node-status, node-drain, server-members.",
    "",
    "Every command takes -address=<addr> (default: $BERTH_ADDR, else http://127.0.0.1:4646);",
    "read commands take -json. Run `berth <command> <verb> -h` for a command's help.",
    "TLS: -ca-cert, -ca-path, -client-cert, -client-key, -tls-server-name, -tls-skip-verify",
    "(or NOMAD_CACERT, NOMAD_CAPATH, NOMAD_CLIENT_CERT, NOMAD_CLIENT_KEY, NOMAD_TLS_SERVER_NAME,",
    "NOMAD_SKIP_VERIFY, each after its BERTH_ twin) for an https:// address.",
  );
  return lines;
}

export function nounHelp(noun: string): string[] {
  const verbs = COMMANDS[noun] ?? {};
  return [
    `Usage: berth ${noun} <subcommand> [options] [args]`,
    "",
    "Subcommands:",
    ...Object.values(verbs).map((e) => `  ${e.usage.replace(/^Usage: /, "")}`),
  ];
}
