/**
 * Three-word commands (`berth acl policy apply`): the dispatcher finds `acl policy`, and this
 * group picks the sub-command from the next word and hands it the rest of the command line.
 */
import type { Command, Parsed } from "../command.js";
import { UsageError } from "../flags.js";
import type { CommandIO } from "../io.js";

export interface GroupParsed extends Parsed {
  go(io: CommandIO): Promise<number>;
}

/** A sub-command of any parse type, erased behind a closure so one table can hold them all. */
export interface SubCommand {
  usage: string;
  prepare(argv: string[]): GroupParsed;
}

export function sub<P extends Parsed>(c: Command<P>): SubCommand {
  return {
    usage: c.usage,
    prepare(argv) {
      const parsed = c.parse(argv);
      return { address: parsed.address, go: (io) => c.run(parsed, io) };
    },
  };
}

export function group(name: string, help: string, subs: Record<string, SubCommand>): Command<GroupParsed> {
  const verbs = Object.keys(subs).join("|");
  return {
    usage: [
      `Usage: berth ${name} <${verbs}> [options] [args]`,
      "",
      ...Object.values(subs).map((s) => `  ${s.usage.replace(/^Usage: /, "")}`),
    ].join("\n"),
    help,
    parse(argv) {
      const [verb, ...rest] = argv;
      const s = verb === undefined ? undefined : subs[verb];
      if (!s) throw new UsageError(`berth ${name} takes a sub-command: ${verbs}`);
      return s.prepare(rest);
    },
    run: (p, io) => p.go(io),
  };
}
