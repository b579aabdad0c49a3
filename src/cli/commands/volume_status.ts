/** `berth volume status [<volume>]`: all CSI volumes, or one with its health, modes and allocations. */
import type { CSIVolume } from "../../api/index.js";
import { kv, orNone, table } from "../format.js";
import { allocationsSection } from "../allocs.js";
import { getByIdOrPrefix } from "../prefix.js";
import { statusCommand, type StatusArgs } from "../status.js";
import { formatCapacity, formatMountOptions } from "./volume_format.js";
import { releasesSection } from "./volume_releases.js";
import { usageSection } from "./volume_usage.js";

export type VolumeStatusArgs = StatusArgs;

export const volumeStatus = statusCommand({
  usage: "Usage: berth volume status [options] [<volume>]",
  help: "Lists CSI volumes, or shows one volume (by ID or unique prefix): plugin health, modes, capacity, topologies, the capabilities it was registered with, its measured usage and health (bytes, inodes and condition reported by the node that publishes it; the condition its controller plugin reports) and the allocations that claim it. -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs.",
  what: "[<volume>]",
  csi: true,
  list: {
    doing: "querying volumes",
    fetch: (io) => io.api.volumes.list(),
    empty: "No CSI volumes",
    heading: "Container Storage Interface",
    columns: ["ID", "Name", "Namespace", "Plugin ID", "Schedulable", "Access Mode"],
    row: (v) => [v.ID, v.Name, v.Namespace, v.PluginID, String(v.Schedulable), orNone(v.AccessMode)],
  },
  one: {
    doing: "querying volume",
    fetch: (id, io) =>
      getByIdOrPrefix(
        id,
        "volume",
        (x) => io.api.volumes.info(x),
        () => io.api.volumes.list(),
      ),
    render: (vol, p, io) => [
      ...details(vol),
      ...topologiesSection(vol),
      ...capabilitiesSection(vol),
      ...usageSection(vol.Usage, p.verbose, io.now(), vol.ControllerCondition),
      ...releasesSection(vol, p.verbose, io.now()),
      "",
      ...allocationsSection(vol.Allocations ?? [], p.verbose, io.now()),
    ],
  },
});

function details(vol: CSIVolume): string[] {
  return kv([
    ["ID", vol.ID],
    ["Name", vol.Name],
    ["Namespace", vol.Namespace],
    ["External ID", orNone(vol.ExternalID)],
    ["Plugin ID", vol.PluginID],
    ["Provider", orNone(vol.Provider)],
    ["Version", orNone(vol.ProviderVersion)],
    ["Capacity", formatCapacity(vol.Capacity)],
    ["Schedulable", String(vol.Schedulable)],
    ["Controllers Healthy", String(vol.ControllersHealthy)],
    ["Controllers Expected", String(vol.ControllersExpected)],
    ["Nodes Healthy", String(vol.NodesHealthy)],
    ["Nodes Expected", String(vol.NodesExpected)],
    ["Access Mode", orNone(vol.AccessMode)],
    ["Attachment Mode", orNone(vol.AttachmentMode)],
    ["Mount Options", formatMountOptions(vol.MountOptions)],
  ]);
}

/** The capabilities the volume was registered or created with (Nomad's "Capabilities"). */
function capabilitiesSection(vol: CSIVolume): string[] {
  const rows = [["Access Mode", "Attachment Mode"]];
  for (const c of vol.RequestedCapabilities ?? []) rows.push([c.AccessMode, c.AttachmentMode]);
  return ["", "Capabilities", ...table(rows)];
}

/** A blank line and the table, or nothing when the volume has no topologies. */
function topologiesSection(vol: CSIVolume): string[] {
  const topologies = vol.Topologies ?? [];
  if (topologies.length === 0) return [];
  const rows = [["Topology", "Segments"]];
  topologies.forEach((t, i) => {
    const segments = Object.entries(t.Segments ?? {}).map(([k, v]) => `${k}=${v}`);
    rows.push([String(i).padStart(2, "0"), segments.sort().join(", ")]);
  });
  return ["", "Topologies", ...table(rows)];
}
