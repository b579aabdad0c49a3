/**
 * The per-volume lock (ServerDeps.volumeLocks) made cluster-wide when several servers share etcd.
 *
 * Claim, the release walk (a node's CSIVolume.Unpublish, the leader's volumewatcher), create,
 * snapshot and detach hold a volume's lock for their whole run, so their controller calls never
 * interleave. A KeyedMutex alone only holds within one server: a node's Unpublish on its own
 * server and the leader's volumewatcher then walked one claim at once (two
 * ControllerUnpublishVolume calls), and a late detach could land after a new claim's
 * ControllerPublish on the same node and detach the volume under a running task.
 *
 * ClusterKeyedMutex keeps the local queue (one holder per key per server, so waiting is fair and
 * costs etcd nothing) and, inside it, takes an etcd key `<prefix>/ha/volume-locks/<key>` created
 * only when absent and bound to this server's session lease: a server that dies frees its locks
 * when its lease runs out, a stopping one revokes its lease and frees them at once. Without etcd
 * (SQLite, one server) it is the plain KeyedMutex.
 *
 * Bound to the session (docs/design.md "Leader work is fenced by term"): a lock counts as held only
 * while the session it was taken in is confirmed fresh — the step-down rule of the election,
 * `confirmedSentAt + ttl − STEP_DOWN_MARGIN_MS` (election.ts sessionRefusal) — which ends before
 * etcd can expire the lease and so before another server can take the key. The work under the
 * lock runs inside a fence (internal/fence.ts) that checks exactly that right before every
 * server→node call it sends (NodeConnections.call): a server that resumes from a pause longer than
 * the lease, or lost etcd for that long, refuses the controller call of the operation it began
 * under the lock (ERR_FENCED, retryable) instead of sending it while another server may hold the
 * lock. So a volume's controller calls never run from two servers at once, whether or not the
 * plugin guards against calls in flight. The fence retires when the lock is released. What is left:
 * a call sent just before the deadline reaches its node up to the margin (0.6 s) later.
 */
import { randomUUID } from "node:crypto";
import type { Etcd3 } from "etcd3";
import { sleep, throwIfAborted } from "../../internal/abort.js";
import { backoffDelay } from "../../internal/backoff.js";
import { ScopedFence, runFenced } from "../../internal/fence.js";
import { KeyedMutex } from "../../internal/keyed_mutex.js";
import type { Logger } from "../../internal/log.js";
import { BerthError } from "../../structs/errors.js";
import type { StateReader } from "../state/store.js";

/** A cluster-wide lock this server took. */
export interface HeldLock {
  /** Frees it (best effort: a lock whose session is gone is gone already). */
  release(): Promise<void>;
  /** Why it no longer counts as held (its session over or not confirmed fresh), or undefined. */
  refusal(): string | undefined;
}

/** Takes a cluster-wide lock on `key`. */
export interface LockBackend {
  acquire(key: string, signal?: AbortSignal): Promise<HeldLock>;
}

/**
 * A KeyedMutex whose holder also holds the key cluster-wide while `backend()` gives a backend and
 * `needsCluster(key)` says the work may need it (default: always).
 */
export class ClusterKeyedMutex extends KeyedMutex {
  constructor(
    private readonly backend: () => LockBackend | null,
    private readonly needsCluster: (key: string) => boolean = () => true,
  ) {
    super();
  }

  override run<T>(key: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return super.run(
      key,
      async () => {
        const backend = this.backend();
        if (!backend || !this.needsCluster(key)) return fn();
        const held = await backend.acquire(key, signal);
        const fence = new ScopedFence(() => {
          const why = held.refusal();
          return why === undefined
            ? undefined
            : `the cluster lock on volume ${key} is no longer held: ${why}`;
        });
        try {
          return await runFenced(fence, fn);
        } finally {
          fence.retire();
          await held.release();
        }
      },
      signal,
    );
  }
}

/**
 * Whether work on the volume `key` (`<namespace>/<id>`, deps.ts volumeKey) takes the etcd lock:
 * unless the volume exists, its plugin does not attach (ControllerRequired false) and no claim of
 * it was ControllerPublished. Claiming and freeing such a volume is one linearizable store
 * transaction each, with no attach/detach to interleave, so it keeps the per-server lock and its
 * throughput (four etcd round trips less per claim+release). A volume not (yet) stored takes the
 * lock: it is being created.
 */
