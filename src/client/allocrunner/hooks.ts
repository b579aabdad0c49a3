/**
 * Alloc runner hooks: one small interface per phase. A hook implements the phases it cares about.
 * Contracts: every phase is idempotent; postrun and destroy are safe when prerun never ran (or
 * failed half-way), because a restarted agent or a failed alloc reaches them that way.
 */
import { BerthError, asBerthError } from "../../structs/errors.js";
import type { Logger } from "../../internal/log.js";

export interface HookBase {
  readonly name: string;
}

/** Runs before any task starts; a failure fails the alloc. */
export interface PrerunHook extends HookBase {
  prerun(signal: AbortSignal): Promise<void>;
}

/**
 * Runs once every task is dead. Work that may take long (releasing volumes) is returned as
 * `background`, which the runner tracks so postrun itself never blocks the alloc's status.
 */
export interface PostrunHook extends HookBase {
  postrun(signal: AbortSignal): Promise<{ background?: Promise<void> } | void>;
}

/** Runs when the alloc is destroyed (after postrun), before its directory is removed. */
export interface DestroyHook extends HookBase {
  destroy(signal: AbortSignal): Promise<void>;
}

/** Agent exit: cancel background work, leave tasks and mounts as they are. */
export interface ShutdownHook extends HookBase {
  shutdown(): void;
}

export type AllocHook = Partial<PrerunHook & PostrunHook & DestroyHook & ShutdownHook> & HookBase;

/** Runs one hook phase, logging its duration and wrapping a failure with the hook's name. */
export async function runHookPhase<T>(
  hook: HookBase,
  phase: "prerun" | "postrun" | "destroy",
  log: Logger,
  fn: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  try {
    const result = await fn();
    log.debug(`${phase} hook finished`, { hook: hook.name, ms: Date.now() - started });
    return result;
  } catch (err) {
    const e = asBerthError(err);
    log.warn(`${phase} hook failed`, { hook: hook.name, ms: Date.now() - started, error: e.message });
    throw new BerthError(e.code, `${phase} hook "${hook.name}" failed: ${e.message}`, { cause: err });
  }
}
