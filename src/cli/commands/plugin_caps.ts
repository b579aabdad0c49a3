/**
 * What `plugin status -verbose` shows beyond the counts, as Nomad's does: the controller and node
 * capabilities (CSI RPC capability names) its instances fingerprinted, and each node's accessible
 * topology. Nomad lists the capabilities of one instance; so does this (the instances of one plugin
 * run the same program). Unlike Nomad's, each capability is listed only when it is advertised.
 */
import type { CSIInfo } from "../../api/index.js";
import { table } from "../format.js";

const CONTROLLER_CAPS: [keyof NonNullable<CSIInfo["ControllerInfo"]>, string][] = [
  ["SupportsCreateDelete", "CREATE_DELETE_VOLUME"],
  ["SupportsAttachDetach", "CONTROLLER_ATTACH_DETACH"],
  ["SupportsListVolumes", "LIST_VOLUMES"],
  ["SupportsGetCapacity", "GET_CAPACITY"],
  ["SupportsCreateDeleteSnapshot", "CREATE_DELETE_SNAPSHOT"],
  ["SupportsListSnapshots", "LIST_SNAPSHOTS"],
  ["SupportsClone", "CLONE_VOLUME"],
  ["SupportsReadOnlyAttach", "ATTACH_READONLY"],
  ["SupportsExpand", "EXPAND_VOLUME"],
  ["SupportsListVolumesAttachedNodes", "LIST_VOLUMES_PUBLISHED_NODES"],
  ["SupportsCondition", "VOLUME_CONDITION"],
  ["SupportsGet", "GET_VOLUME"],
  ["SupportsModify", "MODIFY_VOLUME"],
  ["SupportsOnlineExpand", "ONLINE_EXPANSION"],
];

const NODE_CAPS: [keyof NonNullable<CSIInfo["NodeInfo"]>, string][] = [
  ["RequiresNodeStageVolume", "STAGE_UNSTAGE_VOLUME"],
  ["SupportsStats", "GET_VOLUME_STATS"],
  ["SupportsExpand", "EXPAND_VOLUME"],
  ["SupportsCondition", "VOLUME_CONDITION"],
];

/** The first instance's, by node ID, so the output never depends on JSON key order. */
function firstInstance(instances: Record<string, CSIInfo> | null | undefined): CSIInfo | undefined {
  const ids = Object.keys(instances ?? {}).sort();
  return ids.length > 0 ? instances![ids[0]!] : undefined;
}

function section(title: string, caps: string[]): string[] {
  return caps.length === 0 ? [] : ["", title, ...caps.sort().map((c) => `  ${c}`)];
}

export function capabilitySections(
  controllers: Record<string, CSIInfo> | null | undefined,
  nodes: Record<string, CSIInfo> | null | undefined,
): string[] {
  const c = firstInstance(controllers)?.ControllerInfo;
  const controllerCaps = c ? CONTROLLER_CAPS.filter(([k]) => c[k] === true).map(([, name]) => name) : [];
  const n = firstInstance(nodes);
  const nodeCaps = n?.NodeInfo
    ? NODE_CAPS.filter(([k]) => n.NodeInfo![k] === true).map(([, name]) => name)
    : [];
  if (n?.RequiresTopologies) nodeCaps.push("VOLUME_ACCESSIBILITY_CONSTRAINTS");
  return [
    ...section("Controller Capabilities", controllerCaps),
    ...section("Node Capabilities", nodeCaps),
    ...topologySection(nodes),
  ];
}

function topologySection(nodes: Record<string, CSIInfo> | null | undefined): string[] {
  const rows = [["Node ID", "Accessible Topology"]];
  for (const id of Object.keys(nodes ?? {}).sort()) {
    const segments = nodes![id]!.NodeInfo?.AccessibleTopology?.Segments;
    if (!segments) continue;
    const pairs = Object.entries(segments)
      .map(([k, v]) => `${k}=${v}`)
      .sort();
    rows.push([id.slice(0, 8), pairs.join(",")]);
  }
  return rows.length === 1 ? [] : ["", "Accessible Topologies", ...table(rows)];
}
