/**
 * `berth alloc exec [options] <alloc> <command> [<args>...]`: runs a command inside a running task
 * (its mount namespace, root and environment for exec-driver tasks) and exits with its exit code,
 * as Nomad's. Not interactive: piped standard input is sent whole (`-i=false` sends none); there is
 * no TTY (`-t` is refused).
 */
import { execInAlloc } from "../../api/index.js";
import { fail, type Command, type Parsed } from "../command.js";
import { findAlloc, taskOf } from "../alloc_target.js";
import { parseCommandArgs, UsageError } from "../flags.js";

export interface AllocExecArgs extends Parsed {
  id: string;
  task: string | undefined;
  command: string[];
  stdin: boolean;
}

export const allocExec: Command<AllocExecArgs> = {
  usage: "Usage: berth alloc exec [options] <allocation> <command> [<args>...]",
  help: "Runs <command> inside a running task of the allocation (-task names it; an alloc with one task needs none) and exits with its exit code. Standard input, when piped, is sent to the command; -i=false sends none. berth's exec has no TTY.",
  parse(argv) {
    // Everything after the alloc ID is the command, flags included: split there, as Nomad does.
    const at = firstPositional(argv);
    if (at < 0 || at + 1 >= argv.length)
      throw new UsageError("this command takes an allocation and a command");
    const { values } = parseCommandArgs(argv.slice(0, at), {
      task: { type: "string" },
      i: { type: "string" },
      t: { type: "string" },
      job: { type: "boolean" },
    });
    if (values.t !== undefined && values.t !== "false")
      throw new UsageError("berth's exec has no TTY: use -t=false");
    if (values.job) throw new UsageError("-job is not supported: give an allocation ID");
    const i = values.i ?? "true";
    if (i !== "true" && i !== "false") throw new UsageError("-i must be true or false");
    return {
      address: values.address,
      id: argv[at]!,
      task: values.task,
      command: argv.slice(at + 1),
      stdin: i === "true",
    };
  },
  async run(p, io) {
    let alloc;
    let task: string;
    try {
      alloc = await findAlloc(io, p.id);
      task = taskOf(alloc, p.task);
    } catch (err) {
      return fail(io, "looking up allocation", err);
    }
    const input = p.stdin && io.readStdin ? await io.readStdin() : Buffer.alloc(0);
    try {
      const res = await execInAlloc(io.api, alloc.ID, task, p.command, input);
      // Through the CLI's line writers, escaped like everything else it prints.
      for (const l of lines(res.stdout)) io.stdout(l);
      for (const l of lines(res.stderr)) io.stderr(l);
      return res.exitCode;
    } catch (err) {
      return fail(io, "executing command", err);
    }
  },
};

function lines(b: Buffer): string[] {
  if (b.length === 0) return [];
  const all = b.toString("utf8").split("\n");
  if (all.at(-1) === "") all.pop();
  return all;
}

/** The index of the first argument that is not a flag or a flag's value. */
function firstPositional(argv: string[]): number {
  const withValue = new Set([
    "-task",
    "--task",
    "-address",
    "--address",
    "-namespace",
    "--namespace",
    "-token",
    "--token",
    "-region",
    "--region",
  ]);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--") return i + 1 < argv.length ? i + 1 : -1;
    if (!a.startsWith("-")) return i;
    if (withValue.has(a)) i++;
  }
  return -1;
}
