/** `berth plugin status [<plugin>]`: all CSI plugins, or one with its health counts and allocations. */
import type { CSIPlugin } from "../../api/index.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { fail, type Command, type Parsed } from "../command.js";
import { json, kv, orNone, table } from "../format.js";
import { allocationsSection } from "../allocs.js";
import type { CommandIO } from "../io.js";

export interface PluginStatusArgs extends Parsed {
  id: string | undefined;
  json: boolean;
  verbose: boolean;
}

export const pluginStatus: Command<PluginStatusArgs> = {
  usage: "Usage: berth plugin status [options] [<plugin>]",
  help: "Lists CSI plugins, or shows one plugin with its healthy/expected controllers and nodes and its allocations. -json prints the API's JSON; -verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: "boolean" },
      verbose: { type: "boolean" },
      type: { type: "string" },
    });
    expectArgs(positionals, 0, 1, "[<plugin>]");
    if (values.type !== undefined && values.type !== "csi") {
      throw new UsageError(`-type must be "csi", got ${JSON.stringify(values.type)}`);
    }
    return {
      address: values.address,
      id: positionals[0],
      json: values.json ?? false,
      verbose: values.verbose ?? false,
    };
  },
  async run(p: PluginStatusArgs, io: CommandIO) {
    return p.id === undefined ? list(p, io) : one(p.id, p, io);
  },
};

async function list(p: PluginStatusArgs, io: CommandIO): Promise<number> {
  let plugins;
  try {
    plugins = await io.api.listPlugins();
  } catch (err) {
    return fail(io, "querying CSI plugins", err);
  }
  if (p.json) {
    io.stdout(json(plugins));
    return 0;
  }
  if (plugins.length === 0) {
    io.stdout("No CSI plugins");
    return 0;
  }
  const rows = [["ID", "Provider", "Controllers Healthy/Expected", "Nodes Healthy/Expected"]];
  for (const pl of plugins) {
    rows.push([
      pl.ID,
      orNone(pl.Provider),
      `${pl.ControllersHealthy}/${pl.ControllersExpected}`,
      `${pl.NodesHealthy}/${pl.NodesExpected}`,
    ]);
  }
  io.stdout("Container Storage Interface");
  table(rows).forEach((l) => io.stdout(l));
  return 0;
}

async function one(id: string, p: PluginStatusArgs, io: CommandIO): Promise<number> {
  let plugin: CSIPlugin;
  try {
    plugin = await io.api.getPlugin(id);
  } catch (err) {
    return fail(io, "querying CSI plugin", err);
  }
  if (p.json) {
    io.stdout(json(plugin));
    return 0;
  }
  const lines = kv([
    ["ID", plugin.ID],
    ["Provider", orNone(plugin.Provider)],
    ["Version", orNone(plugin.Version)],
    ["Controllers Healthy", String(plugin.ControllersHealthy)],
    ["Controllers Expected", String(plugin.ControllersExpected)],
    ["Nodes Healthy", String(plugin.NodesHealthy)],
    ["Nodes Expected", String(plugin.NodesExpected)],
  ]);
  lines.push("", ...allocationsSection(plugin.Allocations ?? [], p.verbose, io.now()));
  lines.forEach((l) => io.stdout(l));
  return 0;
}
