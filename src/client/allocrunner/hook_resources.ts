/**
 * Data that alloc-runner hooks hand to task-runner hooks: today the CSI mounts published by the
 * csi_hook, read by each task's volume_hook. One object per alloc. Setters replace whole values and
 * getters return copies, so no caller can mutate shared state or interleave a get-mutate-set with
 * another writer across an await.
 */

export interface CsiMount {
  /** Host path of the published volume (the NodePublish target in the host's view). */
  source: string;
  readOnly: boolean;
  /** The volume ID claimed (with the per_alloc suffix when it applies). */
  volumeId: string;
}

export class AllocHookResources {
  private csiMounts: ReadonlyMap<string, CsiMount> = new Map();

  /** Mounts keyed by the group's volume alias (the `volume "<alias>"` label). */
  getCsiMounts(): Map<string, CsiMount> {
    return new Map([...this.csiMounts].map(([k, v]) => [k, { ...v }]));
  }

  setCsiMounts(mounts: Map<string, CsiMount>): void {
    this.csiMounts = new Map([...mounts].map(([k, v]) => [k, { ...v }]));
  }
}
