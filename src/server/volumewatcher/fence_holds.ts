/**
 * Single-writer claims of down nodes this watcher holds for the fence bound (decide.ts
 * `hold-fence`), per volume, with when each hold ends. Pure: `now` is monotonic ms passed in.
 *
 * No store write ends a hold, so the watcher wakes itself: `nextDue` is when the first hold ends,
 * `due` the volumes to read again then. `fresh` names the holds this watcher has not made visible
 * yet (one ReleaseStatus write per hold per watcher: a new leader, counting afresh, writes its own
 * end time).
 */
import type { HeldClaim } from "./decide.js";

interface Hold {
  nodeId: string;
  until: number;
}

export class FenceHolds {
  private readonly byVolume = new Map<string, Map<string, Hold>>();

  /**
   * Records the volume's holds now (forgetting its others) and answers those not recorded before
   * (or recorded with another node or end): the ones to make visible.
   */
  note(key: string, held: HeldClaim[]): HeldClaim[] {
    const prev = this.byVolume.get(key);
    if (held.length === 0) {
      this.byVolume.delete(key);
      return [];
    }
    const next = new Map<string, Hold>();
    const fresh: HeldClaim[] = [];
    for (const h of held) {
      const old = prev?.get(h.claim.AllocationID);
      if (!old || old.nodeId !== h.claim.NodeID || old.until !== h.until) fresh.push(h);
      next.set(h.claim.AllocationID, { nodeId: h.claim.NodeID, until: h.until });
    }
    this.byVolume.set(key, next);
    return fresh;
  }

  forget(key: string): void {
    this.byVolume.delete(key);
  }

  clear(): void {
    this.byVolume.clear();
  }

  /** Keys of the volumes with a hold that ended at `now`. */
  due(now: number): string[] {
    const out: string[] = [];
    for (const [key, holds] of this.byVolume) {
      for (const h of holds.values()) {
        if (h.until <= now) {
          out.push(key);
          break;
        }
      }
    }
    return out;
  }

  /** When the first hold ends (monotonic ms); undefined when none is held. */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const holds of this.byVolume.values()) {
      for (const h of holds.values()) if (next === undefined || h.until < next) next = h.until;
    }
    return next;
  }
}
