/**
 * How the task runner calls its hooks' phases: each call timed (its duration logged) and with the
 * hook's name in any error it throws, keeping whether that error is recoverable (aborts pass through
 * untouched); the poststart, exited and stop phases run over every hook in order.
 */
import { isAbortError } from "../../../internal/abort.js";
import type { Logger } from "../../../internal/log.js";
import type { ExitResult, TaskHandle } from "../../drivers/driver.js";
import { asBerthError, BerthError } from "../../../structs/errors.js";
import { isRecoverable, NonRecoverableError, type TaskHook } from "./hooks.js";

/** Runs one hook phase, logs its duration, and names the hook in any error it throws. */
export async function timedHook<T>(
  log: Logger,
  hook: string,
  phase: string,
  fn: () => Promise<T>,
): Promise<T> {
  const t0 = performance.now();
  try {
    return await fn();
  } catch (err) {
    if (isAbortError(err)) throw err;
    const e = asBerthError(err);
    const message = `${phase} hook "${hook}" failed: ${e.message}`;
    throw isRecoverable(err)
      ? new BerthError(e.code, message, { cause: err })
      : new NonRecoverableError(e.code, message);
  } finally {
    log.debug("hook finished", { hook, phase, ms: Math.round(performance.now() - t0) });
  }
}

/** Poststart hooks alongside the running task; a failure (unless aborted) asks for a restart. */
export async function runPoststartHooks(
  hooks: TaskHook[],
  handle: TaskHandle,
  signal: AbortSignal,
  log: Logger,
  restart: (reason: string) => Promise<void>,
): Promise<void> {
  for (const h of hooks) {
    if (!h.poststart || signal.aborted) continue;
    try {
      await timedHook(log, h.name, "poststart", () => h.poststart!(handle, signal));
    } catch (err) {
      if (signal.aborted) return;
      const msg = asBerthError(err).message;
      log.error("poststart hook failed", { err });
      await restart(msg);
      return;
    }
  }
}

/** Exited hooks, after each exit of the task; failures are logged. */
export async function runExitedHooks(hooks: TaskHook[], result: ExitResult, log: Logger): Promise<void> {
  for (const h of hooks) {
    if (!h.exited) continue;
    await timedHook(log, h.name, "exited", () => h.exited!(result)).catch((err: unknown) =>
      log.error("exited hook failed", { err }),
    );
  }
}

/** Stop hooks, once the task is dead for good; failures are logged. */
export async function runStopHooks(hooks: TaskHook[], log: Logger): Promise<void> {
  for (const h of hooks) {
    if (!h.stop) continue;
    await timedHook(log, h.name, "stop", () => h.stop!()).catch((err: unknown) =>
      log.error("stop hook failed", { err }),
    );
  }
}
