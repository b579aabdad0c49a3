/**
 * `berth <noun> <verb> [flags] [args]`: finds the command, parses, runs, and turns every failure
 * into one line on stderr and an exit code. `berth agent` and `berth csi-hostpath` never get here:
 * the program router (../main.ts) sends them to their own entry points, so the CLI imports api/ only.
 */
import { resolveConnection, type Connection } from "../api/index.js";
import { COMMANDS } from "./commands/index.js";
import { connectionFlags, UsageError, wantsHelp } from "./flags.js";
import { describeError } from "./format.js";
import { mainHelp, nounHelp } from "./help.js";
import type { CommandIO } from "./io.js";
import { expandAlias } from "./aliases.js";
import { VERSION_WORDS } from "./version.js";
import { berthVersion } from "../api/version.js";

export interface CliDeps {
  stdout(line: string): void;
  stderr(line: string): void;
  /** The IO a command runs with, for the agent address, namespace, token and region it resolved. */
  io(connection: Connection): CommandIO;
  env: NodeJS.ProcessEnv;
}

const HELP = new Set(["-h", "-help", "--help", "help"]);

export async function runCli(argv: string[], deps: CliDeps): Promise<number> {
  if (argv[0] !== undefined && VERSION_WORDS.has(argv[0])) {
    deps.stdout(`berth v${berthVersion()}`);
    return 0;
  }
  const [noun, verb, ...rest] = expandAlias(argv);
  if (noun === undefined || HELP.has(noun)) {
    mainHelp().forEach((l) => deps.stdout(l));
    return noun === undefined ? 1 : 0;
  }

  const verbs = COMMANDS[noun];
  if (!verbs) {
    deps.stderr(`Error: unknown command ${JSON.stringify(noun)}; run \`berth -h\` for the list`);
    return 1;
  }
  if (verb === undefined || HELP.has(verb)) {
    nounHelp(noun).forEach((l) => (verb === undefined ? deps.stderr(l) : deps.stdout(l)));
    return verb === undefined ? 1 : 0;
  }
  const command = verbs[verb];
  if (!command) {
    deps.stderr(`Error: unknown command "${noun} ${verb}"`);
    nounHelp(noun).forEach((l) => deps.stderr(l));
    return 1;
  }
  if (wantsHelp(rest)) {
    deps.stdout(command.usage);
    deps.stdout("");
    deps.stdout(`  ${command.help}`);
    return 0;
  }
  let prepared;
  try {
    prepared = command.prepare(rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    deps.stderr(`Error: ${err.message}`);
    deps.stderr(command.usage);
    return 1;
  }
  try {
    const flags = { ...connectionFlags(rest), address: prepared.address };
    return await prepared.run(deps.io(resolveConnection(flags, deps.env)));
  } catch (err) {
    // Commands report their own failures; this is the net for the unexpected.
    deps.stderr(`Error: ${describeError(err)}`);
    return 1;
  }
}
