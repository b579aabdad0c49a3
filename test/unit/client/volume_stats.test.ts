/**
 * The volume stats poller (csimanager/volume_stats.ts), one layer with fake plugin clients: only
 * advertised calls, one call per volume per round, changes only (and a failed report sent again),
 * never beside another call of the same volume, a hung plugin costs one deadline per round while
 * other plugins' volumes go on, and at most `concurrency` calls in flight.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { VolumeStatsPoller, type VolumeStatsConfig } from "../../../src/client/csimanager/volume_stats.js";
import type { NodePluginHandle } from "../../../src/client/csimanager/manager.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { CsiVolumeStats, NodeGetVolumeStatsRequest } from "../../../src/csi/types.js";
import type { CsiVolumeStub } from "../../../src/client/state/types.js";
import type { VolumeUsageReport } from "../../../src/structs/volume_usage.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { plugin, stub } from "../../builders/client_records.js";

const MiB = 1024 * 1024;

function stats(used: number, abnormal = false): CsiVolumeStats {
  return {
    bytes: { used, available: 100 * MiB - used, total: 100 * MiB },
    inodes: { used: 3, available: 997, total: 1000 },
    condition: { abnormal, message: abnormal ? "gone" : "" },
  };
}

interface Setup {
  clients: Map<string, FakeCsiClient>;
  published: { allocId: string; stub: CsiVolumeStub }[];
  reports: VolumeUsageReport[][];
  locks: KeyedMutex;
  poller: VolumeStatsPoller;
  /** Per-volume answers (by external ID); a volume missing here answers `stats(1 MiB)`. */
  answers: Map<string, CsiVolumeStats>;
  failReport: { next: boolean };
}

function setup(
  caps: Record<string, { getVolumeStats: boolean; volumeCondition: boolean }>,
  over: Partial<VolumeStatsConfig> = {},
): Setup {
  const clients = new Map<string, FakeCsiClient>();
  const answers = new Map<string, CsiVolumeStats>();
  for (const id of Object.keys(caps)) {
    const c = new FakeCsiClient(`unix:///${id}.sock`);
    const original = c.nodeGetVolumeStats.bind(c);
    c.nodeGetVolumeStats = async (req: NodeGetVolumeStatsRequest, o) => {
      c.volumeStats = answers.get(req.volumeId) ?? stats(MiB);
      return original(req, o);
    };
    clients.set(id, c);
  }
  const published: Setup["published"] = [];
  const reports: VolumeUsageReport[][] = [];
  const failReport = { next: false };
  const locks = new KeyedMutex();
  const poller = new VolumeStatsPoller({
    published: () => published,
    registeredNodePlugin: (id) => (caps[id] ? plugin({ pluginId: id, hostDir: `/host/${id}` }) : undefined),
    plugins: {
      nodePlugin: async (id): Promise<NodePluginHandle> => {
        const client = clients.get(id);
        if (!client) throw new BerthError("ERR_CSI_PLUGIN_UNAVAILABLE", `no ${id}`);
        return { client, capabilities: { ...client.nodeCaps, ...caps[id]! } };
      },
    },
    locks,
    report: async (volumes) => {
      if (failReport.next) {
        failReport.next = false;
        throw new BerthError("ERR_RPC_UNAVAILABLE", "not connected");
      }
      reports.push(volumes);
    },
    log: nullLogger,
    ...over,
  });
  return { clients, published, reports, locks, poller, answers, failReport };
}

const use = (allocId: string, volumeId: string, pluginId: string, stagingPath = "/s") => ({
  allocId,
  stub: stub({ volumeId, pluginId, externalId: `ext-${volumeId}`, stagingPath }),
});

test("stats: only advertised plugins are asked, once per volume, through the first alloc's paths", async () => {
  const s = setup({
    p1: { getVolumeStats: true, volumeCondition: true },
    p2: { getVolumeStats: false, volumeCondition: false },
  });
  s.published.push(
    use("a1", "v1", "p1"),
    use("a2", "v1", "p1"),
    use("a3", "v2", "p2"),
    use("a4", "v3", "gone"),
  );
  const round = await s.poller.pollOnce();
  assert.deepEqual(round, { polled: 1, skipped: 2, failed: 0, reported: 1 });
  assert.deepEqual(s.clients.get("p2")!.callsOf("NodeGetVolumeStats"), []);
  const calls = s.clients.get("p1")!.callsOf("NodeGetVolumeStats");
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0]!.req, {
    volumeId: "ext-v1",
    volumePath: "/csi/per-alloc/a1/v1/rw-file-system-single-node-writer",
    stagingTargetPath: "/csi/staging/default/v1/rw-file-system-single-node-writer",
  });
  assert.deepEqual(s.reports, [
    [
      {
        VolumeID: "v1",
        Namespace: "default",
        BytesUsed: MiB,
        BytesAvailable: 99 * MiB,
        BytesTotal: 100 * MiB,
        InodesUsed: 3,
        InodesAvailable: 997,
        InodesTotal: 1000,
        Abnormal: false,
        Message: "",
      },
    ],
  ]);
});

