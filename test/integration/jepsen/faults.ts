/**
 * The faults of the Jepsen-style run, each aimed at where the workload runs now:
 * - pause-node-server: SIGSTOP of the server the workload's node is connected to (as its proxies
 *   see it), for `pauseMs`, then SIGCONT;
 * - pause-leader-startup: SIGSTOP of the leader; as soon as a live server names a new leader,
 *   SIGSTOP that one too (it is in its start-up pass), hold both longer than the lease, SIGCONT;
 * - partition-node: the workload's node agent cut from every server (all its proxies blackholed)
 *   for `partitionMs`, then healed;
 * - kill-during-claim: the workload's alloc stopped so a replacement claims the volume; the
 *   server the replacement's node is connected to is SIGKILLed in that window and started again.
 * During each, a job register and a volume create go through a random server (possibly the
 * victim) and are recorded. Each returns a line saying what it did, for the run's report.
 */
import { eventually } from "../../helpers/agent_process.js";
import { leaderOf } from "../leader/ha_processes.js";
import type { AckedOp } from "./checker.js";
import type { JepsenCluster } from "./cluster.js";
import { ackOps } from "./monitor.js";
import { APP, readWrites, type AllocStub } from "./workload.js";

export type FaultName = "pause-node-server" | "pause-leader-startup" | "partition-node" | "kill-during-claim";