export function mayAttach(store: Pick<StateReader, "getVolume">, key: string): boolean {
  const slash = key.indexOf("/");
  const vol = slash < 0 ? undefined : store.getVolume(key.slice(0, slash), key.slice(slash + 1));
  if (!vol || vol.ControllerRequired) return true;
  return [vol.ReadClaims, vol.WriteClaims, vol.PastClaims].some((claims) =>
    Object.values(claims).some((c) => c.ControllerPublishPluginID !== undefined),
  );
}

/** How long a lock is waited for while this server has no etcd session (etcd unreachable). */
const NO_SESSION_WAIT_MS = 10_000;

/** Volume locks as etcd keys bound to this server's session lease. */
export class EtcdLocks implements LockBackend {
  private leaseId = "";
  private readonly stopped = new AbortController();

  constructor(
    private readonly client: Etcd3,
    /** e.g. `/berth/ha/volume-locks/` (keys.ts). */
    private readonly prefix: string,
    private readonly selfId: string,
    private readonly log: Logger,
    /** Why the session `leaseId` no longer makes a held lock count (LeaderElection.sessionRefusal). */
    private readonly sessionRefusal: (leaseId: string) => string | undefined = () => undefined,
  ) {}

  /** This server's current session lease (LeaderElection.onSession); "" before the first one. */
  rebind(leaseId: string): void {
    this.leaseId = leaseId;
  }

  /**
   * Creates the lock key when absent, bound to the session lease; while another server holds it,
   * retries with a capped backoff (the holder deletes it when done, or its lease expires). Rejects
   * when `signal` aborts, and with ERR_RPC_UNAVAILABLE (retryable) after NO_SESSION_WAIT_MS
   * without a session (or with one not confirmed fresh) or when etcd fails the request.
   */
  async acquire(key: string, signal?: AbortSignal): Promise<HeldLock> {
    const lockKey = this.prefix + key;
    const token = `${this.selfId}/${randomUUID()}`;
    let sessionless = 0;
    for (let attempt = 0; ; attempt++) {
      throwIfAborted(signal);
      if (this.stopped.signal.aborted) {
        throw new BerthError("ERR_RPC_UNAVAILABLE", `cannot lock ${key}: the server is stopping`);
      }
      const leaseId = this.leaseId;
      // A session not confirmed fresh is as good as none: a lock taken in it would not count.
      if (leaseId === "" || this.sessionRefusal(leaseId) !== undefined) {
        if (sessionless === 0) sessionless = Date.now();
        else if (Date.now() - sessionless > NO_SESSION_WAIT_MS) {
          throw new BerthError(
            "ERR_RPC_UNAVAILABLE",
            `cannot lock ${key}: this server has no etcd session (etcd unreachable?)`,
          );
        }
      } else {
        sessionless = 0;
        let taken: boolean;
        try {
          const res = await this.client
            .if(lockKey, "Create", "==", 0)
            .then(this.client.put(lockKey).value(token).lease(leaseId))
            .commit();
          taken = res.succeeded;
        } catch (err) {
          // A lease that ended with the session: the next session's lease is awaited above.
          if (this.leaseId !== leaseId) continue;
          throw new BerthError(
            "ERR_RPC_UNAVAILABLE",
            `cannot lock ${key} in etcd: ${(err as Error).message}`,
          );
        }
        if (taken) {
          return {
            release: () => this.release(lockKey, token),
            refusal: () => this.sessionRefusal(leaseId),
          };
        }
      }
      await sleep(backoffDelay(attempt, 20, 500), signal);
    }
  }

  /** Deletes the key if it is still this holder's; retried in the background when etcd fails. */
  private async release(lockKey: string, token: string): Promise<void> {
    const once = () =>
      this.client.if(lockKey, "Value", "==", token).then(this.client.delete().key(lockKey)).commit();
    try {
      await once();
    } catch (err) {
      this.log.warn("could not free a volume lock in etcd; retrying", { key: lockKey, error: err });
      void this.retryRelease(once, lockKey);
    }
  }

  /**
   * Until the delete lands, this server's session changes (the old lease, and the key with it, is
   * gone or going) or the server stops (it revokes its lease).
   */
  private async retryRelease(once: () => Promise<unknown>, lockKey: string): Promise<void> {
    const leaseId = this.leaseId;
    const stopped = this.stopped.signal;
    for (let attempt = 1; this.leaseId === leaseId && !stopped.aborted; attempt++) {
      await sleep(backoffDelay(attempt, 200, 5_000), stopped).catch(() => undefined);
      if (stopped.aborted) break;
      try {
        await once();
        return;
      } catch {
        /* still failing */
      }
    }
    this.log.debug("volume lock left to go with its lease", { key: lockKey });
  }

  /** The server is stopping: background releases end (its lease is revoked, freeing the keys). */
  close(): void {
    this.stopped.abort();
  }
}
