/**
 * Controller calls are serialised per volume and never queued per plugin: a real in-process server
 * and one fake node agent over the agent RPC, whose ControllerPublish/ControllerUnpublish take a
 * while and record how many calls are in flight, in all and per volume. 50 allocs of a per_alloc
 * job claim 50 different volumes at once → their publishes overlap; a burst of racing claims and
 * releases of one volume → never two of its calls at the same time.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, startServer } from "./fake_agent.js";

const VOLUMES = 50;
// Long enough that 50 claims, handled in a few group-committed batches (one turn of the event loop
// each), all start their publish within one call's time even on a loaded 2-core machine.
const CALL_MS = 150;

interface AllocView {
  ID: string;
  Name: string;
  NodeID: string;
}

/** In-flight bookkeeping of the fake controller: peaks overall and per volume. */
class Concurrency {
  private inFlight = 0;
  private readonly perVolume = new Map<string, number>();
  peak = 0;
  readonly volumePeaks = new Map<string, number>();
  calls = 0;

  async run<T>(volume: string, fn: () => Promise<T>): Promise<T> {
    this.calls++;
    this.inFlight++;
    this.peak = Math.max(this.peak, this.inFlight);
    const mine = (this.perVolume.get(volume) ?? 0) + 1;
    this.perVolume.set(volume, mine);
    this.volumePeaks.set(volume, Math.max(this.volumePeaks.get(volume) ?? 0, mine));
    try {
      return await fn();
    } finally {
      this.inFlight--;
      this.perVolume.set(volume, (this.perVolume.get(volume) ?? 1) - 1);
    }
  }

  reset(): void {
    this.peak = 0;
    this.calls = 0;
    this.volumePeaks.clear();
  }

  maxPerVolume(): number {
    return Math.max(0, ...this.volumePeaks.values());
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function put(base: string, route: string, body: unknown): Promise<void> {
  const res = await fetch(base + route, { method: "PUT", body: JSON.stringify(body) });
  assert.equal(res.status, 200, `PUT ${route}: ${await res.text()}`);
}

test("controller calls for 50 volumes overlap; calls for one volume never do", async (t) => {
  const base = await startServer(t);

  const cc = new Concurrency();
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerPublishVolume": (p) =>
      cc.run(p.ExternalVolumeID, async () => {
        await sleep(CALL_MS);
        return { PublishContext: { volume: p.ExternalVolumeID } };
      }),
    "ClientCSI.ControllerUnpublishVolume": (p) =>
      cc.run(p.ExternalVolumeID, async () => {
        await sleep(CALL_MS);
        return {};
      }),
    "ClientCSI.ControllerValidateVolume": async () => ({}),
  });
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: { p1: controllerInfo("p1", true) },
      CSINodePlugins: { p1: nodePluginInfo("p1", {}, { ID: "ext-n1" }) },
    }),
  });

  const ids = Array.from({ length: VOLUMES }, (_, i) => `data[${i}]`);
  await put(base, `/v1/volume/csi/${encodeURIComponent(ids[0]!)}`, {
    Volumes: ids.map((id) => ({
      ID: id,
      Name: id,
      PluginID: "p1",
      ExternalID: `ext-${id}`,
      RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    })),
  });
  await put(base, "/v1/jobs", {
    Job: {
      ID: "many",
      TaskGroups: [
        {
          Name: "g",
          Count: VOLUMES,
          Volumes: {
            data: {
              Type: "csi",
              Source: "data",
              PerAlloc: true,
              AccessMode: "single-node-writer",
              AttachmentMode: "file-system",
            },
          },
          Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
        },
      ],
    },
  });
  const res = await fetch(base + "/v1/job/many/allocations");
  const allocs = (await res.json()) as AllocView[];
  assert.equal(allocs.length, VOLUMES, "every alloc is placed");
  const volumeOf = (a: AllocView) => `data[${/\[(\d+)\]$/.exec(a.Name)![1]}]`;

  const claim = (a: AllocView) =>
    peer.call("CSIVolume.Claim", {
      VolumeID: volumeOf(a),
      Namespace: "default",
      AllocationID: a.ID,
      NodeID: a.NodeID,
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
  const release = (a: AllocView) =>
    peer.call("CSIVolume.Unpublish", {
      VolumeID: volumeOf(a),
      Namespace: "default",
      AllocationID: a.ID,
      NodeID: a.NodeID,
      State: "node-detached",
    });

  // 50 claims at once: one publish per volume, all in flight together.
  const t0 = Date.now();
  const claimed = await Promise.all(allocs.map(claim));
  const claimMs = Date.now() - t0;
  for (const [i, c] of claimed.entries()) {
    assert.deepEqual(c.PublishContext, { volume: `ext-${volumeOf(allocs[i]!)}` });
  }
  assert.equal(cc.calls, VOLUMES);
  assert.ok(cc.peak >= VOLUMES * 0.8, `publishes overlap: peak ${cc.peak} of ${VOLUMES} in flight`);
  assert.ok(
    claimMs < (VOLUMES * CALL_MS) / 4,
    `50 claims took ${claimMs} ms; one queue would take ${VOLUMES * CALL_MS} ms`,
  );
  assert.equal(cc.maxPerVolume(), 1);

  // One volume, racing: repeated claims of its alloc, releases and re-claims, all at once, while
  // the other 49 volumes are released in parallel.
  cc.reset();
  const first = allocs.find((a) => volumeOf(a) === "data[0]")!;
  const others = allocs.filter((a) => a !== first);
  const racing = [
    claim(first),
    claim(first),
    release(first),
    claim(first),
    release(first),
    claim(first),
    claim(first),
    release(first),
  ];
  await Promise.all([...racing, ...others.map(release)]);
  const firstCalls = cc.calls - others.length;
  assert.ok(firstCalls >= 6, `data[0] saw ${firstCalls} controller calls`);
  assert.equal(cc.volumePeaks.get("ext-data[0]"), 1, "calls for one volume never overlap");
  assert.equal(cc.maxPerVolume(), 1, "no volume ever had two calls in flight");
  assert.ok(cc.peak >= others.length * 0.8, `unpublishes of different volumes overlap: peak ${cc.peak}`);

  // Every claim ends released: the last racing call was a release.
  const vol = (await (
    await fetch(`${base}/v1/volume/csi/${encodeURIComponent("data[0]")}?claims=true`)
  ).json()) as {
    WriteAllocs: Record<string, unknown>;
    PastClaims: Record<string, unknown>;
  };
  assert.deepEqual([vol.WriteAllocs, vol.PastClaims], [{}, {}]);
});
