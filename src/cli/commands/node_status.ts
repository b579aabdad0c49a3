/** `berth node status [<node>]`: all nodes, or one node with its drivers and CSI plugins. */
import type { CSIInfo, Node } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { fail, type Command, type Parsed } from "../command.js";
import { json, kv, orNone, shortId, table } from "../format.js";
import type { CommandIO } from "../io.js";
import { getByIdOrPrefix } from "../prefix.js";

export interface NodeStatusArgs extends Parsed {
  id: string | undefined;
  json: boolean;
  verbose: boolean;
}

export const nodeStatus: Command<NodeStatusArgs> = {
  usage: "Usage: berth node status [options] [<node>]",
  help: "Lists client nodes, or shows one node (by ID or unique ID prefix) with its task drivers and CSI plugins. -json prints the API's JSON; -verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: "boolean" },
      verbose: { type: "boolean" },
    });
    expectArgs(positionals, 0, 1, "[<node>]");
    return {
      address: values.address,
      id: positionals[0],
      json: values.json ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p: NodeStatusArgs, io: CommandIO) {
    return p.id === undefined ? list(p, io) : one(p.id, p, io);
  },
};

async function list(p: NodeStatusArgs, io: CommandIO): Promise<number> {
  let nodes;
  try {
    nodes = await io.api.listNodes();
  } catch (err) {
    return fail(io, "querying node status", err);
  }
  if (p.json) {
    io.stdout(json(nodes));
    return 0;
  }
  if (nodes.length === 0) {
    io.stdout("No nodes registered");
    return 0;
  }
  const rows = [["ID", "DC", "Name", "Class", "Eligibility", "Status"]];
  for (const n of nodes) {
    rows.push([
      shortId(n.ID, p.verbose),
      n.Datacenter,
      n.Name,
      orNone(n.NodeClass),
      n.SchedulingEligibility,
      n.Status,
    ]);
  }
  table(rows).forEach((l) => io.stdout(l));
  return 0;
}

async function one(id: string, p: NodeStatusArgs, io: CommandIO): Promise<number> {
  let node: Node;
  try {
    node = await getByIdOrPrefix(
      id,
      "node",
      (nid) => io.api.getNode(nid),
      (prefix) => io.api.listNodes({ prefix }),
    );
  } catch (err) {
    return fail(io, "querying node info", err);
  }
  if (p.json) {
    io.stdout(json(node));
    return 0;
  }
  const controllers = Object.keys(node.CSIControllerPlugins ?? {}).sort();
  const nodePlugins = Object.keys(node.CSINodePlugins ?? {}).sort();
  const drivers = Object.entries(node.Drivers ?? {}).sort(([a], [b]) => a.localeCompare(b));
  const usable = drivers.filter(([, d]) => d.Detected && d.Healthy).map(([name]) => name);
  const lines = kv([
    ["ID", shortId(node.ID, p.verbose)],
    ["Name", node.Name],
    ["Class", orNone(node.NodeClass)],
    ["DC", node.Datacenter],
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
        String(d.SupportsMounts),
        orNone(d.HealthDescription),
      ]);
    }
    lines.push("", "Drivers", ...table(rows));
  }
  lines.push("", ...pluginsSection(node));
  lines.forEach((l) => io.stdout(l));
  return 0;
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
