/**
 * One Jepsen-style run on a started cluster: the workload, the faults in the given order (each
 * followed by the wait that the workload runs again), then the checker over everything recorded,
 * then a clean shutdown that must leave no mount and no process. Violations are collected rather
 * than thrown at once, so a run that breaks an invariant and then also fails to recover still
 * prints the overlap; the caller asserts the report is clean.
 */
import fs from "node:fs";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { eventually } from "../../helpers/agent_process.js";
import {
  doubleRunning,
  lostAcks,
  nodeCallOrder,
  publishViolations,
  writeIntervals,
  writerOverlaps,
  type AckedOp,
  type AllocSample,
} from "./checker.js";
import type { JepsenCluster } from "./cluster.js";
import { dumpState } from "./diagnose.js";
import { FAULTS, type FaultContext, type FaultName } from "./faults.js";
import { sampleAllocs, visibleNow } from "./monitor.js";
import {
  APP,
  MARKER,
  VOLUME,
  calls,
  claimedAllocs,
  cli,
  pluginHealthy,
  readWrites,
  startWorkload,
  workloadRuns,
  writeLogPath,
  type AllocStub,
  type VolumeClaims,
} from "./workload.js";

export interface RunOptions {
  cluster: JepsenCluster;
  schedule: FaultName[];
  rand: () => number;
  ttlMs: number;
  leaseTtlMs: number;
  pauseMs: number;
  partitionMaxMs: number;
  /** How long the workload may take to run again after a fault. */
  recoverMs: number;
  log: (line: string) => void;
}

/** Every check's violations by name (all empty: the run is clean). */
export type Report = Record<string, string[]>;

const TERMINAL = new Set(["complete", "failed", "lost"]);

export async function runJepsen(o: RunOptions): Promise<Report> {
  const { cluster, log } = o;
  const report: Report = {};
  const add = (check: string, lines: string[]) => (report[check] = [...(report[check] ?? []), ...lines]);
  const ops: AckedOp[] = [];
  const samples: AllocSample[] = [];
  let opSeq = 0;

  await cluster.start();
  await cluster.nodesReady();
  if (cluster.opts.etcd) await cluster.leader();
  const ext = await startWorkload(cluster);
  const logFile = writeLogPath(cluster, ext);
  await workloadRuns(cluster, logFile, 0, 90_000);
  const sampling = new AbortController();
  const sampler = sampleAllocs(cluster, samples, sampling.signal);

  const ctx: FaultContext = {
    cluster,
    rand: o.rand,
    ttlMs: o.ttlMs,
    leaseTtlMs: o.leaseTtlMs,
    pauseMs: o.pauseMs,
    partitionMaxMs: o.partitionMaxMs,
    ops,
    nextOp: () => opSeq++,
    logFile,
  };
  try {
    for (const [i, fault] of o.schedule.entries()) {
      const t0 = Date.now();
      const what = await FAULTS[fault](ctx);
      const end = Date.now();
      log(`fault ${i + 1}/${o.schedule.length} ${fault}: ${what}`);
      if (cluster.opts.etcd) await cluster.leader(60_000);
      await cluster.nodesReady(o.recoverMs);
      await pluginHealthy(cluster, o.recoverMs);
      const a = await workloadRuns(cluster, logFile, end, o.recoverMs);
      log(
        `  workload runs again: alloc ${a.ID} on ${a.NodeName}, ${Date.now() - end} ms after (fault took ${end - t0} ms)`,
      );
    }
  } catch (err) {
    add("run completes", [(err as Error).message]);
    log(`state dumped to ${await dumpState(cluster, "stuck")}`);
  } finally {
    sampling.abort();
    await sampler;
  }

  // The checker, over everything recorded.
  const { writes, bad } = readWrites(logFile);
  const intervals = writeIntervals(writes);
  log(`write log: ${writes.length} writes by ${intervals.length} allocs`);
  // Each handover's gap: from the last write of one alloc to the first write of the next.
  let longestGapMs = 0;
  for (const [i, iv] of intervals.entries()) {
    const at = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString().slice(11, 23);
    const prev = intervals[i - 1];
    const gapMs = prev ? Number((iv.first - prev.last) / 1_000_000n) : undefined;
    if (gapMs !== undefined) longestGapMs = Math.max(longestGapMs, gapMs);
    const gap = gapMs === undefined ? "" : `, ${gapMs} ms after the previous writer's last write`;
    log(`  ${iv.alloc}: ${iv.writes} writes, ${at(iv.first)} – ${at(iv.last)}${gap}`);
  }
  log(`longest handover gap: ${longestGapMs} ms`);
  add(
    "write log well-formed",
    bad.map((l) => `malformed line ${JSON.stringify(l)}`),
  );
  add("never two writers", writerOverlaps(writes));
  add("no ControllerPublish to a second node while attached", publishViolations(calls(cluster)));
  log(`alloc samples: ${samples.length}`);
  add("no count=1 job with two running allocs", doubleRunning(samples));
  const visible = new Map<AckedOp, boolean>();
  for (const op of ops) if (op.outcome === "ok") visible.set(op, await visibleNow(cluster, op));
  log(`client ops: ${ops.length}, acknowledged ${visible.size}`);
  add(
    "no acknowledged write lost",
    lostAcks(ops, (op) => visible.get(op) === true),
  );
  add("no claim left taken for a terminal alloc", await claimsSettle(cluster));
  if (report["run completes"]) return report;

  // Shutdown: everything stopped by the API, then the agents; nothing may be left.
  await cli(cluster, ["job", "stop", APP]);
  await eventually(
    "the volume's claims to be released",
    async () => {
      const v = await cluster.get<VolumeClaims>(`/v1/volume/csi/${VOLUME}?claims=true`);
      return v && claimedAllocs(v).length === 0 ? true : undefined;
    },
    90_000,
  ).catch((err: unknown) => add("claims released after the job stops", [(err as Error).message]));
  // Each node's own release (NodeUnpublish, NodeUnstage) needs its plugin: wait for it first.
  await eventually(
    "every node to unmount the volume",
    async () => ((await volumeMounts(cluster)).length === 0 ? true : undefined),
    60_000,
    500,
  ).catch(async () => add("nodes unmount the volume after its allocs end", await volumeMounts(cluster)));
  await cli(cluster, ["job", "stop", "plugin"]);
  await eventually(
    "the plugin allocs to stop",
    async () => {
      const as = await cluster.get<AllocStub[]>("/v1/job/plugin/allocations");
      return as?.every((a) => TERMINAL.has(a.ClientStatus)) ? true : undefined;
    },
    60_000,
  ).catch((err: unknown) => add("plugin stops", [(err as Error).message]));
  for (const n of cluster.nodes) {
    const code = await n.agent.stop(60_000);
    if (code !== 0) add("agents exit 0", [`node agent ${n.name} exited ${code}`]);
  }
  for (const s of cluster.servers) {
    const code = await s.proc.stop(30_000);
    if (code !== 0) add("agents exit 0", [`server ${s.name} exited ${code}`]);
  }
  add("CSI node call order per volume and node", nodeCallOrder(calls(cluster)));
  add("nothing left mounted under the test dir", await mountsUnder(cluster.dir));
  add("no process left", processesLeft(cluster.dir));
  return report;
}

