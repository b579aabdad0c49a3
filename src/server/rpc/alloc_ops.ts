/**
 * What an operator does to one running alloc (Nomad's `alloc stop|signal|restart|logs|exec`, and
 * `alloc status -stats`).
 * Stop is the server's: the alloc is marked to migrate and its job evaluated, so the scheduler
 * stops it and places a replacement (Nomad's AllocStop). The rest run on the alloc's node, over the
 * connection its agent keeps open (ClientAlloc.* RPCs); a node without one answers
 * ERR_NODE_NOT_CONNECTED.
 */
import { allocTaskGroup, isAllocTerminal, type Allocation } from "../../structs/alloc.js";
import { BerthError, notFound, validationError } from "../../structs/errors.js";
import { NS_PER_MS } from "../../structs/job.js";
import type { AllocResourceUsage } from "../../structs/resource_usage.js";
import type { ClientMethods } from "../../structs/rpc.js";
import type { ExecOpenRequest } from "../../structs/rpc_exec.js";
import { SIGNAL_NAMES } from "../../structs/task_stanzas_validate.js";
import type { ServerDeps } from "../deps.js";

type ExecSessionMethod =
  "ClientAlloc.ExecOpen" | "ClientAlloc.ExecInput" | "ClientAlloc.ExecOutput" | "ClientAlloc.ExecClose";

/** Exec's deadline: a non-interactive command must finish within it. */
export const EXEC_TIMEOUT_MS = 5 * 60_000;

export class AllocOps {
  constructor(private readonly deps: ServerDeps) {}

  /** Marks the alloc to migrate and evaluates its job; answers the eval (Nomad's AllocStopResponse). */
  async stop(id: string): Promise<{ EvalID: string; Index: number }> {
    const alloc = this.get(id);
    const nowNs = Date.now() * NS_PER_MS;
    await this.deps.store.txn((tx) => {
      const a = tx.getAlloc(id);
      if (!a || isAllocTerminal(a)) return;
      tx.putAlloc({ ...a, DesiredTransition: { ...a.DesiredTransition, Migrate: true }, ModifyTime: nowNs });
    });
    const result = await this.deps.scheduler.evaluate(alloc.Namespace, alloc.JobID, "alloc-stop");
    return { EvalID: result.evalId, Index: Math.max(result.index, this.deps.store.index()) };
  }

  async signal(id: string, task: string, signal: string): Promise<void> {
    const alloc = this.running(id, task);
    const sig = signal === "" ? "SIGKILL" : signal.toUpperCase();
    if (!SIGNAL_NAMES.includes(sig)) {
      throw validationError(
        "Signal",
        `unknown signal ${JSON.stringify(signal)} (one of ${SIGNAL_NAMES.join(", ")})`,
      );
    }
    await this.call(alloc, "ClientAlloc.Signal", { AllocID: id, Task: task, Signal: sig });
  }

  async restart(id: string, task: string, allTasks: boolean): Promise<void> {
    if (task && allTasks) throw validationError("AllTasks", "a task name and AllTasks are exclusive");
    const alloc = this.running(id, task);
    await this.call(alloc, "ClientAlloc.Restart", { AllocID: id, Task: task, AllTasks: allTasks });
  }

  async readLog(
    id: string,
    req: Omit<ClientMethods["ClientAlloc.ReadLog"][0], "AllocID">,
    signal?: AbortSignal,
  ): Promise<ClientMethods["ClientAlloc.ReadLog"][1]> {
    const alloc = this.get(id);
    this.checkTask(alloc, req.Task);
    return this.call(alloc, "ClientAlloc.ReadLog", { AllocID: id, ...req }, signal);
  }

  /**
   * One of Nomad's client FS calls (`alloc fs`) on the alloc's node, for any alloc the store still
   * has (a finished alloc's files stay readable while its dir is on the node, as its logs).
   */
  fs<M extends "ClientFS.List" | "ClientFS.Stat" | "ClientFS.ReadAt">(
    id: string,
    method: M,
    req: Omit<ClientMethods[M][0], "AllocID">,
    signal?: AbortSignal,
  ): Promise<ClientMethods[M][1]> {
    const alloc = this.get(id);
    return this.call(alloc, method, { AllocID: id, ...req }, signal);
  }

  /** What the alloc's running tasks use now, measured on its node (ClientAlloc.Stats). */
  stats(id: string, signal?: AbortSignal): Promise<AllocResourceUsage> {
    const alloc = this.running(id, "");
    return this.call(alloc, "ClientAlloc.Stats", { AllocID: id, Task: "" }, signal);
  }

  async exec(
    id: string,
    task: string,
    command: string[],
    stdin: Buffer,
  ): Promise<ClientMethods["ClientAlloc.Exec"][1]> {
    const alloc = this.running(id, task);
    if (!task) throw validationError("task", "a task name is required");
    if (command.length === 0 || command.some((c) => typeof c !== "string" || c.includes("\0"))) {
      throw validationError("command", "a non-empty list of strings without NUL is required");
    }
    return this.call(
      alloc,
      "ClientAlloc.Exec",
      {
        AllocID: id,
        Task: task,
        Command: command,
        Stdin: stdin.toString("base64"),
        TimeoutMs: EXEC_TIMEOUT_MS,
      },
      undefined,
      EXEC_TIMEOUT_MS + 10_000,
    );
  }

  /**
   * One call of an interactive exec session (rpc_exec.ts) on the alloc's node. Opening checks the
   * alloc, task and command as exec does; the session's later calls only need its node.
   */
  execSession<M extends ExecSessionMethod>(
    id: string,
    method: M,
    params: ClientMethods[M][0],
    opts: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<ClientMethods[M][1]> {
    const alloc =
      method === "ClientAlloc.ExecOpen" ? this.running(id, (params as ExecOpenRequest).Task) : this.get(id);
    if (method === "ClientAlloc.ExecOpen") {
      const { Task, Command } = params as ExecOpenRequest;
      if (!Task) throw validationError("task", "a task name is required");
      if (Command.length === 0 || Command.some((c) => typeof c !== "string" || c.includes("\0"))) {
        throw validationError("command", "a non-empty list of strings without NUL is required");
      }
    }
    return this.call(alloc, method, params, opts.signal, opts.timeoutMs);
  }

  /** Throws what an exec request for `task` of alloc `id` would be refused with, before it starts. */
  checkExec(id: string, task: string): void {
    this.running(id, task);
  }

  private get(id: string): Allocation {
    const alloc = this.deps.store.getAlloc(id);
    if (!alloc) throw notFound("allocation", id);
    return alloc;
  }

  private checkTask(alloc: Allocation, task: string): void {
    if (!task) return;
    const tasks = allocTaskGroup(alloc)?.Tasks ?? [];
    if (!tasks.some((t) => t.Name === task)) throw notFound(`task in allocation ${alloc.ID}:`, task);
  }

  /** An alloc that may still have running tasks, with `task` (when named) one of its tasks. */
  private running(id: string, task: string): Allocation {
    const alloc = this.get(id);
    if (isAllocTerminal(alloc)) throw new BerthError("ERR_CONFLICT", `allocation ${id} is terminal`);
    this.checkTask(alloc, task);
    return alloc;
  }

  private call<M extends keyof ClientMethods>(
    alloc: Allocation,
    method: M,
    params: ClientMethods[M][0],
    signal?: AbortSignal,
    timeoutMs = 30_000,
  ): Promise<ClientMethods[M][1]> {
    return this.deps.conns.call(alloc.NodeID, method, params, { timeoutMs, signal });
  }
}
