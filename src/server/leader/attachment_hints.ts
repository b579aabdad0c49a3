/**
 * Refusals of ControllerPublish that may mean berth and the storage provider disagree about where a
 * volume is attached (FAILED_PRECONDITION "published to another node", RESOURCE_EXHAUSTED "max
 * volumes on this node"), passed from the claim endpoint (rpc/claim_publish.ts, through
 * ServerDeps.publishRefused) to the attachment reconciler of this server's current term, which
 * then reconciles that plugin at once instead of at its next scheduled pass.
 *
 * Local to one server: a claim refused on a follower reaches only that server's listeners (none:
 * the reconciler runs on the leader), and the leader's scheduled pass covers it. Built once per
 * server (assembly.ts); each term's reconciler subscribes on start and unsubscribes on stop.
 */
export class PublishRefusals {
  private readonly listeners = new Set<(pluginId: string) => void>();

  /** Tells every listener; never throws (a listener's failure is its own). */
  refused(pluginId: string): void {
    for (const l of this.listeners) {
      try {
        l(pluginId);
      } catch {
        /* the listener logs its own failures */
      }
    }
  }

  /** Returns the unsubscribe. */
  subscribe(listener: (pluginId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
