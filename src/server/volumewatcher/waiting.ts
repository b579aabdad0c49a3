/**
 * Claims of finished allocs waiting for their live node to unmount (decide.ts "wait-node"), with
 * when the watcher first saw each wait, so it can warn once a wait passes the node grace. Pure.
 * Kept per volume: a pass that reads a volume replaces what is known of its waits; a volume no pass
 * reads keeps them, and `due` names the volumes to read again when a warning falls due.
 */
import type { VolumeClaim } from "../../structs/volume.js";

interface Wait {
  since: number;
  warned: boolean;
}

export interface DueWarning {
  claim: VolumeClaim;
  waitingMs: number;
}

export class WaitingClaims {
  private readonly byVolume = new Map<string, Map<string, Wait>>();

  /**
   * Records the volume's claims waiting now (forgetting its others) and returns those that have
   * waited `graceMs` or more and were not warned about yet; they count as warned from here on.
   */
  note(key: string, waiting: VolumeClaim[], now: number, graceMs: number): DueWarning[] {
    const prev = this.byVolume.get(key);
    if (waiting.length === 0) {
      this.byVolume.delete(key);
      return [];
    }
    const next = new Map<string, Wait>();
    const due: DueWarning[] = [];
    for (const claim of waiting) {
      const w = prev?.get(claim.AllocationID) ?? { since: now, warned: false };
      if (!w.warned && now - w.since >= graceMs) {
        w.warned = true;
        due.push({ claim, waitingMs: now - w.since });
      }
      next.set(claim.AllocationID, w);
    }
    this.byVolume.set(key, next);
    return due;
  }

  forget(key: string): void {
    this.byVolume.delete(key);
  }

  /** Keys of the volumes with a wait not warned about that reached `graceMs` at `now`. */
  due(now: number, graceMs: number): string[] {
    const out: string[] = [];
    for (const [key, waits] of this.byVolume) {
      for (const w of waits.values()) {
        if (!w.warned && now - w.since >= graceMs) {
          out.push(key);
          break;
        }
      }
    }
    return out;
  }

  /** When the next warning falls due (unix ms), undefined when none will. */
  nextDue(graceMs: number): number | undefined {
    let next: number | undefined;
    for (const waits of this.byVolume.values()) {
      for (const w of waits.values()) {
        if (!w.warned && (next === undefined || w.since + graceMs < next)) next = w.since + graceMs;
      }
    }
    return next;
  }

  clear(): void {
    this.byVolume.clear();
  }
}
