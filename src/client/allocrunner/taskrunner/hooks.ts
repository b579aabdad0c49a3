/**
 * Task-runner hooks: one small interface per phase. The runner calls each phase's hooks in order,
 * times them, and wraps their errors with the hook's name.
 *
 * - prestart: before every start (restarts included); may contribute mounts and env.
 * - poststart: after every start, concurrently with the task; `signal` aborts when the task exits
 *   or is killed. Must honour it.
 * - exited: after every exit of the task (restarts included); safe without poststart.
 * - stop: once, when the task is dead for good; safe without prestart.
 */
import { BerthError, type ErrorCode } from "../../../structs/errors.js";
import type { ExitResult, TaskHandle, TaskMount } from "../../drivers/driver.js";

export interface PrestartResult {
  mounts?: TaskMount[];
  env?: Record<string, string>;
}

export interface PrestartHook {
  readonly name: string;
  prestart(signal: AbortSignal): Promise<PrestartResult | undefined>;
}

export interface PoststartHook {
  readonly name: string;
  poststart(handle: TaskHandle, signal: AbortSignal): Promise<void>;
}

export interface ExitedHook {
  readonly name: string;
  exited(result: ExitResult): Promise<void>;
}

export interface StopHook {
  readonly name: string;
  stop(): Promise<void>;
}

export type TaskHook = Partial<PrestartHook & PoststartHook & ExitedHook & StopHook> & {
  readonly name: string;
};

/** What hooks may do to the task they belong to. */
export interface TaskLifecycle {
  emitEvent(type: string, message: string, details?: Record<string, string>): void;
  /**
   * Stops the running task so the restart policy starts it again (counted as a failure); resolves
   * once it is stopped. A no-op when the task is not running.
   */
  restart(reason: string): Promise<void>;
}

/**
 * A setup error that restarting cannot fix (bad jobspec, a driver that cannot mount): the runner
 * fails the task at once instead of burning restart attempts.
 */
export class NonRecoverableError extends BerthError {
  readonly recoverable = false;

  constructor(code: ErrorCode, message: string) {
    super(code, message);
    this.name = "NonRecoverableError";
  }
}

export function isRecoverable(err: unknown): boolean {
  return !(err instanceof NonRecoverableError);
}
