/**
 * What a node drain does next, pure: given the node's drain strategy, every alloc on the node and
 * every volume claim the node holds, which allocs to mark for migration now and whether the drain
 * is complete. The drainer applies the answer; the reconciler turns a mark into a stop plus (for
 * non-system jobs) a replacement on another node.
 *
 * The allocs fall into three tiers, drained in order:
 * 1. `migrate` — allocs of service and batch jobs that run no CSI plugin: marked at once.
 * 2. `system` — allocs of system jobs that run no CSI plugin: marked once every tier-1 alloc is
 *    terminal and no claim held by a tier-1 alloc (or by an alloc the node no longer lists) is left.
 * 3. `plugin` — allocs with a task that has a `csi_plugin` block, whatever their job type: marked
 *    once tiers 1 and 2 are terminal and no claim on the node is left but the plugins' own. A plugin
 *    must outlive every volume it serves on the node: the node's NodeUnpublish/NodeUnstage and the
 *    ControllerUnpublish that follow a stop need it.
 * With IgnoreSystemJobs, system-job allocs (plugin or not) stay and their claims block nothing;
 * plugin allocs of service jobs still go last. Once the force deadline passes (Deadline < 0: at
 * once) everything left is marked together, and the drain completes once every alloc has been told
 * to stop (before that, it completes when every drained alloc is terminal). "Claims" are claims in any state short of freed: a
 * claim leaves the volume record only when its release walk has finished.
 */
import { allocTaskGroup, isAllocTerminal, shouldMigrate, type Allocation } from "../../structs/alloc.js";
import { drainForceAtMs, type DrainStrategy } from "../../structs/node.js";
import type { VolumeClaim } from "../../structs/volume.js";

export type DrainTier = "migrate" | "system" | "plugin";

export interface DrainInput {
  strategy: DrainStrategy;
  /** Every alloc on the node, terminal or not. */
  allocs: Allocation[];
  /** Every claim the node holds on the volumes its allocs use, in any state. */
  claims: VolumeClaim[];
  nowMs: number;
}

export interface DrainDecision {
  /** Allocs to mark for migration now (DesiredStatus run, not marked yet). */
  migrate: Allocation[];
  /** The drain has nothing left to stop: every alloc it drains is terminal. */
  done: boolean;
  /** The force deadline has passed. */
  forced: boolean;
  /** Unix ms of a force deadline still ahead, to wake up for; null when none. */
  wakeAtMs: number | null;
  /** What the next tier waits for, for logs and tests. */
  waiting: { allocs: number; claims: number };
}

export function drainTier(a: Allocation): DrainTier {
  if (allocTaskGroup(a)?.Tasks.some((t) => t.CSIPluginConfig !== null) ?? false) return "plugin";
  return a.Job.Type === "system" ? "system" : "migrate";
}

/** Whether the drain stops this alloc at all (IgnoreSystemJobs keeps system-job allocs). */
export function drains(strategy: Pick<DrainStrategy, "IgnoreSystemJobs">, a: Allocation): boolean {
  return !(strategy.IgnoreSystemJobs && a.Job.Type === "system");
}

/** Not asked to stop or move yet: the drainer may mark it. */
function markable(a: Allocation): boolean {
  return a.DesiredStatus === "run" && !shouldMigrate(a) && !isAllocTerminal(a);
}

export function decideDrain(input: DrainInput): DrainDecision {
  const { strategy, allocs, claims, nowMs } = input;
  const forceAt = drainForceAtMs(strategy);
  const forced = forceAt !== null && nowMs >= forceAt;
  const drained = allocs.filter((a) => drains(strategy, a));
  const active = drained.filter((a) => !isAllocTerminal(a));
  if (forced) {
    // Past the deadline the drain is over once every alloc has been told to stop, as in Nomad: an
    // agent that never reports back must not hold the drain open.
    const migrate = active.filter(markable);
    const done = active.every((a) => a.DesiredStatus !== "run");
    return { migrate, done, forced, wakeAtMs: null, waiting: { allocs: 0, claims: 0 } };
  }
  const done = active.length === 0;
  const wakeAtMs = done ? null : forceAt;

  const tierOf = new Map(allocs.map((a) => [a.ID, drainTier(a)] as const));
  const kept = new Set(allocs.filter((a) => !drains(strategy, a)).map((a) => a.ID));
  const activeIn = (tier: DrainTier) => active.filter((a) => tierOf.get(a.ID) === tier);
  /** Claims that hold back `tier`: those of allocs drained in an earlier tier, or of unknown allocs. */
  const blockingClaims = (tier: DrainTier) =>
    claims.filter((c) => {
      if (kept.has(c.AllocationID)) return false;
      const holder = tierOf.get(c.AllocationID) ?? "migrate";
      return tier === "system" ? holder === "migrate" : holder !== "plugin";
    });

  const migrateTier = activeIn("migrate");
  const migrate = migrateTier.filter(markable);
  const systemClaims = blockingClaims("system");
  const systemReady = migrateTier.length === 0 && systemClaims.length === 0;
  if (!systemReady) {
    return {
      migrate,
      done,
      forced,
      wakeAtMs,
      waiting: { allocs: migrateTier.length, claims: systemClaims.length },
    };
  }
  const systemTier = activeIn("system");
  migrate.push(...systemTier.filter(markable));
  const pluginClaims = blockingClaims("plugin");
  const pluginReady = systemTier.length === 0 && pluginClaims.length === 0;
  if (pluginReady) migrate.push(...activeIn("plugin").filter(markable));
  return {
    migrate,
    done,
    forced,
    wakeAtMs,
    waiting: pluginReady
      ? { allocs: 0, claims: 0 }
      : { allocs: systemTier.length, claims: pluginClaims.length },
  };
}
