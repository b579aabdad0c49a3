/**
 * Claims of finished allocs still `taken` on a live node (decide.ts `askable`), and what their node
 * answered about them (ClientCSI.NodeVolumeState). Pure: `now` is monotonic ms passed in.
 *
 * - A claim is asked about once it has waited `graceMs` here (a node that is mid-release has
 *   recorded its pending release long before; the grace only keeps the question off the normal,
 *   fast path), then again every `recheckMs` while the node says it holds something, or could not
 *   be asked (a node that cannot be reached keeps the claim waiting).
 * - An answer "holds nothing" is good for `recheckMs`: a release that fails and retries later asks
 *   again rather than act on an old answer.
 * - Kept per volume, like WaitingClaims: a pass that reads a volume replaces its candidates; an
 *   answer survives only while its claim (alloc, node) is still a candidate.
 */
import type { VolumeClaim } from "../../structs/volume.js";

/** Enough to ask the node and to find the volume again. */
export interface OrphanRef {
  key: string;
  namespace: string;
  volumeId: string;
  allocId: string;
  nodeId: string;
}

export interface OrphanTimings {
  graceMs: number;
  recheckMs: number;
}

interface Entry {
  ref: OrphanRef;
  since: number;
  asking: boolean;
  /** The last answer (or failure to answer), and when it came. */
  answer: { holdsNothing: boolean; at: number } | undefined;
}

export class OrphanChecks {
  private readonly byVolume = new Map<string, Map<string, Entry>>();

  constructor(private readonly t: OrphanTimings) {}

  /** Records the volume's candidates now, forgetting its others. */
  note(key: string, namespace: string, volumeId: string, claims: VolumeClaim[], now: number): void {
    if (claims.length === 0) {
      this.byVolume.delete(key);
      return;
    }
    const prev = this.byVolume.get(key);
    const next = new Map<string, Entry>();
    for (const c of claims) {
      const old = prev?.get(c.AllocationID);
      const same = old !== undefined && old.ref.nodeId === c.NodeID;
      next.set(
        c.AllocationID,
        same
          ? old
          : {
              ref: { key, namespace, volumeId, allocId: c.AllocationID, nodeId: c.NodeID },
              since: now,
              asking: false,
              answer: undefined,
            },
      );
    }
    this.byVolume.set(key, next);
  }

  forget(key: string): void {
    this.byVolume.delete(key);
  }

  clear(): void {
    this.byVolume.clear();
  }

  /** The node answered, recently, that it holds nothing of the volume for the alloc. */
  holdsNothing(key: string, allocId: string, nodeId: string, now: number): boolean {
    const e = this.byVolume.get(key)?.get(allocId);
    return (
      e !== undefined &&
      e.ref.nodeId === nodeId &&
      e.answer?.holdsNothing === true &&
      now - e.answer.at < this.t.recheckMs
    );
  }

  /** The claims to ask about now; each counts as being asked until `answered`. */
  takeDue(now: number): OrphanRef[] {
    const out: OrphanRef[] = [];
    for (const waits of this.byVolume.values()) {
      for (const e of waits.values()) {
        if (this.dueAt(e) <= now) {
          e.asking = true;
          out.push(e.ref);
        }
      }
    }
    return out;
  }

  /** The node's answer; `holdsNothing` false also for a node that could not be asked. */
  answered(ref: OrphanRef, holdsNothing: boolean, now: number): void {
    const e = this.byVolume.get(ref.key)?.get(ref.allocId);
    if (!e || e.ref.nodeId !== ref.nodeId) return;
    e.asking = false;
    e.answer = { holdsNothing, at: now };
  }

  /** When the next question falls due (monotonic ms); undefined when none will. */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const waits of this.byVolume.values()) {
      for (const e of waits.values()) {
        const at = this.dueAt(e);
        if (at !== Infinity && (next === undefined || at < next)) next = at;
      }
    }
    return next;
  }

  private dueAt(e: Entry): number {
    if (e.asking) return Infinity;
    if (!e.answer) return e.since + this.t.graceMs;
    return e.answer.at + this.t.recheckMs;
  }
}
