/** `berth volume status [<volume>]`: all CSI volumes, or one with its health, modes and allocations. */
import type { CSIVolume } from "../../api/index.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { fail, type Command, type Parsed } from "../command.js";
import { bytes, json, kv, orNone, table } from "../format.js";
import { allocationsSection } from "../allocs.js";
import { formatMountOptions } from "./volume_format.js";
import type { CommandIO } from "../io.js";

export interface VolumeStatusArgs extends Parsed {
  id: string | undefined;
  json: boolean;
  verbose: boolean;
}

export const volumeStatus: Command<VolumeStatusArgs> = {
  usage: "Usage: berth volume status [options] [<volume>]",
  help: "Lists CSI volumes, or shows one volume: plugin health, modes, capacity and the allocations that claim it. -json prints the API's JSON; -verbose shows full IDs.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: "boolean" },
      verbose: { type: "boolean" },
      type: { type: "string" },
    });
    expectArgs(positionals, 0, 1, "[<volume>]");
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
  async run(p: VolumeStatusArgs, io: CommandIO) {
    return p.id === undefined ? list(p, io) : one(p.id, p, io);
  },
};

async function list(p: VolumeStatusArgs, io: CommandIO): Promise<number> {
  let vols;
  try {
    vols = await io.api.listVolumes();
  } catch (err) {
    return fail(io, "querying volumes", err);
  }
  if (p.json) {
    io.stdout(json(vols));
    return 0;
  }
  if (vols.length === 0) {
    io.stdout("No CSI volumes");
    return 0;
  }
  const rows = [["ID", "Name", "Namespace", "Plugin ID", "Schedulable", "Access Mode"]];
  for (const v of vols) {
    rows.push([v.ID, v.Name, v.Namespace, v.PluginID, String(v.Schedulable), orNone(v.AccessMode)]);
  }
  io.stdout("Container Storage Interface");
  table(rows).forEach((l) => io.stdout(l));
  return 0;
}

async function one(id: string, p: VolumeStatusArgs, io: CommandIO): Promise<number> {
  let vol: CSIVolume;
  try {
    vol = await io.api.getVolume(id);
  } catch (err) {
    return fail(io, "querying volume", err);
  }
  if (p.json) {
    io.stdout(json(vol));
    return 0;
  }
  const lines = kv([
    ["ID", vol.ID],
    ["Name", vol.Name],
    ["Namespace", vol.Namespace],
    ["External ID", orNone(vol.ExternalID)],
    ["Plugin ID", vol.PluginID],
    ["Provider", orNone(vol.Provider)],
    ["Version", orNone(vol.ProviderVersion)],
    ["Capacity", bytes(vol.Capacity ?? 0)],
    ["Schedulable", String(vol.Schedulable)],
    ["Controllers Healthy", String(vol.ControllersHealthy)],
    ["Controllers Expected", String(vol.ControllersExpected)],
    ["Nodes Healthy", String(vol.NodesHealthy)],
    ["Nodes Expected", String(vol.NodesExpected)],
    ["Access Mode", orNone(vol.AccessMode)],
    ["Attachment Mode", orNone(vol.AttachmentMode)],
    ["Mount Options", formatMountOptions(vol.MountOptions)],
  ]);
  const topologies = vol.Topologies ?? [];
  if (topologies.length > 0) {
    const rows = [["Topology", "Segments"]];
    topologies.forEach((t, i) => {
      const segments = Object.entries(t.Segments ?? {}).map(([k, v]) => `${k}=${v}`);
      rows.push([String(i).padStart(2, "0"), segments.sort().join(", ")]);
    });
    lines.push("", "Topologies", ...table(rows));
  }
  lines.push("", ...allocationsSection(vol.Allocations ?? [], p.verbose, io.now()));
  lines.forEach((l) => io.stdout(l));
  return 0;
}
