/**
 * The volume stats poller (issue 15): every `intervalMs` (60 s by default, as kubelet's volume
 * stats), NodeGetVolumeStats for each volume published on this node whose node plugin advertises
 * GET_VOLUME_STATS, the condition too when it advertises VOLUME_CONDITION; what changed is sent to
 * the server in one CSIVolume.UpdateUsage batch.
 *
 * Contracts:
 * - Only advertised calls: a plugin without GET_VOLUME_STATS is never asked.
 * - A volume is polled once per round however many allocs on this node publish it (through the
 *   first one's publish target, and its staging path when the plugin stages).
 * - Never beside another CSI call of the same volume on this node (DESIGN: one call per volume):
 *   a volume whose lock is held or awaited (a stage, publish, unmount, expand) is skipped this
 *   round rather than waited for; a mount that starts while the stats call runs waits at most that
 *   call's deadline (`callTimeoutMs`, 10 s by default).
 * - The first round runs one interval after start, then one interval after each round ends.
 * - Bounded: at most `concurrency` calls in flight (4 by default); a plugin gets one call at a time
 *   until it has answered one in the round, and one whose call timed out or was unreachable is not
 *   asked again in that round, so a hung plugin holds one worker for one deadline per round while
 *   the volumes of other plugins go on. Rounds never overlap (the next starts `intervalMs` after
 *   the previous one ended).
 * - Changes only (structs/volume_usage.ts usageChanged): a volume is reported when its figures moved
 *   past the threshold or its condition changed since the last report the server accepted; a failed
 *   report is sent again next round. A volume no longer published is forgotten.
 * - Errors of a plugin are logged (debug; warn once per volume while they last) and never thrown.
 */
import { isAbortError, sleep } from "../../internal/abort.js";
import type { KeyedMutex } from "../../internal/keyed_mutex.js";
import type { Logger } from "../../internal/log.js";
import { asBerthError, type ErrorCode } from "../../structs/errors.js";
import {
  usageChanged,
  usageFigures,
  type VolumeUsageFigures,
  type VolumeUsageReport,
} from "../../structs/volume_usage.js";
import type { CsiVolumeStats } from "../../csi/types.js";
import type { RegisteredPlugin } from "../dynamicplugins/types.js";
import type { CsiVolumeStub } from "../state/types.js";
import type { NodePluginSource } from "./manager.js";
import { volumeKey, volumePaths } from "./paths.js";

export const DEFAULT_VOLUME_STATS_INTERVAL_MS = 60_000;
export const DEFAULT_VOLUME_STATS_TIMEOUT_MS = 10_000;
export const DEFAULT_VOLUME_STATS_CONCURRENCY = 4;

/** Failures after which a plugin is not asked again this round. */
const PLUGIN_DOWN: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  "ERR_CSI_DEADLINE_EXCEEDED",
  "ERR_CSI_UNAVAILABLE",
  "ERR_CSI_PLUGIN_UNAVAILABLE",
]);

export interface VolumeStatsConfig {
  /** Every alloc's published volume on this node (the persisted stubs). */
  published: () => { allocId: string; stub: CsiVolumeStub }[];
  /** The registered node plugin, for its directories (the plugin-view paths). */
  registeredNodePlugin: (pluginId: string) => RegisteredPlugin | undefined;
  plugins: NodePluginSource;
  /** The volume manager's per-volume locks. */
  locks: KeyedMutex;
  /** Sends one batch to the server (CSIVolume.UpdateUsage); throws when it was not accepted. */
  report: (volumes: VolumeUsageReport[]) => Promise<void>;
  log: Logger;
  intervalMs?: number;
  callTimeoutMs?: number;
  concurrency?: number;
}

/** What one round did, for tests and the debug log. */
export interface StatsRound {
  polled: number;
  /** Volumes skipped: lock busy, plugin missing or down this round. */
  skipped: number;
  failed: number;
  reported: number;
}

interface Target {
  key: string;
  stub: CsiVolumeStub;
  allocId: string;
}

