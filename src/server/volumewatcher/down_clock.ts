/**
 * Since when this watcher has seen each node down, on its own monotonic clock (the fence hold,
 * decide.ts). Pure: `now` is passed in (performance.now() in the watcher).
 *
 * A node's down episode is named by the record's StatusUpdatedAt, which the server sets when it
 * marks the node down and which stays put while the node is down: a node seen down, then up, then
 * down again between two observations (a pass coalesces writes) starts a new count, never inherits
 * the old one. The value is only compared for equality, never used as a time.
 */
import { isNodeOutOfContact, type Node } from "../../structs/node.js";

interface Seen {
  since: number;
  episode: number | undefined;
}

export class NodeDownClock {
  private readonly nodes = new Map<string, Seen>();

  /**
   * When the node was first seen down in its current down episode (recording `now` on first
   * sight); undefined for a node that is up, which ends its episode.
   */
  observe(
    nodeId: string,
    node: Pick<Node, "Status" | "StatusUpdatedAt"> | undefined,
    now: number,
  ): number | undefined {
    if (node !== undefined && !isNodeOutOfContact(node)) {
      this.nodes.delete(nodeId);
      return undefined;
    }
    const episode = node?.StatusUpdatedAt;
    const seen = this.nodes.get(nodeId);
    if (seen && seen.episode === episode) return seen.since;
    this.nodes.set(nodeId, { since: now, episode });
    return now;
  }

  /** Nodes written since the last pass: those seen down before and up now end their episode. */
  refresh(nodeIds: readonly string[], node: (id: string) => Pick<Node, "Status"> | undefined): void {
    for (const id of nodeIds) {
      if (!this.nodes.has(id)) continue;
      const n = node(id);
      if (n !== undefined && !isNodeOutOfContact(n)) this.nodes.delete(id);
    }
  }

  clear(): void {
    this.nodes.clear();
  }
}
