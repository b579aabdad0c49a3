/**
 * Keeps one alloc runner per alloc the server assigns to this node: a blocking query on
 * Node.GetAllocs wakes it on every change; new allocs get a runner, known ones an update, and
 * allocs the server no longer lists (purged/garbage-collected) are destroyed — their tasks killed,
 * volumes released and alloc dir removed.
 *
 * Every runner's run() and destroy() is a tracked background task (internal/background.ts): a
 * runner that throws (a state DB error, a bug) is logged and reported — `onRunFailed` marks the
 * alloc failed with the error as its ClientDescription — and never takes the agent down.
 */
import { isAbortError, sleep } from "../internal/abort.js";
import { BackgroundTasks } from "../internal/background.js";
import type { Logger } from "../internal/log.js";
import { isAllocTerminal, allocTaskGroup, type Allocation } from "../structs/alloc.js";
import { asBerthError, type BerthError } from "../structs/errors.js";
import type { ServerMethods } from "../structs/rpc.js";
import type { AllocRunner } from "./allocrunner/alloc_runner.js";

export interface AllocSource {
  call(
    method: "Node.GetAllocs",
    req: ServerMethods["Node.GetAllocs"][0],
    opts?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<ServerMethods["Node.GetAllocs"][1]>;
}

const BLOCKING_WAIT_MS = 30_000;

/** What this class needs of an alloc runner (a fake in unit tests). */
export type AllocRunnerLike = Pick<AllocRunner, "run" | "update" | "destroy" | "shutdown"> &
  Partial<Pick<AllocRunner, "taskRunner" | "allocDir" | "fence">>;

export class AllocSync {
  private readonly runners = new Map<string, { runner: AllocRunnerLike; alloc: Allocation }>();
  private readonly stopped = new AbortController();
  private loop: Promise<void> | null = null;
  private readonly tasks: BackgroundTasks;

  /**
   * `onRunFailed` surfaces a runner whose run() rejected (the client reports the alloc failed with
   * the error as its ClientDescription); the failure is logged at error in any case.
   */
  constructor(
    private readonly nodeId: string,
    private readonly source: AllocSource,
    private readonly newRunner: (alloc: Allocation) => AllocRunnerLike,
    private readonly log: Logger,
    private readonly onRunFailed: (alloc: Allocation, err: BerthError) => void = () => undefined,
  ) {
    this.tasks = new BackgroundTasks(log);
  }

  /**
   * Agent restart: runs a runner for every alloc the state DB kept, before the first watch, so
   * running tasks are re-attached and pending releases resumed without waiting for the server.
   * The first answer from the server then updates them (stop) or destroys the ones it forgot.
   */
  restore(allocs: Allocation[]): void {
    for (const alloc of allocs) {
      if (this.runners.has(alloc.ID)) continue;
      const r = this.newRunner(alloc);
      this.runners.set(alloc.ID, { runner: r, alloc });
      this.log.info("restoring alloc", { alloc: alloc.ID, name: alloc.Name });
      this.startRunner(r, alloc);
    }
  }

  start(): void {
    this.loop ??= this.watch();
  }

  /** Stops watching; runners are left as they are (the caller shuts them down or destroys them). */
  async stop(): Promise<void> {
    this.stopped.abort();
    await this.loop;
  }

  /** Every runner: the ones with no CSI plugin task first, so plugins outlive their users. */
  runnersPluginsLast(): { users: [string, AllocRunnerLike][]; plugins: [string, AllocRunnerLike][] } {
    const users: [string, AllocRunnerLike][] = [];
    const plugins: [string, AllocRunnerLike][] = [];
    for (const [id, { runner, alloc }] of this.runners) {
      const tasks = allocTaskGroup(alloc)?.Tasks ?? [];
      (tasks.some((t) => t.CSIPluginConfig) ? plugins : users).push([id, runner]);
    }
    return { users, plugins };
  }