/**
 * Claims of the volume that name a terminal (or unknown) alloc 60 s after the last fault — the
 * watcher frees such claims asynchronously, so they are given that long.
 */
async function claimsSettle(cluster: JepsenCluster): Promise<string[]> {
  let left: string[] = [];
  try {
    await eventually(
      "every claim of the volume to belong to a live alloc",
      async () => {
        const v = await cluster.get<VolumeClaims>(`/v1/volume/csi/${VOLUME}?claims=true`);
        const allocs = await cluster.get<AllocStub[]>(`/v1/job/${APP}/allocations`);
        if (!v || !allocs) return undefined;
        const status = new Map(allocs.map((a) => [a.ID, a.ClientStatus]));
        left = claimedAllocs(v)
          .filter((id) => TERMINAL.has(status.get(id) ?? "complete"))
          .map((id) => `claim of alloc ${id} (${status.get(id) ?? "unknown"})`);
        return left.length === 0 ? true : undefined;
      },
      60_000,
      500,
    );
    return [];
  } catch {
    return left;
  }
}

/** Staging and per-alloc mounts under the nodes' data dirs. */
async function volumeMounts(cluster: JepsenCluster): Promise<string[]> {
  const all = (await Promise.all(cluster.nodes.map((n) => mountsUnder(n.dataDir)))).flat();
  return all.filter((m) => /\/(staging|per-alloc)\//.test(m));
}

/** Processes whose command line names `dir` or the writer's marker. */
function processesLeft(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes(dir) || cmd.includes(MARKER)) out.push(`${pid} ${cmd.replace(/\0/g, " ").trim()}`);
    } catch {
      /* gone */
    }
  }
  return out;
}

/** Prints the report; returns the checks that failed. */
export function failedChecks(report: Report, log: (line: string) => void): string[] {
  const failed = Object.entries(report).filter(([, v]) => v.length > 0);
  for (const [check, lines] of Object.entries(report)) {
    log(`${lines.length === 0 ? "ok  " : "FAIL"} ${check}${lines.length ? ":" : ""}`);
    for (const l of lines) log(`       ${l}`);
  }
  return failed.map(([k]) => k);
}
