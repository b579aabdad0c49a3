/**
 * Which StateStore a server runs on: etcd when its options name etcd endpoints (several servers
 * share the state), else the embedded SQLite file (the default, and `-dev`'s in memory).
 */
import type { Logger } from "../../internal/log.js";
import type { GroupCommitLimits } from "./local/group_commit.js";
import { EtcdStateStore } from "./etcd/etcd_store.js";
import { SqliteStateStore } from "./local/sqlite_store.js";
import type { StateStore } from "./store.js";

/** `server { etcd { endpoints, prefix } }` / `-etcd-endpoints`: the etcd cluster holding the state. */
export interface EtcdSettings {
  endpoints: string[];
  /** Every key of this berth cluster lives under it. */
  prefix: string;
}

export const DEFAULT_ETCD_PREFIX = "/berth";

export async function openStateStore(opts: {
  dataDir: string | null;
  etcd?: EtcdSettings;
  log: Logger;
  groupCommit?: Partial<GroupCommitLimits>;
}): Promise<StateStore> {
  if (opts.etcd) {
    const store = await EtcdStateStore.open({
      endpoints: opts.etcd.endpoints,
      prefix: opts.etcd.prefix,
      log: opts.log,
    });
    opts.log.info("state store opened on etcd", {
      endpoints: opts.etcd.endpoints.join(","),
      prefix: opts.etcd.prefix,
      index: store.index(),
    });
    return store;
  }
  return new SqliteStateStore(opts.dataDir, {
    log: opts.log,
    groupCommit: opts.groupCommit,
  });
}
