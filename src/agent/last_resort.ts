/**
 * The process's last-resort guard. Background work is tracked where it starts
 * (internal/background.ts), so its failures are logged and surfaced there; a rejection that still
 * reaches the process is a bug. It is logged at error — naming it as such — instead of taking the
 * agent, its running tasks' supervision and its volume releases down with it.
 */
import type { Logger } from "../internal/log.js";

/** Installs the guard on `proc`; returns a function that removes it. */
export function installLastResortGuard(
  log: Logger,
  proc: Pick<NodeJS.Process, "on" | "off"> = process,
): () => void {
  const onRejection = (reason: unknown) => {
    log.error("unhandled promise rejection (a bug: background work must be tracked); continuing", {
      error: reason instanceof Error ? reason : String(reason),
    });
  };
  proc.on("unhandledRejection", onRejection);
  return () => {
    proc.off("unhandledRejection", onRejection);
  };
}
