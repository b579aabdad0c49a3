/**
 * The task's log collector (client/logmon/), as Nomad's logmon hook: before every start of a task
 * whose output is collected (log_plan.ts), the previous start's collector is let finish (it drains
 * its pipes) or ended, a new one is started detached, and its FIFOs are held open until the task
 * has its own write ends (poststart, or the next exit or start), so the collector cannot see end
 * of file before the task writes. After each exit the collector is given a moment to drain, so a
 * dead task's files are whole when its state says dead.
 *
 * An agent restart changes nothing: the collector is not the agent's (it has its own session) and
 * the task keeps writing into the FIFOs; a recovered task skips prestart, and the restarted agent
 * finds the collector through its record (logmon_process.ts) when the task exits or starts again.
 */
import type fs from "node:fs/promises";
import type { Logger } from "../../../internal/log.js";
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import type { LogmonLimits } from "../../logmon/logmon_process.js";
import {
  awaitLogmonReady,
  readLogmonRecord,
  removeLogmonRecord,
  retireLogmon,
  startLogmon,
  waitLogmonExit,
} from "../../logmon/logmon_process.js";
import type { TaskHook } from "./hooks.js";

/** How long a new collector may take to open its FIFOs (a Node process start, on a busy node). */
const READY_TIMEOUT_MS = 30_000;
/** How long a collector may take to drain after its task exited (then it is left, or ended). */
const DRAIN_MS = 3_000;

export class LogmonHook implements TaskHook {
  readonly name = "logmon";
  private held: fs.FileHandle[] = [];

  constructor(
    private readonly allocDir: AllocDir,
    private readonly task: string,
    private readonly limits: LogmonLimits,
    private readonly log: Logger,
  ) {}

  async prestart(signal: AbortSignal): Promise<undefined> {
    await this.release();
    const prev = await readLogmonRecord(this.allocDir, this.task);
    // Two collectors must never append to the same files: the last start's goes first.
    if (prev) await retireLogmon(prev, DRAIN_MS, signal);
    const rec = await startLogmon(this.allocDir, this.task, this.limits);
    this.log.debug("log collector started", { pid: rec.pid });
    this.held = await awaitLogmonReady(this.allocDir, this.task, rec, READY_TIMEOUT_MS, signal);
    return undefined;
  }

  async poststart(): Promise<void> {
    await this.release();
  }

  async exited(): Promise<void> {
    await this.release();
    const rec = await readLogmonRecord(this.allocDir, this.task);
    if (rec && !(await waitLogmonExit(rec, DRAIN_MS))) {
      // Something the task started still holds its stdout; the next start or the stop ends it.
      this.log.info("log collector still has writers after the task exited", { pid: rec.pid });
    }
  }

  async stop(): Promise<void> {
    await this.release();
    const rec = await readLogmonRecord(this.allocDir, this.task);
    if (!rec) return;
    await retireLogmon(rec, DRAIN_MS);
    await removeLogmonRecord(this.allocDir, this.task);
  }

  private async release(): Promise<void> {
    const held = this.held;
    this.held = [];
    await Promise.all(held.map((h) => h.close()));
  }
}