test("stats: changes only; a failed report is sent again; a condition counts only when advertised", async () => {
  const s = setup({
    p1: { getVolumeStats: true, volumeCondition: true },
    nc: { getVolumeStats: true, volumeCondition: false },
  });
  s.published.push(use("a1", "v1", "p1", ""), use("a2", "v2", "nc"));
  await s.poller.pollOnce();
  assert.equal(s.reports.length, 1);
  // Same figures, and 100 KiB more: nothing to report.
  s.answers.set("ext-v1", stats(MiB + 100 * 1024));
  assert.equal((await s.poller.pollOnce()).reported, 0);
  assert.equal(s.reports.length, 1);
  // The plugin's staging path is "" for a plugin that does not stage.
  assert.equal(
    (s.clients.get("p1")!.callsOf("NodeGetVolumeStats")[0]!.req as NodeGetVolumeStatsRequest)
      .stagingTargetPath,
    "",
  );
  // 5 MiB more, but the server is away: reported on the next round.
  s.answers.set("ext-v1", stats(6 * MiB));
  s.failReport.next = true;
  assert.equal((await s.poller.pollOnce()).reported, 0);
  assert.equal((await s.poller.pollOnce()).reported, 1);
  assert.deepEqual(
    s.reports.at(-1)!.map((r) => [r.VolumeID, r.BytesUsed]),
    [["v1", 6 * MiB]],
  );
  // Abnormal from a plugin without VOLUME_CONDITION is not believed; from one with it, reported.
  s.answers.set("ext-v2", stats(MiB, true));
  assert.equal((await s.poller.pollOnce()).reported, 0);
  s.answers.set("ext-v1", stats(6 * MiB, true));
  await s.poller.pollOnce();
  assert.deepEqual(
    s.reports.at(-1)!.map((r) => [r.VolumeID, r.Abnormal, r.Message]),
    [["v1", true, "gone"]],
  );
  // Unpublished and published again: reported afresh.
  s.published.splice(0, 1);
  await s.poller.pollOnce();
  s.published.push(use("a1", "v1", "p1"));
  assert.equal((await s.poller.pollOnce()).reported, 1);
});

test("stats: never beside another call of the volume: a held lock skips it, a mount waits for the call", async () => {
  const s = setup({ p1: { getVolumeStats: true, volumeCondition: false } });
  s.published.push(use("a1", "v1", "p1"));
  let release!: () => void;
  const held = s.locks.run("default/v1", () => new Promise<void>((r) => (release = r)));
  assert.deepEqual(await s.poller.pollOnce(), { polled: 0, skipped: 1, failed: 0, reported: 0 });
  assert.equal(s.clients.get("p1")!.callsOf("NodeGetVolumeStats").length, 0);
  release();
  await held;
  s.clients.get("p1")!.delayMs = 100;
  const round = s.poller.pollOnce();
  await new Promise((r) => setTimeout(r, 20));
  let mountedAt = 0;
  await s.locks.run("default/v1", async () => {
    mountedAt = Date.now();
  });
  await round;
  const call = s.clients.get("p1")!.callsOf("NodeGetVolumeStats")[0]!;
  assert.ok(call.end > 0 && mountedAt >= call.end, "the mount ran only after the stats call ended");
});

test("stats: a hung plugin costs one deadline per round; other plugins go on; concurrency is bounded", async () => {
  const s = setup(
    {
      hung: { getVolumeStats: true, volumeCondition: false },
      ok: { getVolumeStats: true, volumeCondition: false },
    },
    { concurrency: 2, callTimeoutMs: 150 },
  );
  const hung = s.clients.get("hung")!;
  hung.nodeGetVolumeStats = async (req, o) => {
    hung.calls.push({ method: "NodeGetVolumeStats", req, start: Date.now(), end: 0 });
    await new Promise((r) => setTimeout(r, o?.timeoutMs ?? 0));
    throw new BerthError("ERR_CSI_DEADLINE_EXCEEDED", "CSI NodeGetVolumeStats: deadline exceeded");
  };
  const ok = s.clients.get("ok")!;
  ok.delayMs = 20;
  let inFlight = 0;
  let maxInFlight = 0;
  const okCall = ok.nodeGetVolumeStats.bind(ok);
  ok.nodeGetVolumeStats = async (req, o) => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    try {
      return await okCall(req, o);
    } finally {
      inFlight--;
    }
  };
  for (let i = 0; i < 3; i++) s.published.push(use(`h${i}`, `hv${i}`, "hung"));
  for (let i = 0; i < 6; i++) s.published.push(use(`o${i}`, `ov${i}`, "ok"));
  const round = await s.poller.pollOnce();
  assert.equal(hung.callsOf("NodeGetVolumeStats").length, 1, "the hung plugin is asked once per round");
  assert.equal(ok.callsOf("NodeGetVolumeStats").length, 6);
  assert.deepEqual(round, { polled: 6, skipped: 2, failed: 1, reported: 6 });
  assert.ok(maxInFlight <= 2, `at most 2 calls in flight (max ${maxInFlight})`);
  assert.deepEqual(s.reports[0]!.map((r) => r.VolumeID).sort(), ["ov0", "ov1", "ov2", "ov3", "ov4", "ov5"]);
});

test("stats: start and stop: rounds repeat at the interval and stop ends the loop", async () => {
  const s = setup({ p1: { getVolumeStats: true, volumeCondition: false } }, { intervalMs: 30 });
  s.published.push(use("a1", "v1", "p1"));
  s.poller.start();
  const deadline = Date.now() + 5000;
  while (s.clients.get("p1")!.callsOf("NodeGetVolumeStats").length < 3 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  await s.poller.stop();
  const n = s.clients.get("p1")!.callsOf("NodeGetVolumeStats").length;
  assert.ok(n >= 3, `3 rounds ran (${n})`);
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(s.clients.get("p1")!.callsOf("NodeGetVolumeStats").length, n, "no round after stop");
});
