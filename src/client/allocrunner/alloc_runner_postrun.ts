/**
 * The alloc runner's prerun and postrun phases.
 *
 * Prerun: each hook's prerun in order, until one fails; the failure is answered, not thrown.
 *
 * Postrun: each hook's postrun in order, once every task (poststop tasks
 * included) is dead. A hook's long work (a volume release) comes back as `background` and is
 * handed to `track`, so postrun never blocks the alloc's status; failures are logged, and a
 * background failure is rethrown into the tracked promise for destroy() to report.
 */
import type { Logger } from "../../internal/log.js";
import { asBerthError, type BerthError } from "../../structs/errors.js";
import { runHookPhase, type AllocHook } from "./hooks.js";

export async function runPostrun(
  hooks: readonly AllocHook[],
  signal: AbortSignal,
  log: Logger,
  track: (p: Promise<void>) => void,
): Promise<void> {
  for (const hook of hooks) {
    if (!hook.postrun) continue;
    const h = hook;
    try {
      const res = await runHookPhase(hook, "postrun", log, () => h.postrun!(signal));
      if (res?.background) {
        track(
          res.background.catch((err: unknown) => {
            log.error("background postrun work failed", { hook: h.name, error: asBerthError(err).message });
            throw err;
          }),
        );
      }
    } catch (err) {
      log.error("postrun hook failed", { error: asBerthError(err).message });
    }
  }
}

export async function runPrerun(
  hooks: readonly AllocHook[],
  signal: AbortSignal,
  log: Logger,
): Promise<BerthError | null> {
  for (const hook of hooks) {
    if (!hook.prerun) continue;
    const h = hook;
    try {
      await runHookPhase(hook, "prerun", log, () => h.prerun!(signal));
    } catch (err) {
      return asBerthError(err);
    }
  }
  return null;
}
