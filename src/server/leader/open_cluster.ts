/** The one place that tells a single server from a member of an etcd cluster (cluster_mode.ts). */
import type { Logger } from "../../internal/log.js";
import type { ServerTls } from "../../internal/tls.js";
import type { NodeConnections } from "../clientconn/connections.js";
import type { EtcdSettings, MemberOptions } from "./cluster.js";
import type { Cluster } from "./cluster_mode.js";
import { EtcdMembership } from "./etcd_membership.js";
import { SoloCluster } from "./solo_cluster.js";

export interface ClusterSettings {
  /** Several servers on etcd; absent: a single server. */
  etcd?: EtcdSettings;
  member?: MemberOptions;
  tls?: ServerTls;
}

export function openCluster(settings: ClusterSettings, conns: NodeConnections, log: Logger): Cluster {
  return settings.etcd
    ? new EtcdMembership(settings.etcd, settings.member ?? {}, settings.tls, conns, log)
    : new SoloCluster();
}
