/** `berth node status [<node>]`: all nodes, or one node with its drivers and CSI plugins. */
import type { CSIInfo, Node } from "../../api/index.js";
import { kv, orNone, shortId, table } from "../format.js";
import { getByIdOrPrefix } from "../prefix.js";
import { statusCommand, type StatusArgs } from "../status.js";

export type NodeStatusArgs = StatusArgs;

export const nodeStatus = statusCommand({
  usage: "Usage: berth node status [options] [<node>]",
  help: "Lists client nodes, or shows one node (by ID or unique ID prefix) with its task drivers, CSI plugins and host volumes. -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs, attributes and meta.",
  what: "[<node>]",
  list: {
    doing: "querying node status",
    fetch: (io) => io.api.nodes.list(),
    empty: "No nodes registered",
    columns: ["ID", "DC", "Name", "Class", "Drain", "Eligibility", "Status"],
    row: (n, p) => [
      shortId(n.ID, p.verbose),
      n.Datacenter,
      n.Name,
      orNone(n.NodeClass),
      String(n.Drain ?? false),
      n.SchedulingEligibility,
      n.Status,
    ],
  },
  one: {
    doing: "querying node info",
    fetch: (id, io) =>
      getByIdOrPrefix(
        id,
        "node",
        (nid) => io.api.nodes.info(nid),
        (prefix) => io.api.nodes.list({ prefix }),
      ),
    render: (node, p) => nodeLines(node, p.verbose),
  },
});

function nodeLines(node: Node, verbose: boolean): string[] {
  const controllers = Object.keys(node.CSIControllerPlugins ?? {}).sort();
  const nodePlugins = Object.keys(node.CSINodePlugins ?? {}).sort();
  const drivers = Object.entries(node.Drivers ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const usable = drivers.filter(([, d]) => d.Detected && d.Healthy).map(([name]) => name);
  const lines = kv([
    ["ID", shortId(node.ID, verbose)],
    ["Name", node.Name],
    ["Class", orNone(node.NodeClass)],
    ["DC", node.Datacenter],
    ["Drain", drainLine(node)],
    ["Eligibility", node.SchedulingEligibility],
    ["Status", node.Status],
    ["Status Description", orNone(node.StatusDescription)],
    ["CSI Controllers", orNone(controllers.join(","))],
    ["CSI Drivers", orNone(nodePlugins.join(","))],
    ["Drivers", orNone(usable.join(","))],
  ]);
  if (drivers.length > 0) {
    const rows = [["Driver", "Detected", "Healthy", "Mounts", "Message"]];
    for (const [name, d] of drivers) {
      rows.push([
        name,
        String(d.Detected),
        String(d.Healthy),
        d.Attributes?.[`driver.${name}.mounts`] ?? "false",
        orNone(d.HealthDescription),
      ]);
    }
    lines.push("", "Drivers", ...table(rows));
  }
  lines.push("", ...pluginsSection(node));
  // As Nomad: always with -verbose, otherwise only when the node has host volumes.
  if (verbose || Object.keys(node.HostVolumes ?? {}).length > 0) lines.push("", ...hostVolumesSection(node));
  if (verbose) {
    for (const [title, map] of [
      ["Attributes", node.Attributes],
      ["Meta", node.Meta],
    ] as const) {
      const entries = Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
      lines.push("", title, ...(entries.length > 0 ? kv(entries) : [`No ${title.toLowerCase()}`]));
    }
  }
  return lines;
}

/** Nomad's "Host Volumes" table: name, read-only, host path. */
function hostVolumesSection(node: Node): string[] {
  const vols = Object.values(node.HostVolumes ?? {}).sort((a, b) => a.Name.localeCompare(b.Name));
  if (vols.length === 0) return ["Host Volumes", "No host volumes"];
  return [
    "Host Volumes",
    ...table([["Name", "ReadOnly", "Source"], ...vols.map((v) => [v.Name, String(v.ReadOnly), v.Path])]),
  ];
}

/** Nomad's Drain field: `false`, or `true` with the deadline (`no deadline`, `force`, or when). */
function drainLine(node: Node): string {
  const d = node.DrainStrategy;
  if (!d) return "false";
  const when = d.Deadline === 0 ? "no deadline" : d.Deadline < 0 ? "force" : `deadline ${d.ForceDeadline}`;
  return `true; ${when}${d.IgnoreSystemJobs ? "; ignoring system jobs" : ""}`;
}

function pluginsSection(node: Node): string[] {
  const byId = new Map<string, { controller?: CSIInfo; node?: CSIInfo }>();
  for (const [id, info] of Object.entries(node.CSIControllerPlugins ?? {}))
    byId.set(id, { controller: info });
  for (const [id, info] of Object.entries(node.CSINodePlugins ?? {}))
    byId.set(id, { ...byId.get(id), node: info });
  if (byId.size === 0) return ["CSI Plugins", "No CSI plugins"];
  const rows = [["ID", "Type", "Provider", "Version", "Healthy", "Description"]];
  for (const [id, e] of [...byId].sort(([a], [b]) => a.localeCompare(b))) {
    const type = e.controller && e.node ? "controller,node" : e.controller ? "controller" : "node";
    const infos = [e.controller, e.node].filter((i): i is CSIInfo => i !== undefined);
    const first = infos[0]!;
    const healthy = infos.every((i) => i.Healthy);
    const description = infos.map((i) => i.HealthDescription).find((d) => d) ?? "";
    rows.push([
      id,
      type,
      orNone(first.Provider),
      orNone(first.ProviderVersion),
      String(healthy),
      orNone(description),
    ]);
  }
  return ["CSI Plugins", ...table(rows)];
}