  /** An alloc this node runs and its runner, for the ClientAlloc RPCs. */
  runner(allocId: string): { runner: AllocRunnerLike; alloc: Allocation } | undefined {
    return this.runners.get(allocId);
  }

  /** Every alloc this node runs, as last given to its runner (the self-fence reads them). */
  allocs(): IterableIterator<Allocation> {
    return (function* (runners) {
      for (const { alloc } of runners.values()) yield alloc;
    })(this.runners);
  }

  /**
   * Stops an alloc on the node's own authority (fence/self_fence.ts: no lease with the servers):
   * its runner is given the alloc with DesiredStatus stop, as if the server had said so, so its
   * tasks are killed (poststop ones are not run: they could write after the servers' fence hold)
   * and its volumes released as on any stop; a runner without `fence` (a simulated node's) takes
   * it as a plain update. A stop is final for a runner: the
   * server's later answers (it may still say "run") do not start the tasks again, and the alloc's
   * terminal status tells the server to replace it.
   */
  stopLocally(allocId: string, reason: string): void {
    const known = this.runners.get(allocId);
    if (!known || known.alloc.DesiredStatus !== "run") return;
    known.alloc = { ...known.alloc, DesiredStatus: "stop", DesiredDescription: reason };
    if (known.runner.fence) known.runner.fence(known.alloc, reason);
    else known.runner.update(known.alloc);
  }

  forget(allocId: string): void {
    this.runners.delete(allocId);
  }

  /** Resolves once every runner's run and every destroy this class started has settled. */
  async settled(): Promise<void> {
    await this.tasks.drain();
  }

  /** Runner tasks (runs and destroys) still in flight, for tests. */
  get inFlight(): number {
    return this.tasks.size;
  }

  private startRunner(r: AllocRunnerLike, alloc: Allocation): void {
    this.tasks.run(
      `alloc ${alloc.ID} runner`,
      () => r.run(),
      (err) => this.onRunFailed(alloc, asBerthError(err)),
    );
  }

  private async watch(): Promise<void> {
    let index = 0;
    const signal = this.stopped.signal;
    while (!signal.aborted) {
      try {
        const resp = await this.source.call(
          "Node.GetAllocs",
          { NodeID: this.nodeId, MinIndex: index, WaitMs: BLOCKING_WAIT_MS },
          { signal, timeoutMs: BLOCKING_WAIT_MS + 15_000 },
        );
        // A smaller index means the server's state was reset; resync from scratch.
        index = resp.Index < index ? 0 : resp.Index;
        this.reconcile(resp.Allocs);
      } catch (err) {
        if (signal.aborted || isAbortError(err)) break;
        this.log.warn("watching allocs failed; retrying", { error: err });
        await sleep(1000, signal).catch(() => undefined);
      }
    }
  }

  private reconcile(allocs: Allocation[]): void {
    const listed = new Set<string>();
    for (const alloc of allocs) {
      listed.add(alloc.ID);
      const known = this.runners.get(alloc.ID);
      if (known) {
        // Only what the server changed is news to the runner (AllocModifyIndex does not move for
        // this node's own status reports); an unchanged alloc is not written to the state DB again.
        if (alloc.AllocModifyIndex === known.alloc.AllocModifyIndex) continue;
        known.alloc = alloc;
        known.runner.update(alloc);
        continue;
      }
      // An alloc that ended before this agent ever ran it needs no runner.
      if (isAllocTerminal(alloc)) continue;
      const r = this.newRunner(alloc);
      this.runners.set(alloc.ID, { runner: r, alloc });
      this.log.info("starting alloc", { alloc: alloc.ID, name: alloc.Name });
      this.startRunner(r, alloc);
    }
    for (const [id, { runner }] of this.runners) {
      if (listed.has(id)) continue;
      this.runners.delete(id);
      this.log.info("alloc removed by the server; destroying", { alloc: id });
      this.tasks.run(`destroying alloc ${id}`, () => runner.destroy());
    }
  }
}
