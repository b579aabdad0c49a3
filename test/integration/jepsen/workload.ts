/**
 * The workload of the Jepsen-style run: csi-hostpath (`--attach-required`) as a monolith plugin on
 * each node (one group per node, constrained to it, under raw_exec so both instances share one
 * host state dir — the same backing storage, in one topology zone — and one call log), a single-node-writer volume, and
 * a count=1 service job whose exec task appends `<alloc id> <unix ns>` to `writes.log` in the
 * volume every ~100 ms: the volume's own write log. Also the wait that says the workload runs again
 * after a fault: one running alloc whose writes reach the storage after a given time.
 */
import fs from "node:fs";
import path from "node:path";
import { readCallLog, type CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { hostpathJobOf, hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import { eventually, runCli } from "../../helpers/agent_process.js";
import { parseWriteLog } from "./checker.js";
import type { JepsenCluster } from "./cluster.js";

export const VOLUME = "jepsen";
export const APP = "app";
/** In the task's argv, so a task process left behind can be found by it. */
export const MARKER = "berth-jepsen-writer-7153";

export interface AllocStub {
  ID: string;
  NodeName: string;
  NodeID: string;
  ClientStatus: string;
  DesiredStatus: string;
}

export interface VolumeClaims {
  ExternalID: string;
  WriteAllocs: Record<string, unknown> | null;
  ReadAllocs: Record<string, unknown> | null;
  WriteClaims: Record<string, unknown> | null;
  ReadClaims: Record<string, unknown> | null;
  PastClaims: Record<string, unknown> | null;
}

/** The alloc IDs a volume's claims name, in any claim map (taken or being released). */
export function claimedAllocs(v: VolumeClaims): string[] {
  const maps = [v.WriteAllocs, v.ReadAllocs, v.WriteClaims, v.ReadClaims, v.PastClaims];
  return [...new Set(maps.flatMap((m) => Object.keys(m ?? {})))];
}

function pluginJob(cluster: JepsenCluster): string {
  const groups = cluster.nodes.map((n) =>
    hostpathPluginGroup(`plugin-${n.name.toLowerCase()}`, {
      driver: "raw_exec",
      type: "monolith",
      node: n.name,
      args: [
        "--attach-required",
        `--state-dir=${cluster.storage}`,
        `--call-log=${cluster.callLog}`,
        "--node-id=${node.unique.name}",
        // One zone for both nodes (the default segment is the node's own hostname): the storage
        // is shared, so the volume is reachable from either node and a replacement can move.
        "--topology-zone=shared",
      ],
      taskExtra:
        'restart {\n        attempts = 10\n        delay    = "1s"\n        mode     = "delay"\n      }',
    }),
  );
  return hostpathJobOf("plugin", groups);
}

const volumeHcl = `id        = "${VOLUME}"
name      = "${VOLUME}"
type      = "csi"
plugin_id = "hostpath"
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
`;

/**
 * The writer: a shell loop under exec (as the quick start's jobs), exiting at once on SIGINT or
 * SIGTERM; `kill_timeout` keeps a stop short.
 */
const appHcl = (groupExtra: string) => `job "${APP}" {
  type = "service"
  group "app" {
    count = 1
${groupExtra}
    volume "data" {
      type            = "csi"
      source          = "${VOLUME}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "writer" {
      driver       = "exec"
      kill_timeout = "2s"
      config {
        command = "/bin/sh"
        args    = ["-c", "trap 'exit 0' INT TERM; while :; do echo \\"$NOMAD_ALLOC_ID $(date +%s%N)\\" >> /data/writes.log; sleep 0.1; done; : ${MARKER}"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;

/** Runs the CLI against a live server; throws with its output on failure. */
export async function cli(cluster: JepsenCluster, args: string[]): Promise<string> {
  const s = cluster.pick();
  const r = await runCli(args, { BERTH_ADDR: s.base });
  if (r.code !== 0) throw new Error(`berth ${args.join(" ")} via ${s.name}: ${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

/** Both plugin instances healthy (a controller and a node plugin on each node). */
export async function pluginHealthy(cluster: JepsenCluster, timeoutMs = 90_000): Promise<void> {
  const want = cluster.nodes.length;
  await eventually(
    `plugin hostpath to be healthy on ${want} nodes`,
    async () => {
      const p = await cluster.get<{ NodesHealthy: number; ControllersHealthy: number }>(
        "/v1/plugin/csi/hostpath",
      );
      return p && p.NodesHealthy >= want && p.ControllersHealthy >= want ? p : undefined;
    },
    timeoutMs,
    250,
  );
}

/**
 * Starts the plugin, creates the volume and runs the app (with `groupExtra` HCL in its group, e.g.
 * a disconnect block); returns the volume's ExternalID.
 */
export async function startWorkload(cluster: JepsenCluster, groupExtra = ""): Promise<string> {
  const write = (name: string, text: string) => {
    const f = path.join(cluster.dir, name);
    fs.writeFileSync(f, text);
    return f;
  };
  await cli(cluster, ["job", "run", write("plugin.hcl", pluginJob(cluster))]);
  await pluginHealthy(cluster);
  await cli(cluster, ["volume", "create", write("volume.hcl", volumeHcl)]);
  await cli(cluster, ["job", "run", write("app.hcl", appHcl(groupExtra))]);
  const v = await eventually("the volume to be readable", () =>
    cluster.get<VolumeClaims>(`/v1/volume/csi/${VOLUME}?claims=true`),
  );
  return v.ExternalID;
}

/** The volume's own write log, as the storage holds it (both nodes write the same file). */
export function writeLogPath(cluster: JepsenCluster, externalId: string): string {
  return path.join(cluster.storage, "volumes", externalId, "writes.log");
}

export function readWrites(file: string): ReturnType<typeof parseWriteLog> {
  try {
    return parseWriteLog(fs.readFileSync(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { writes: [], bad: [] };
    throw err;
  }
}

export function calls(cluster: JepsenCluster): CallRecord[] {
  return readCallLog(cluster.callLog);
}

/**
 * The workload runs again: exactly one running alloc of the app as a live server sees it, and
 * that alloc's writes reached the storage after `sinceMs` (unix ms). Returns the alloc.
 */
export async function workloadRuns(
  cluster: JepsenCluster,
  logFile: string,
  sinceMs: number,
  timeoutMs: number,
): Promise<AllocStub> {
  const since = BigInt(sinceMs) * 1_000_000n;
  return eventually(
    `the workload to run again and write after ${new Date(sinceMs).toISOString()}`,
    async () => {
      const allocs = await cluster.get<AllocStub[]>(`/v1/job/${APP}/allocations`);
      const running = allocs?.filter((a) => a.ClientStatus === "running") ?? [];
      if (running.length !== 1) return undefined;
      const a = running[0]!;
      const wrote = readWrites(logFile).writes.some((w) => w.alloc === a.ID && w.ns > since);
      return wrote ? a : undefined;
    },
    timeoutMs,
    250,
  );
}
