/**
 * Fences: conditions an external call (a server→node call, hence every controller call) must
 * still meet at the moment it is sent, carried with the work that began under them.
 *
 * Two kinds exist (docs/design.md "Leader work is fenced by term"):
 * - a leader term (leader/gate.ts): the leader's loops run inside their term's fence, so whatever
 *   they start — a release, a condition poll, an orphan listing — is refused once the term ended or
 *   the server's etcd session is no longer confirmed fresh (a paused leader that resumes);
 * - a cluster volume lock (leader/volume_locks.ts): the work under the lock runs inside the lock's
 *   fence, which holds only while the session that took the lock is confirmed fresh, i.e. before
 *   another server can take the lock.
 *
 * The fences travel in an AsyncLocalStorage, so the code between the fence and the send (claim,
 * release, create, the volumewatcher) needs no parameter for them: every continuation of the work
 * (awaits, timers it sets) sees them. `checkFences()` is called right before a send, in the same
 * synchronous tick (NodeConnections.call), and throws ERR_FENCED naming the first fence that fails.
 *
 * A fence ends its scope with `retire()` (a lock released): work that escaped the scope (e.g. a
 * listener a commit under the lock woke) is not held to it afterwards.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { BerthError } from "../structs/errors.js";

export interface Fence {
  /** Why a call may no longer be sent under this fence; undefined while it holds. */
  refusal(): string | undefined;
}

/** A fence with a scope: once retired it refuses nothing. */
export class ScopedFence implements Fence {
  private retired = false;

  constructor(private readonly check: () => string | undefined) {}

  refusal(): string | undefined {
    return this.retired ? undefined : this.check();
  }

  retire(): void {
    this.retired = true;
  }
}

const fences = new AsyncLocalStorage<readonly Fence[]>();

/** Runs `fn` (and everything it starts) inside `fence`, on top of the fences already around it. */
export function runFenced<T>(fence: Fence, fn: () => T): T {
  return fences.run([...(fences.getStore() ?? []), fence], fn);
}

/** The reason the current work may not send an external call now, or undefined. */
export function fenceRefusal(): string | undefined {
  for (const f of fences.getStore() ?? []) {
    const why = f.refusal();
    if (why !== undefined) return why;
  }
  return undefined;
}

/** Throws ERR_FENCED when a fence around the current work no longer holds; `what` names the call. */
export function checkFences(what: string): void {
  const why = fenceRefusal();
  if (why !== undefined) throw new BerthError("ERR_FENCED", `${what} not sent: ${why}`);
}
