/**
 * Issue 10, "a departed controller poisons its plugin for a day": plugin p1's only controller
 * (attach/detach) runs on node A, its node plugin on node B. When A stops heartbeating and goes
 * down, A's entries no longer say what the plugin requires — claims and releases on B go on
 * without a controller nothing can reach — and once A has been down past the server's bound its
 * instances leave the plugin record (they come back with A). Real parts: an in-process server on
 * loopback with a real SQLite state file, node agents on the real agent RPC path, real heartbeat
 * expiry.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { connectAgent, http, type AgentPeer } from "./fake_agent.js";

const TTL_MS = 1000;

async function startServer(t: { after(fn: () => unknown): void }, boundMs: number): Promise<string> {
  const server = new Server({
    dataDir: tempDir("berth-departed-"),
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: TTL_MS,
    downNodePluginBoundMs: boundMs,
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

/** Heartbeats `nodeId` until the returned stop() (also called after the test). */
function keepAlive(t: { after(fn: () => unknown): void }, peer: AgentPeer, nodeId: string) {
  let on = true;
  const loop = (async () => {
    while (on) {
      await peer.call("Node.Heartbeat", { NodeID: nodeId }).catch(() => undefined);
      await sleep(TTL_MS / 5);
    }
  })();
  const stop = async () => {
    on = false;
    await loop;
  };
  t.after(stop);
  return stop;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function nodeStatus(base: string, id: string): Promise<string> {
  return (await http(base, "GET", `/v1/node/${id}`)).json.Status as string;
}

async function plugin(base: string) {
  const p = await http(base, "GET", "/v1/plugin/csi/p1");
  assert.equal(p.status, 200, p.text);
  return p.json as {
    ControllerRequired: boolean;
    ControllersHealthy: number;
    Controllers: Record<string, { Healthy: boolean; HealthDescription: string }>;
  };
}

/** A with the controller, B with the node plugin, vol1 registered, a job placed on B. */
async function cluster(t: { after(fn: () => unknown): void }, boundMs: number) {
  const base = await startServer(t, boundMs);
  const calls: string[] = [];
  const a = await connectAgent(base, {
    "ClientCSI.ControllerValidateVolume": async () => ({}),
    "ClientCSI.ControllerPublishVolume": async () => {
      calls.push("publish");
      return { PublishContext: {} };
    },
    "ClientCSI.ControllerUnpublishVolume": async () => {
      calls.push("unpublish");
      return {};
    },
  });
  const b = await connectAgent(base);
  t.after(() => a.close());
  t.after(() => b.close());
  await a.call("Node.Register", {
    Node: makeNode("A", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } }),
  });
  await b.call("Node.Register", {
    Node: makeNode("B", {
      CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }, { ID: "ext-B" }) },
    }),
  });
  const stopA = keepAlive(t, a, "A");
  keepAlive(t, b, "B");
  assert.equal((await plugin(base)).ControllerRequired, true);

  const vol = await http(base, "PUT", "/v1/volume/csi/vol1", {
    Volumes: [
      {
        ID: "vol1",
        Name: "vol1",
        PluginID: "p1",
        ExternalID: "ext-vol1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(vol.status, 200, vol.text);
  const job = await http(base, "PUT", "/v1/jobs", {
    Job: {
      ID: "web",
      TaskGroups: [
        {
          Name: "g",
          Volumes: {
            data: {
              Type: "csi",
              Source: "vol1",
              AccessMode: "single-node-writer",
              AttachmentMode: "file-system",
            },
          },
          Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
        },
      ],
    },
  });
  assert.equal(job.status, 200, job.text);
  const allocs = (await http(base, "GET", "/v1/job/web/allocations")).json as {
    ID: string;
    NodeID: string;
  }[];
  assert.deepEqual(
    allocs.map((x) => x.NodeID),
    ["B"],
  );
  const claimReq = {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocs[0]!.ID,
    NodeID: "B",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  } as const;
  return { base, a, b, calls, stopA, claimReq };
}

test("a down node's controller never gates claims or releases through its plugin", async (t) => {
  // The bound is far away: this is the state right after the controller's node went down.
  const c = await cluster(t, 60 * 60_000);
  await c.b.call("CSIVolume.Claim", c.claimReq);
  assert.deepEqual(c.calls, ["publish"], "published through A's controller while A was up");

  await c.stopA();
  await until("node A down", async () => ((await nodeStatus(c.base, "A")) === "down" ? true : undefined));
  // The release goes through (no ControllerUnpublish nothing could take) and the volume is free.
  const release = { ...c.claimReq, State: "node-detached" } as const;
  await c.b.call("CSIVolume.Unpublish", release);
  const freed = await http(c.base, "GET", "/v1/volume/csi/vol1");
  assert.deepEqual([freed.json.WriteAllocs, freed.json.PastClaims], [{}, {}]);
  assert.equal(freed.json.Schedulable, true);

  // A new claim goes through too, without a ControllerPublish.
  await c.b.call("CSIVolume.Claim", c.claimReq);
  assert.deepEqual(c.calls, ["publish"]);
  const claimed = await http(c.base, "GET", "/v1/volume/csi/vol1");
  assert.deepEqual(Object.keys(claimed.json.WriteAllocs), [c.claimReq.AllocationID]);

  // A's entry stays on the record (unhealthy, "node is down") until the bound, saying nothing.
  const p = await plugin(c.base);
  assert.deepEqual(p.Controllers.A, {
    ...p.Controllers.A,
    Healthy: false,
    HealthDescription: "node is down",
  });
  assert.equal(p.ControllerRequired, false, "A's attach/detach no longer speaks for the plugin");
  assert.equal(await nodeStatus(c.base, "B"), "ready");
});

test("a node down past the bound leaves the plugin record; it comes back with the node", async (t) => {
  const c = await cluster(t, 300);
  await c.stopA();
  await until("A's controller off the plugin record", async () => {
    const p = await plugin(c.base);
    return p.Controllers.A === undefined ? p : undefined;
  });
  assert.equal(await nodeStatus(c.base, "A"), "down");
  const node = await http(c.base, "GET", "/v1/node/A");
  assert.ok(node.json.CSIControllerPlugins.p1, "the node keeps its own fingerprint");

  // A heartbeats again: its controller is back on the record and speaks for the plugin.
  const again = keepAlive(t, c.a, "A");
  const back = await until("A's controller back", async () => {
    const p = await plugin(c.base);
    return p.Controllers.A?.Healthy ? p : undefined;
  });
  assert.equal(back.ControllerRequired, true);
  assert.equal(back.ControllersHealthy, 1);
  await again();
});

test("a controller that replaced the departed one is what the plugin requires", async (t) => {
  const c = await cluster(t, 60 * 60_000);
  await c.stopA();
  await until("node A down", async () => ((await nodeStatus(c.base, "A")) === "down" ? true : undefined));
  // The plugin's controller now runs on C, a version without attach/detach.
  const cAgent = await connectAgent(c.base);
  t.after(() => cAgent.close());
  await cAgent.call("Node.Register", {
    Node: makeNode("C", { CSIControllerPlugins: { p1: controllerInfo("p1", false) } }),
  });
  keepAlive(t, cAgent, "C");

  // No ControllerPublish is asked of a controller that cannot attach: the claim goes through.
  await c.b.call("CSIVolume.Claim", c.claimReq);
  await c.b.call("CSIVolume.Unpublish", { ...c.claimReq, State: "node-detached" });
  assert.deepEqual(c.calls, []);
  const p = await plugin(c.base);
  assert.deepEqual([p.ControllerRequired, p.ControllersHealthy], [false, 1]);
});
