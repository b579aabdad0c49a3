/**
 * The operator's state snapshots behind `/v1/operator/snapshot` (Nomad's Operator.SnapshotSave and
 * SnapshotRestore): save reads the state consistently while the server serves; restore replaces
 * it and then restarts this server's leader loops, which follow the store by deltas and must
 * start again from the restored state (gate.ts restart). The file and what it holds:
 * state/snapshot/.
 *
 * Restore runs on the leader only; another server answers ERR_NO_LEADER naming the leader, as a
 * call for the leader that reached a server that does not lead. Save may run on any server: each
 * reads one consistent state (its SQLite file, or etcd at one revision), not its own replica.
 * One restore at a time per server; a second one meanwhile is refused (ERR_CONFLICT).
 */
import { BerthError } from "../structs/errors.js";
import type { Logger } from "../internal/log.js";
import type { ClusterView } from "./leader/cluster_view.js";
import type { LeaderGate } from "./leader/gate.js";
import type { SnapshotHeader } from "./state/snapshot/format.js";
import { restoreSnapshot, saveSnapshot } from "./state/snapshot/snapshots.js";
import type { StateStore } from "./state/store.js";

export interface OperatorSnapshotParts {
  store: StateStore;
  dataDir: string | null;
  berthVersion: string;
  gate: LeaderGate;
  cluster: ClusterView;
  log: Logger;
}

export class OperatorSnapshots {
  private restoring = false;

  constructor(private readonly p: OperatorSnapshotParts) {}

  save(signal: AbortSignal | undefined): Promise<{ file: Buffer; header: SnapshotHeader }> {
    return saveSnapshot({ ...this.p, signal });
  }

  async restore(
    file: Buffer,
    signal: AbortSignal | undefined,
  ): Promise<{ header: SnapshotHeader; index: number }> {
    if (this.p.gate.state !== "leader") {
      const leader = this.p.cluster.leader()?.member.HTTPAddr;
      throw new BerthError(
        "ERR_NO_LEADER",
        `this server does not lead the cluster; send the restore to the leader${leader ? ` (${leader})` : ""}`,
      );
    }
    if (this.restoring) throw new BerthError("ERR_CONFLICT", "a snapshot restore is already running");
    this.restoring = true;
    try {
      const done = await restoreSnapshot({ ...this.p, signal }, file);
      await this.p.gate.restart("state restored from a snapshot");
      return done;
    } finally {
      this.restoring = false;
    }
  }
}
