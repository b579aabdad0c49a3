/**
 * `berth namespace list` and `berth namespace status <name>`, as Nomad's command/namespace_list.go
 * and namespace_status.go: a Name/Description table sorted by name, and one namespace (by name or
 * unique prefix) with its description, quota, drivers and network modes, then its metadata.
 * `-json` prints the API's JSON.
 */
import type { Namespace } from "../../api/index.js";
import type { Command, Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { kv, table } from "../format.js";
import type { CommandIO } from "../io.js";
import { fetchAndPrint, OUTPUT_FLAGS, outputArgs, type OutputArgs } from "../output_format.js";

export interface NamespaceReadArgs extends Parsed, OutputArgs {
  name: string;
}

function formatNamespaces(list: Namespace[]): string[] {
  if (list.length === 0) return ["No namespaces found"];
  const sorted = [...list].sort((a, b) => (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
  return table([["Name", "Description"], ...sorted.map((ns) => [ns.Name, ns.Description])]);
}

export const namespaceList: Command<NamespaceReadArgs> = {
  usage: "Usage: berth namespace list [options]",
  help: "Lists the namespaces (name and description), sorted by name. -json prints the API's JSON, -t formats it with a Go template.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, OUTPUT_FLAGS);
    if (positionals.length > 0) throw new UsageError("this command takes no arguments");
    return { address: values.address, name: "", ...outputArgs(values) };
  },
  run: (p, io) =>
    fetchAndPrint(io, p, "retrieving namespaces", () => io.api.namespaces.list(), formatNamespaces),
};

/** Nomad's getNamespace: the prefix's one match, or its exact match among several. */
async function lookup(io: CommandIO, name: string): Promise<Namespace> {
  const found = await io.api.namespaces.list({ prefix: name });
  const matches = found.filter((ns) => ns.Name.startsWith(name));
  if (matches.length === 0) throw new Error(`Namespace ${JSON.stringify(name)} matched no namespaces`);
  if (matches.length === 1) return matches[0]!;
  const exact = matches.find((ns) => ns.Name === name);
  if (exact) return exact;
  throw new Error(`Prefix matched multiple namespaces\n\n${formatNamespaces(matches).join("\n")}`);
}

function basics(ns: Namespace): string[] {
  const caps = ns.Capabilities;
  const join = (l: string[] | null | undefined, dflt: string) => (l && l.length > 0 ? l.join(",") : dflt);
  return kv([
    ["Name", ns.Name],
    ["Description", ns.Description],
    ["Quota", ns.Quota],
    ["Enabled Drivers", join(caps?.EnabledTaskDrivers, "*")],
    ["Disabled Drivers", join(caps?.DisabledTaskDrivers, "")],
    ["Enabled Network Modes", join(caps?.EnabledNetworkModes, "*")],
    ["Disabled Network Modes", join(caps?.DisabledNetworkModes, "")],
  ]);
}

/** Nomad's namespace status text: the basics, then the metadata sorted by key. */
function namespaceLines(ns: Namespace): string[] {
  const lines = basics(ns);
  const meta = Object.entries(ns.Meta ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (meta.length > 0) lines.push("", "Metadata", ...kv(meta));
  return lines;
}

export const namespaceStatus: Command<NamespaceReadArgs> = {
  usage: "Usage: berth namespace status [options] <namespace>",
  help: "Shows one namespace (by name or unique prefix): its description, quota, the task drivers and network modes its jobs may use, and its metadata. -json prints the API's JSON, -t formats it with a Go template.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, OUTPUT_FLAGS);
    expectArgs(positionals, 1, 1, "<namespace>");
    return { address: values.address, name: positionals[0]!, ...outputArgs(values) };
  },
  run: (p, io) => fetchAndPrint(io, p, "retrieving namespaces", () => lookup(io, p.name), namespaceLines),
};