export interface FaultContext {
  cluster: JepsenCluster;
  rand: () => number;
  /** The servers' heartbeat TTL and the etcd lease TTL, in ms. */
  ttlMs: number;
  leaseTtlMs: number;
  /** How long fault (a) pauses; fault (c) partitions for a random time in [ttl × 1.5, partitionMaxMs]. */
  pauseMs: number;
  partitionMaxMs: number;
  ops: AckedOp[];
  nextOp: () => number;
  /** The volume's write log (to tell whether a kill came before the replacement's first write). */
  logFile: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The app's running alloc (there must be one when a fault starts). */
export async function runningAlloc(cluster: JepsenCluster): Promise<AllocStub> {
  return eventually(
    "the app to have a running alloc",
    async () => {
      const allocs = await cluster.get<AllocStub[]>(`/v1/job/${APP}/allocations`);
      const running = allocs?.filter((a) => a.ClientStatus === "running") ?? [];
      return running.length === 1 ? running[0] : undefined;
    },
    30_000,
    100,
  );
}

/** The server `node` is connected to, waiting a little for a connection to show. */
async function serverOf(cluster: JepsenCluster, node: string): Promise<string> {
  return eventually(
    `node ${node} to hold a connection to a server`,
    async () => cluster.connectedServer(node),
    15_000,
    50,
  );
}

/** Starts the fault's client ops through a random server; the caller awaits them after the fault. */
function startOps(ctx: FaultContext): Promise<void> {
  const all = ctx.cluster.servers;
  const via = all[Math.floor(ctx.rand() * all.length)]!.name;
  return ackOps(ctx.cluster, via, ctx.nextOp(), ctx.ops, 20_000);
}

async function pauseNodeServer(ctx: FaultContext): Promise<string> {
  const { cluster } = ctx;
  const a = await runningAlloc(cluster);
  const victim = await serverOf(cluster, a.NodeName);
  const leader = cluster.opts.etcd ? await cluster.leader() : undefined;
  const ops = startOps(ctx);
  cluster.pause(victim);
  try {
    await sleep(ctx.pauseMs);
  } finally {
    cluster.resume(victim);
  }
  await ops;
  const role = leader?.name === victim ? "the leader" : "a follower";
  return `SIGSTOP ${victim} (${role}, node ${a.NodeName}'s server; alloc ${a.ID}) for ${ctx.pauseMs} ms`;
}

async function pauseLeaderStartup(ctx: FaultContext): Promise<string> {
  const { cluster } = ctx;
  const first = await cluster.leader();
  const ops = startOps(ctx);
  const stopped: string[] = [first.name];
  cluster.pause(first.name);
  let second: string | undefined;
  const t0 = Date.now();
  try {
    second = await eventually(
      "a live server to name a new leader",
      async () => {
        const named = await Promise.all(cluster.live().map((s) => leaderOf(s.base)));
        const other = named.find((h) => h !== undefined && h !== first.host);
        return cluster.servers.find((s) => s.host === other)?.name;
      },
      30_000,
      20,
    );
    cluster.pause(second);
    stopped.push(second);
    await sleep(ctx.leaseTtlMs * 2);
  } finally {
    // Continue them in a random order: either may come back first believing it leads.
    if (ctx.rand() < 0.5) stopped.reverse();
    for (const name of stopped) cluster.resume(name);
  }
  await ops;
  return (
    `SIGSTOP leader ${first.name}; new leader ${second} SIGSTOPped ${Date.now() - t0 - ctx.leaseTtlMs * 2} ms ` +
    `after, both held ${ctx.leaseTtlMs * 2} ms; SIGCONT ${stopped.join(" then ")}`
  );
}

async function partitionNode(ctx: FaultContext): Promise<string> {
  const { cluster } = ctx;
  const a = await runningAlloc(cluster);
  const min = Math.round(ctx.ttlMs * 1.5);
  const ms = min + Math.floor(ctx.rand() * Math.max(0, ctx.partitionMaxMs - min));
  const proxies = cluster.node(a.NodeName).proxies;
  const ops = startOps(ctx);
  proxies.partition();
  try {
    await sleep(ms);
  } finally {
    proxies.heal();
  }
  await ops;
  return `partition node ${a.NodeName} (alloc ${a.ID}) from every server for ${ms} ms`;
}

async function killDuringClaim(ctx: FaultContext): Promise<string> {
  const { cluster } = ctx;
  const a = await runningAlloc(cluster);
  const known = new Set(
    ((await cluster.get<AllocStub[]>(`/v1/job/${APP}/allocations`)) ?? []).map((x) => x.ID),
  );
  known.add(a.ID);
  const via = cluster.pick();
  const stop = await fetch(`${via.base}/v1/allocation/${a.ID}/stop`, {
    method: "POST",
    signal: AbortSignal.timeout(10_000),
  }).then(
    (r) => (r.ok ? "ok" : `HTTP ${r.status}`),
    (err: unknown) => String(err),
  );
  ctx.ops.push({ kind: "alloc-stop", id: a.ID, via: via.name, outcome: stop });
  if (stop !== "ok") throw new Error(`stopping alloc ${a.ID} through ${via.name}: ${stop}`);
  const next = await eventually(
    "the replacement alloc to be placed",
    async () => {
      const allocs = await cluster.get<AllocStub[]>(`/v1/job/${APP}/allocations`);
      return allocs?.find((x) => !known.has(x.ID) && x.NodeName !== "");
    },
    30_000,
    25,
  );
  const victim = await serverOf(cluster, next.NodeName);
  const delay = Math.floor(ctx.rand() * 1000);
  const ops = startOps(ctx);
  await sleep(delay);
  const killedAt = BigInt(Date.now()) * 1_000_000n;
  await cluster.killAndRestart(victim, 300);
  await ops;
  // Whether the kill landed before the replacement's task ran (claim, publish or mount under way).
  const first = readWrites(ctx.logFile).writes.find((w) => w.alloc === next.ID);
  const when = first === undefined || first.ns > killedAt ? "before" : "after";
  return (
    `stop alloc ${a.ID}; replacement ${next.ID} on ${next.NodeName}; kill -9 ${victim} ${delay} ms ` +
    `later (${when} the replacement's first write), restarted`
  );
}

export const FAULTS: Record<FaultName, (ctx: FaultContext) => Promise<string>> = {
  "pause-node-server": pauseNodeServer,
  "pause-leader-startup": pauseLeaderStartup,
  "partition-node": partitionNode,
  "kill-during-claim": killDuringClaim,
};
