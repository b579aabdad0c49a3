/**
 * The node agent's wiring of the volume stats poller (client/volume_stats_wiring.ts): the uses it
 * polls are the persisted stubs minus those being released, and what changed goes to the server as
 * one CSIVolume.UpdateUsage naming this node.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { volumeStatsPoller } from "../../../src/client/volume_stats_wiring.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { NodeGetVolumeStatsRequest } from "../../../src/csi/types.js";
import type { PendingRelease } from "../../../src/client/state/types.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { plugin, stub } from "../../builders/client_records.js";

test("stats wiring: a use being released is not polled; changes go to the server as this node's", async () => {
  const client = new FakeCsiClient();
  client.volumeStats = {
    bytes: { used: 4096, available: 1 << 20, total: (1 << 20) + 4096 },
    inodes: null,
    condition: null,
  };
  const stubs = [
    { allocId: "a1", alias: "data", stub: stub({ volumeId: "v1", externalId: "ext-v1" }) },
    { allocId: "a2", alias: "data", stub: stub({ volumeId: "v2", externalId: "ext-v2" }) },
  ];
  const pending: Record<string, Record<string, PendingRelease>> = {
    a1: { data: { stub: stubs[0]!.stub, unmounted: true } },
  };
  const sent: unknown[] = [];
  const poller = volumeStatsPoller({
    nodeId: "n1",
    stateDb: {
      listAllVolumeStubs: () => stubs,
      listAllocsWithPendingReleases: () => Object.keys(pending),
      getPendingReleases: (id) => pending[id] ?? {},
    },
    registry: { get: () => plugin() },
    plugins: {
      nodePlugin: async () => ({ client, capabilities: { ...client.nodeCaps, getVolumeStats: true } }),
    },
    locks: new KeyedMutex(),
    conn: {
      call: async (method: string, req: unknown) => {
        sent.push({ method, req });
        return { Recorded: 1, Refused: [], Index: 7 };
      },
    },
    log: nullLogger,
    intervalMs: undefined,
  });
  await poller.pollOnce();
  assert.deepEqual(
    client.callsOf("NodeGetVolumeStats").map((c) => (c.req as NodeGetVolumeStatsRequest).volumeId),
    ["ext-v2"],
  );
  assert.deepEqual(sent, [
    {
      method: "CSIVolume.UpdateUsage",
      req: {
        NodeID: "n1",
        Volumes: [
          {
            VolumeID: "v2",
            Namespace: "default",
            BytesUsed: 4096,
            BytesAvailable: 1 << 20,
            BytesTotal: (1 << 20) + 4096,
            InodesUsed: 0,
            InodesAvailable: 0,
            InodesTotal: 0,
            Abnormal: false,
            Message: "",
          },
        ],
      },
    },
  ]);
});
