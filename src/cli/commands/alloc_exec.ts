/**
 * `berth alloc exec [options] <alloc> <command> [<args>...]`: runs a command inside a running task
 * (its mount namespace, root and environment for exec-driver tasks) and exits with its exit code,
 * as Nomad's. `-t` (the default when standard input is a terminal, as Nomad's) runs it on a
 * pseudo-terminal, interactively: the local terminal is put in raw mode, keys go out as typed,
 * window size changes follow, the remote terminal's output is written as it is (alloc_exec_tty.ts).
 * Without `-t`, piped standard input is sent whole (`-i=false` sends none) and the output comes
 * back when the command ends.
 */
import { execInAlloc } from "../../api/index.js";
import { runTtyExec } from "./alloc_exec_tty.js";
import { fail, type Command, type Parsed } from "../command.js";
import { findAlloc, taskOf } from "../alloc_target.js";
import { parseCommandArgs, UsageError } from "../flags.js";

export interface AllocExecArgs extends Parsed {
  id: string;
  task: string | undefined;
  command: string[];
  stdin: boolean;
  /** -t: true/false as given; undefined: a TTY when standard input is a terminal. */
  tty: boolean | undefined;
}

export const allocExec: Command<AllocExecArgs> = {
  usage: "Usage: berth alloc exec [options] <allocation> <command> [<args>...]",
  help: "Runs <command> inside a running task of the allocation (-task names it; an alloc with one task needs none) and exits with its exit code. -t runs it on a pseudo-terminal, interactively (the default when standard input is a terminal; -t=false disables it). Without -t, piped standard input is sent to the command; -i=false sends none.",
  parse(argv) {
    // Everything after the alloc ID is the command, flags included: split there, as Nomad does.
    const at = firstPositional(argv);
    if (at < 0 || at + 1 >= argv.length)
      throw new UsageError("this command takes an allocation and a command");
    const { values } = parseCommandArgs(boolFlags(argv.slice(0, at)), {
      task: { type: "string" },
      i: { type: "string" },
      t: { type: "string" },
      job: { type: "boolean" },
    });
    if (values.job) throw new UsageError("-job is not supported: give an allocation ID");
    const i = values.i ?? "true";
    if (i !== "true" && i !== "false") throw new UsageError("-i must be true or false");
    const t = values.t;
    if (t !== undefined && t !== "true" && t !== "false") throw new UsageError("-t must be true or false");
    if (t === "true" && i === "false") throw new UsageError("-i must be enabled if running with tty");
    return {
      address: values.address,
      id: argv[at]!,
      task: values.task,
      command: argv.slice(at + 1),
      stdin: i === "true",
      tty: t === undefined ? undefined : t === "true",
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
    const tty = p.tty ?? (p.stdin && io.terminal?.stdin.isTTY === true);
    if (tty) {
      try {
        return await runTtyExec(io, alloc.ID, task, p.command);
      } catch (err) {
        return fail(io, "executing command", err);
      }
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

/** Nomad's boolean -i and -t given bare (`-t`, and `-it`/`-ti` for both) as `-x=true`. */
function boolFlags(flags: string[]): string[] {
  return flags.flatMap((f) => {
    if (f === "-it" || f === "-ti") return ["-i=true", "-t=true"];
    if (/^--?[it]$/.test(f)) return [`${f}=true`];
    return [f];
  });
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