/** One plugin's targets still to poll this round, its calls in flight, and whether one answered. */
type PluginQueue = { targets: Target[]; inFlight: number; answered: boolean };

function pluginQueues(targets: Target[]): Map<string, PluginQueue> {
  const queues = new Map<string, PluginQueue>();
  for (const t of targets) {
    const q = queues.get(t.stub.pluginId);
    if (q) q.targets.push(t);
    else queues.set(t.stub.pluginId, { targets: [t], inFlight: 0, answered: false });
  }
  return queues;
}

/**
 * The next target to poll. A plugin gets one call at a time until it has answered one this round:
 * a hung plugin then holds one worker for one deadline, never all of them. A plugin found down
 * has its remaining targets skipped (counted in `round`).
 */
function picker(
  queues: Map<string, PluginQueue>,
  down: ReadonlySet<string>,
  round: StatsRound,
): () => [string, Target] | undefined {
  return () => {
    for (const [pluginId, q] of queues) {
      if (q.targets.length === 0) continue;
      if (down.has(pluginId)) {
        round.skipped += q.targets.length;
        q.targets.length = 0;
        continue;
      }
      if (q.answered || q.inFlight === 0) {
        q.inFlight++;
        return [pluginId, q.targets.shift()!];
      }
    }
    return undefined;
  };
}

