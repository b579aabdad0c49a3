/** `berth alloc status <alloc>`: one allocation, its CSI volumes, and each task's state and events. */
import type { Allocation, AllocResourceUsage, CSIVolume, VolumeRequest } from "../../api/index.js";
import type { Command } from "../command.js";
import { ago, formatTimeNs, kv, orNone, shortId, table } from "../format.js";
import type { CommandIO } from "../io.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { getByIdOrPrefix } from "../prefix.js";
import { READ_FLAGS, showOne, type OneView, type StatusArgs } from "../status.js";
import { taskResourceLines } from "./alloc_resources.js";
import { formatMountOptions } from "./volume_format.js";
import { allocRescheduleLines } from "../reschedule_info.js";

export interface AllocStatusArgs extends StatusArgs {
  id: string;
  stats: boolean;
}

const FLAGS = { ...READ_FLAGS, stats: { type: "boolean" } } as const;

/** Events shown per task unless -verbose, newest first. */
const RECENT_EVENTS = 10;

export const allocStatus: Command<AllocStatusArgs> = {
  usage: "Usage: berth alloc status [options] <allocation>",
  help: "Shows an allocation (by ID or unique ID prefix): placement, status, CSI volumes, and each task's resources (with what it uses now, when it runs) and recent events. -json prints the API's JSON, -t formats it with a Go template; -verbose shows full IDs and every event; -stats shows the measured memory and CPU figures.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, FLAGS);
    expectArgs(positionals, 1, 1, "<allocation>");
    return {
      address: values.address,
      id: positionals[0]!,
      json: values.json ?? false,
      template: values.t,
      verbose: values.verbose ?? false,
      stats: values.stats ?? false,
    };
  },
  run: (p, io) => showOne(allocView, p.id, p, io),
};

const allocView: OneView<Allocation, AllocStatusArgs> = {
  doing: "querying allocation",
  fetch: (id, io) =>
    getByIdOrPrefix(
      id,
      "allocation",
      (aid) => io.api.allocations.info(aid),
      (prefix) => io.api.allocations.list({ prefix }),
    ),
  render: (alloc, p, io) => allocLines(alloc, p, io),
};

async function allocLines(alloc: Allocation, p: AllocStatusArgs, io: CommandIO): Promise<string[]> {
  const { verbose } = p;
  const now = io.now();
  const lines = kv([
    ["ID", shortId(alloc.ID, verbose)],
    ["Name", alloc.Name],
    ["Node ID", shortId(alloc.NodeID, verbose)],
    ["Node Name", alloc.NodeName],
    ["Job ID", alloc.JobID],
    ["Job Version", String(alloc.Job?.Version ?? 0)],
    ["Client Status", alloc.ClientStatus],
    ["Client Description", orNone(alloc.ClientDescription)],
    ["Desired Status", alloc.DesiredStatus],
    ["Desired Description", orNone(alloc.DesiredDescription)],
    ["Created", ago(alloc.CreateTime / 1e6, now)],
    ["Modified", ago(alloc.ModifyTime / 1e6, now)],
    ...allocRescheduleLines(alloc, await followupOf(alloc, io), verbose, now),
  ]);
  lines.push(...(await volumesSection(alloc, io)));
  const stats = await statsOf(alloc, io);
  if (stats.warning) lines.push("", stats.warning);
  for (const name of Object.keys(alloc.TaskStates ?? {}).sort()) {
    const resources = taskResourceLines(alloc, name, stats.usage, p.stats);
    lines.push("", ...taskSection(alloc, name, verbose, resources));
  }
  return lines;
}

/** A running alloc's usage as its node measures it; a failure is a warning line, as in Nomad. */
async function statsOf(
  alloc: Allocation,
  io: CommandIO,
): Promise<{ usage?: AllocResourceUsage; warning?: string }> {
  if (alloc.ClientStatus !== "running") return {};
  try {
    return { usage: await io.api.allocations.stats(alloc.ID) };
  } catch (err) {
    return { warning: `Couldn't retrieve stats: ${(err as Error).message}` };
  }
}

/** The alloc's delayed reschedule eval, when it has one that can be read. */
async function followupOf(alloc: Allocation, io: CommandIO) {
  if (!alloc.FollowupEvalID) return undefined;
  try {
    return await io.api.evaluations.info(alloc.FollowupEvalID);
  } catch {
    return undefined;
  }
}

/** The volume a request claims: `source[N]` for per_alloc, N being the index in `job.group[N]`. */
function volumeId(req: VolumeRequest, alloc: Allocation): string {
  if (!req.PerAlloc) return req.Source;
  const m = /\[(\d+)\]$/.exec(alloc.Name);
  return `${req.Source}[${m ? m[1] : "0"}]`;
}

async function volumesSection(alloc: Allocation, io: CommandIO): Promise<string[]> {
  const group = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
  const requests = Object.values(group?.Volumes ?? {}).filter((v) => v.Type === "csi");
  if (requests.length === 0) return [];
  const rows = [["ID", "Plugin", "Provider", "Schedulable", "Read Only", "Mount Options"]];
  const ids = requests.map((r) => volumeId(r, alloc));
  const volumes = await Promise.all(ids.map((id) => volumeFor(id, io)));
  requests.forEach((req, i) => {
    const vol = volumes[i];
    rows.push([
      ids[i]!,
      vol?.PluginID ?? "<unknown>",
      vol ? orNone(vol.Provider) : "<unknown>",
      vol ? String(vol.Schedulable) : "<unknown>",
      String(req.ReadOnly),
      formatMountOptions(req.MountOptions ?? vol?.MountOptions ?? null),
    ]);
  });
  return ["", "CSI Volumes:", ...table(rows)];
}

/** The volume's record, or undefined when it cannot be read (the alloc is still worth showing). */
async function volumeFor(id: string, io: CommandIO): Promise<CSIVolume | undefined> {
  try {
    return await io.api.volumes.info(id);
  } catch {
    return undefined;
  }
}

function taskSection(alloc: Allocation, name: string, verbose: boolean, resources: string[]): string[] {
  const state = alloc.TaskStates[name]!;
  const lines = [`Task ${JSON.stringify(name)} is ${JSON.stringify(state.State)}`];
  const info: [string, string][] = [
    ["Restarts", String(state.Restarts)],
    ["Failed", String(state.Failed)],
    ["Started At", orNone(state.StartedAt)],
    ["Finished At", orNone(state.FinishedAt)],
  ];
  lines.push(...kv(info), "");
  if (resources.length > 0) lines.push(...resources, "");
  const events = [...(state.Events ?? [])].reverse();
  const shown = verbose ? events : events.slice(0, RECENT_EVENTS);
  lines.push("Recent Events:");
  const rows = [["Time", "Type", "Description"]];
  for (const e of shown) rows.push([formatTimeNs(e.Time), e.Type, e.DisplayMessage]);
  lines.push(...table(rows));
  return lines;
}
