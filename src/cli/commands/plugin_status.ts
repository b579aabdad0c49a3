/** `berth plugin status [<plugin>]`: all CSI plugins, or one with its health counts and allocations. */
import { kv, orNone } from "../format.js";
import { allocationsSection } from "../allocs.js";
import { getByIdOrPrefix } from "../prefix.js";
import { statusCommand, type StatusArgs } from "../status.js";
import { capabilitySections } from "./plugin_caps.js";
import { capacitySection } from "./plugin_capacity.js";

export type PluginStatusArgs = StatusArgs;

export const pluginStatus = statusCommand({
  usage: "Usage: berth plugin status [options] [<plugin>]",
  help: "Lists CSI plugins, or shows one plugin (by ID or unique prefix) with its healthy/expected controllers and nodes and its allocations. -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs and the plugin's controller and node capabilities and accessible topologies.",
  what: "[<plugin>]",
  csi: true,
  list: {
    doing: "querying CSI plugins",
    fetch: (io) => io.api.plugins.list(),
    empty: "No CSI plugins",
    heading: "Container Storage Interface",
    columns: ["ID", "Provider", "Controllers Healthy/Expected", "Nodes Healthy/Expected"],
    row: (pl) => [
      pl.ID,
      orNone(pl.Provider),
      `${pl.ControllersHealthy}/${pl.ControllersExpected}`,
      `${pl.NodesHealthy}/${pl.NodesExpected}`,
    ],
  },
  one: {
    doing: "querying CSI plugin",
    fetch: (id, io) =>
      getByIdOrPrefix(
        id,
        "plugin",
        (x) => io.api.plugins.info(x),
        () => io.api.plugins.list(),
      ),
    render: (plugin, p, io) => [
      ...kv([
        ["ID", plugin.ID],
        ["Provider", orNone(plugin.Provider)],
        ["Version", orNone(plugin.Version)],
        ["Controllers Healthy", String(plugin.ControllersHealthy)],
        ["Controllers Expected", String(plugin.ControllersExpected)],
        ["Nodes Healthy", String(plugin.NodesHealthy)],
        ["Nodes Expected", String(plugin.NodesExpected)],
      ]),
      ...(p.verbose ? capabilitySections(plugin.Controllers, plugin.Nodes) : []),
      ...capacitySection(plugin.Capacity, io.now()),
      "",
      ...allocationsSection(plugin.Allocations ?? [], p.verbose, io.now()),
    ],
  },
});
