/**
 * `berth alloc stop|restart|signal`, as Nomad's:
 *   stop [-detach] [-verbose] <alloc>           stops it; the scheduler places a replacement (the
 *                                               evaluation is monitored unless -detach)
 *   restart [-task T] [-all-tasks] <alloc> [T]  restarts its running tasks (or one) in place
 *   signal [-s SIG] [-task T] <alloc> [T]       sends a signal (default SIGKILL) to its tasks (or one)
 */
import { attempt, fail, type Command, type Parsed } from "../command.js";
import { findAlloc } from "../alloc_target.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { monitorEvaluation, rfc3339Local } from "../monitor.js";

export interface AllocStopArgs extends Parsed {
  id: string;
  detach: boolean;
  verbose: boolean;
}

export const allocStop: Command<AllocStopArgs> = {
  usage: "Usage: berth alloc stop [options] <allocation>",
  help: "Stops the allocation; the scheduler places a replacement (on another node when it can). Monitors the evaluation as `job run` does; -detach prints its ID and returns.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      detach: { type: "boolean" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 1, 1, "<allocation>");
    return {
      address: values.address,
      id: positionals[0]!,
      detach: values.detach ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p, io) {
    let evalId: string;
    try {
      const alloc = await findAlloc(io, p.id);
      evalId = (await io.api.allocations.stop(alloc.ID)).EvalID;
    } catch (err) {
      return fail(io, "stopping allocation", err);
    }
    if (p.detach) {
      io.stdout(evalId);
      return 0;
    }
    return monitorEvaluation(evalId, {
      io,
      verbose: p.verbose,
      sleep: (ms) => (io.sleep ? io.sleep(ms) : new Promise((r) => setTimeout(r, ms))),
      formatTime: rfc3339Local,
    });
  },
};

interface TaskTargetArgs extends Parsed {
  id: string;
  task: string;
}

function taskTarget(
  argv: string[],
  extra: Parameters<typeof parseCommandArgs>[1],
): { values: Record<string, unknown>; id: string; task: string; address: string | undefined } {
  const { values, positionals } = parseCommandArgs(argv, { task: { type: "string" }, ...extra });
  expectArgs(positionals, 1, 2, "<allocation> [<task>]");
  if (values.task && positionals[1]) throw new UsageError("give the task once: -task or the second argument");
  return {
    values,
    id: positionals[0]!,
    task: values.task ?? positionals[1] ?? "",
    address: values.address,
  };
}

export interface AllocRestartArgs extends TaskTargetArgs {
  allTasks: boolean;
}

export const allocRestart: Command<AllocRestartArgs> = {
  usage: "Usage: berth alloc restart [options] <allocation> [<task>]",
  help: "Restarts the allocation's running tasks in place (or only <task>, also -task); -all-tasks restarts every task.",
  parse(argv) {
    const t = taskTarget(argv, { "all-tasks": { type: "boolean" } });
    const allTasks = t.values["all-tasks"] === true;
    if (allTasks && t.task) throw new UsageError("-all-tasks and a task name are exclusive");
    return { address: t.address, id: t.id, task: t.task, allTasks };
  },
  run: (p, io) =>
    attempt(io, "restarting allocation", async () => {
      const alloc = await findAlloc(io, p.id);
      await io.api.allocations.restart(alloc.ID, p.task, p.allTasks);
    }),
};

export interface AllocSignalArgs extends TaskTargetArgs {
  signal: string;
}

export const allocSignal: Command<AllocSignalArgs> = {
  usage: "Usage: berth alloc signal [options] <allocation> [<task>]",
  help: "Sends a signal (-s, default SIGKILL) to the allocation's running tasks (or only <task>, also -task).",
  parse(argv) {
    const t = taskTarget(argv, { s: { type: "string" } });
    return {
      address: t.address,
      id: t.id,
      task: t.task,
      signal: (t.values.s as string | undefined) ?? "SIGKILL",
    };
  },
  run: (p, io) =>
    attempt(io, "signalling allocation", async () => {
      const alloc = await findAlloc(io, p.id);
      await io.api.allocations.signal(alloc.ID, p.task, p.signal);
    }),
};
