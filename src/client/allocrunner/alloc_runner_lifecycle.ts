/**
 * Task lifecycle ordering within one alloc, as Nomad's client orders it (allocrunner/tasklifecycle
 * and the alloc runner's task state handling):
 *
 * - prestart tasks start at once. Main tasks start when every prestart task without `sidecar` has
 *   completed successfully and every prestart sidecar is running.
 * - poststart tasks start once no main task is pending any more (all have started, or ended).
 * - poststop tasks start once every other task is dead: after the main tasks and sidecars ended,
 *   also when the alloc is stopped or a task failed. A stop or a sibling's failure does not kill them.
 * - When a task fails, the other live tasks (poststop excepted) are killed ("Sibling Task Failed");
 *   when a `leader` task ends, likewise ("Leader Task Dead"); when only sidecars are left alive,
 *   they are killed ("Main Tasks Dead").
 *
 * Gates only ever open (an alloc runs once). A gated task that is killed before its gate opens is
 * released so its runner runs to its (immediate) end and reports itself dead.
 */
import type { TaskState } from "../../structs/alloc.js";
import type { Task } from "../../structs/job.js";

export type LifecycleStage =
  | "prestart-ephemeral"
  | "prestart-sidecar"
  | "main"
  | "poststart-ephemeral"
  | "poststart-sidecar"
  | "poststop";

export function stageOf(task: Task): LifecycleStage {
  const lc = task.Lifecycle;
  if (!lc) return "main";
  if (lc.Hook === "prestart") return lc.Sidecar ? "prestart-sidecar" : "prestart-ephemeral";
  if (lc.Hook === "poststart") return lc.Sidecar ? "poststart-sidecar" : "poststart-ephemeral";
  return "poststop";
}

type Phase = "prestart" | "main" | "poststart" | "poststop";

function phaseOf(stage: LifecycleStage): Phase {
  if (stage === "prestart-ephemeral" || stage === "prestart-sidecar") return "prestart";
  if (stage === "poststart-ephemeral" || stage === "poststart-sidecar") return "poststart";
  return stage;
}

/** Nomad's TaskState.Successful: dead and not failed. */
function successful(s: TaskState | undefined): boolean {
  return s?.State === "dead" && !s.Failed;
}

export class TaskCoordinator {
  private readonly stages = new Map<string, LifecycleStage>();
  private readonly leaders = new Set<string>();
  private readonly open = new Set<Phase>(["prestart"]);
  private readonly waiters = new Map<string, { promise: Promise<void>; resolve: () => void }>();
  /** Tasks already being killed: each is killed, and told why, once. */
  private readonly doomed = new Set<string>();

  constructor(tasks: Task[]) {
    for (const t of tasks) {
      this.stages.set(t.Name, stageOf(t));
      if (t.Leader) this.leaders.add(t.Name);
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.waiters.set(t.Name, { promise, resolve });
    }
    this.wake();
  }

  /** Resolves once `task` may start (its phase opened) or it was released to be killed. */
  gate(task: string): Promise<void> {
    return this.waiters.get(task)?.promise ?? Promise.resolve();
  }

  release(task: string): void {
    this.waiters.get(task)?.resolve();
  }

  isPoststop(task: string): boolean {
    return this.stages.get(task) === "poststop";
  }

  /** Records that `task` is being killed (by the alloc's stop, or a kill decision). */
  markKilled(task: string): void {
    this.doomed.add(task);
    this.release(task);
  }

  /** Opens the phases the task states now allow. */
  update(states: Readonly<Record<string, TaskState>>): void {
    const of = (stage: LifecycleStage): string[] =>
      [...this.stages].filter(([, s]) => s === stage).map(([n]) => n);
    if (
      of("prestart-ephemeral").every((n) => successful(states[n])) &&
      of("prestart-sidecar").every((n) => states[n]?.State === "running")
    )
      this.open.add("main");
    if (
      this.open.has("main") &&
      of("main").every((n) => states[n] !== undefined && states[n].State !== "pending")
    )
      this.open.add("poststart");
    const others = [...this.stages].filter(([, s]) => s !== "poststop").map(([n]) => n);
    if (others.every((n) => states[n]?.State === "dead")) this.open.add("poststop");
    this.wake();
  }

  /**
   * Which live tasks to kill after a state change, and the event Nomad records on them first; null
   * when none. Poststop tasks are never killed here; a task is named once (it is marked killed).
   */
  killDecision(
    states: Readonly<Record<string, TaskState>>,
  ): { tasks: string[]; type: string; message: string; reason: string } | null {
    let decision: { type: string; message: string; reason: string } | null = null;
    const live: string[] = [];
    for (const [name, stage] of this.stages) {
      if (stage === "poststop") continue;
      const s = states[name];
      if (s?.State !== "dead") {
        live.push(name);
        continue;
      }
      if (s.Failed) {
        decision ??= {
          type: "Sibling Task Failed",
          message: `Task's sibling ${JSON.stringify(name)} failed`,
          reason: `sibling task ${name} failed`,
        };
      } else if (this.leaders.has(name)) {
        decision = {
          type: "Leader Task Dead",
          message: "Leader Task in Group dead",
          reason: `leader task ${name} dead`,
        };
      }
    }
    if (live.length === 0) return null;
    const sidecars = [...this.stages].some(([, s]) => s === "prestart-sidecar" || s === "poststart-sidecar");
    const onlySidecars = live.every((n) => {
      const s = this.stages.get(n);
      return s === "prestart-sidecar" || s === "poststart-sidecar";
    });
    if (!decision && sidecars && onlySidecars)
      decision = {
        type: "Main Tasks Dead",
        message: "Main tasks in the group died",
        reason: "main tasks dead",
      };
    const tasks = live.filter((n) => !this.doomed.has(n));
    if (!decision || tasks.length === 0) return null;
    for (const n of tasks) this.markKilled(n);
    return { tasks, ...decision };
  }

  private wake(): void {
    for (const [name, stage] of this.stages) if (this.open.has(phaseOf(stage))) this.release(name);
  }
}