export class VolumeStatsPoller {
  private readonly lastSent = new Map<string, VolumeUsageFigures>();
  /** Volumes whose last poll failed (warned once until one succeeds). */
  private readonly failing = new Set<string>();
  private readonly stopper = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(private readonly cfg: VolumeStatsConfig) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.loop;
  }

  /** One round: poll every published volume, report what changed. */
  async pollOnce(): Promise<StatsRound> {
    const round: StatsRound = { polled: 0, skipped: 0, failed: 0, reported: 0 };
    const down = new Set<string>();
    const changed: VolumeUsageReport[] = [];
    const queues = pluginQueues(this.targets());
    const pick = picker(queues, down, round);
    let active = 0;
    const waiting: (() => void)[] = [];
    const worker = async () => {
      while (!this.stopper.signal.aborted) {
        const next = pick();
        if (!next) {
          if (active === 0) return;
          await new Promise<void>((r) => waiting.push(r));
          continue;
        }
        const [pluginId, t] = next;
        const q = queues.get(pluginId)!;
        active++;
        try {
          const figures = await this.pollOne(t, down, round);
          if (!down.has(pluginId)) q.answered = true;
          if (!figures) continue;
          round.polled++;
          if (usageChanged(this.lastSent.get(t.key), figures)) {
            changed.push({ VolumeID: t.stub.volumeId, Namespace: t.stub.namespace, ...figures });
          }
        } finally {
          q.inFlight--;
          active--;
          for (const w of waiting.splice(0)) w();
        }
      }
    };
    const n = Math.max(1, this.cfg.concurrency ?? DEFAULT_VOLUME_STATS_CONCURRENCY);
    await Promise.all(Array.from({ length: n }, worker));
    if (changed.length > 0 && !this.stopper.signal.aborted) await this.report(changed, round);
    return round;
  }

  /** Reports the round's changed figures; a failure is logged and the next round tries again. */
  private async report(changed: VolumeUsageReport[], round: StatsRound): Promise<void> {
    try {
      await this.cfg.report(changed);
      for (const r of changed) this.lastSent.set(volumeKey(r.Namespace, r.VolumeID), usageFigures(r));
      round.reported = changed.length;
    } catch (err) {
      this.cfg.log.warn("could not report volume usage to the server; retrying next round", {
        volumes: changed.length,
        error: asBerthError(err).message,
      });
    }
  }

  /** One target per volume (the first alloc's use); forgets volumes no longer published. */
  private targets(): Target[] {
    const byKey = new Map<string, Target>();
    for (const { allocId, stub } of this.cfg.published()) {
      const key = volumeKey(stub.namespace, stub.volumeId);
      if (!byKey.has(key)) byKey.set(key, { key, stub, allocId });
    }
    for (const k of [...this.lastSent.keys()]) if (!byKey.has(k)) this.lastSent.delete(k);
    for (const k of [...this.failing]) if (!byKey.has(k)) this.failing.delete(k);
    return [...byKey.values()];
  }

  /** The volume's figures, or undefined when it was skipped or its call failed. */
  private async pollOne(
    t: Target,
    down: Set<string>,
    round: StatsRound,
  ): Promise<VolumeUsageFigures | undefined> {
    const { stub } = t;
    const signal = this.stopper.signal;
    const plugin = this.cfg.registeredNodePlugin(stub.pluginId);
    try {
      const node = plugin ? await this.cfg.plugins.nodePlugin(stub.pluginId, signal) : undefined;
      if (!plugin || !node?.capabilities.getVolumeStats || this.cfg.locks.isBusy(t.key)) {
        round.skipped++;
        return undefined;
      }
      const paths = volumePaths(
        plugin,
        { namespace: stub.namespace, volumeId: stub.volumeId, allocId: t.allocId },
        stub.usage,
      );
      // No await between the busy check and taking the lock: nothing can slip in between.
      const stats = await this.cfg.locks.run(t.key, () =>
        node.client.nodeGetVolumeStats(
          {
            volumeId: stub.externalId,
            volumePath: paths.targetPath,
            stagingTargetPath: stub.stagingPath ? paths.stagingPath : "",
          },
          { signal, timeoutMs: this.cfg.callTimeoutMs ?? DEFAULT_VOLUME_STATS_TIMEOUT_MS },
        ),
      );
      if (this.failing.delete(t.key))
        this.cfg.log.info("volume stats answered again", { volume: stub.volumeId });
      return toFigures(stats, node.capabilities.volumeCondition);
    } catch (err) {
      if (signal.aborted) return undefined;
      const e = asBerthError(err);
      if (PLUGIN_DOWN.has(e.code)) down.add(stub.pluginId);
      round.failed++;
      const fields = { volume: stub.volumeId, plugin: stub.pluginId, code: e.code, error: e.message };
      // NOT_FOUND: unpublished between the listing and the call (a release in progress) — normal.
      if (this.failing.has(t.key) || e.code === "ERR_CSI_NOT_FOUND") {
        this.cfg.log.debug("NodeGetVolumeStats failed", fields);
      } else this.cfg.log.warn("NodeGetVolumeStats failed; retrying next round", fields);
      this.failing.add(t.key);
      return undefined;
    }
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    const interval = this.cfg.intervalMs ?? DEFAULT_VOLUME_STATS_INTERVAL_MS;
    // The first round one interval after start: a starting agent restores its allocs first.
    await sleep(interval, signal).catch(() => undefined);
    while (!signal.aborted) {
      try {
        const round = await this.pollOnce();
        if (round.polled + round.failed > 0) this.cfg.log.debug("volume stats round", { ...round });
        await sleep(interval, signal);
      } catch (err) {
        if (isAbortError(err) || signal.aborted) return;
        this.cfg.log.error("volume stats round failed", { error: err });
        await sleep(interval, signal).catch(() => undefined);
      }
    }
  }
}

/** Missing BYTES/INODES entries read as zeros; the condition only when VOLUME_CONDITION is advertised. */
export function toFigures(stats: CsiVolumeStats, conditionAdvertised: boolean): VolumeUsageFigures {
  const condition = conditionAdvertised ? stats.condition : null;
  return {
    BytesUsed: stats.bytes?.used ?? 0,
    BytesAvailable: stats.bytes?.available ?? 0,
    BytesTotal: stats.bytes?.total ?? 0,
    InodesUsed: stats.inodes?.used ?? 0,
    InodesAvailable: stats.inodes?.available ?? 0,
    InodesTotal: stats.inodes?.total ?? 0,
    Abnormal: condition?.abnormal ?? false,
    Message: condition?.message ?? "",
  };
}
