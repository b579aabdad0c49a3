/**
 * Issue 10, "a departed controller poisons its plugin for a day": plugin p1's only controller
 * (attach/detach) runs on node A, its node plugin on node B. When A stops heartbeating and goes
 * down, A's entries no longer say what the plugin requires — new claims on B go on without a
 * controller nothing can reach — and once A has been down past the server's bound its instances
 * leave the plugin record (they come back with A). A claim A's controller did publish is another
 * matter: its release waits for a controller to run ControllerUnpublishVolume (the status says
 * so) and finishes through a replacement, never dropping the detach. Real parts: an in-process
 * server on loopback with a real SQLite state file, node agents on the real agent RPC path, real
 * heartbeat expiry, the real volumewatcher.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { setTimeout as sleep } from "node:timers/promises";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { connectAgent, http, type AgentPeer, type ClientHandlers } from "./fake_agent.js";

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

/** A controller's ClientCSI handlers, recording "publish"/"unpublish" (+ `suffix`) in `calls`. */
function controllerHandlers(calls: string[], suffix: string): ClientHandlers {
  return {
    "ClientCSI.ControllerValidateVolume": async () => ({}),
    "ClientCSI.ControllerPublishVolume": async () => {
      calls.push(`publish${suffix}`);
      return { PublishContext: {} };
    },
    "ClientCSI.ControllerUnpublishVolume": async () => {
      calls.push(`unpublish${suffix}`);
      return {};
    },
  };
}

interface ClaimView {
  State: string;
  ReleaseStatus?: { Step: string; LastError: string } | null;
}

async function volume(base: string, id: string) {
  const v = await http(base, "GET", `/v1/volume/csi/${id}?claims=true`);
  assert.equal(v.status, 200, v.text);
  return v.json as {
    WriteAllocs: Record<string, null>;
    PastClaims: Record<string, ClaimView>;
    Schedulable: boolean;
  };
}

async function registerVolume(base: string, id: string): Promise<void> {
  const vol = await http(base, "PUT", `/v1/volume/csi/${id}`, {
    Volumes: [
      {
        ID: id,
        Name: id,
        PluginID: "p1",
        ExternalID: `ext-${id}`,
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  assert.equal(vol.status, 200, vol.text);
}

/** A with the controller, B with the node plugin, vol1 registered, a job placed on B. */
async function cluster(t: { after(fn: () => unknown): void }, boundMs: number) {
  const base = await startServer(t, boundMs);
  const calls: string[] = [];
  const a = await connectAgent(base, controllerHandlers(calls, ""));
  // B's node plugin unmounts when asked (the node step of a detach or a forced deregister).
  const b = await connectAgent(base, {
    "ClientCSI.NodeDetachVolume": async () => {
      calls.push("node-detach");
      return {};
    },
  });
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

  await registerVolume(base, "vol1");
  const claimReq = await placeOnB(base, "web", "vol1");
  return { base, a, b, calls, stopA, claimReq };
}

/** Runs job `id` using `volume`; answers the claim its alloc (placed on B) makes. */
async function placeOnB(base: string, id: string, volume: string) {
  const job = await http(base, "PUT", "/v1/jobs", {
    Job: {
      ID: id,
      TaskGroups: [
        {
          Name: "g",
          Volumes: {
            data: {
              Type: "csi",
              Source: volume,
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
  const allocs = (await http(base, "GET", `/v1/job/${id}/allocations`)).json as {
    ID: string;
    NodeID: string;
  }[];
  assert.deepEqual(
    allocs.map((x) => x.NodeID),
    ["B"],
  );
  return {
    VolumeID: volume,
    Namespace: "default",
    AllocationID: allocs[0]!.ID,
    NodeID: "B",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  } as const;
}

test("a down node's controller never gates new claims; a claim it published waits for a replacement to unpublish", async (t) => {
  // The bound is far away: this is the state right after the controller's node went down.
  const c = await cluster(t, 60 * 60_000);
  await c.b.call("CSIVolume.Claim", c.claimReq);
  assert.deepEqual(c.calls, ["publish"], "published through A's controller while A was up");

  await c.stopA();
  await until("node A down", async () => ((await nodeStatus(c.base, "A")) === "down" ? true : undefined));
  // A's entry stays on the record (unhealthy, "node is down") until the bound, saying nothing.
  const p = await plugin(c.base);
  assert.deepEqual(p.Controllers.A, {
    ...p.Controllers.A,
    Healthy: false,
    HealthDescription: "node is down",
  });
  assert.equal(p.ControllerRequired, false, "A's attach/detach no longer speaks for the plugin");

  // A volume A never published is claimed and released on B without any controller call.
  await registerVolume(c.base, "vol2");
  // A node claims only what its allocs request: a job of its own for vol2.
  const claim2 = await placeOnB(c.base, "web2", "vol2");
  await c.b.call("CSIVolume.Claim", claim2);
  await c.b.call("CSIVolume.Unpublish", { ...claim2, State: "node-detached" });
  const free2 = await volume(c.base, "vol2");
  assert.deepEqual([free2.WriteAllocs, free2.PastClaims], [{}, {}]);
  assert.deepEqual(c.calls, ["publish"]);

  // vol1 was attached to B by A's controller: its release does not drop the detach, it waits.
  const release = { ...c.claimReq, State: "node-detached" } as const;
  await assert.rejects(c.b.call("CSIVolume.Unpublish", release), (err: Error & { code?: string }) => {
    assert.equal(err.code, "ERR_CSI_PLUGIN_UNAVAILABLE");
    assert.match(err.message, /waiting for a controller of plugin "p1" to run ControllerUnpublishVolume/);
    return true;
  });
  const waiting = await until("the watcher to record what the release waits for", async () => {
    const v = await volume(c.base, "vol1");
    return v.PastClaims[c.claimReq.AllocationID]?.ReleaseStatus ? v : undefined;
  });
  const st = waiting.PastClaims[c.claimReq.AllocationID]!;
  assert.equal(st.State, "node-detached");
  assert.equal(st.ReleaseStatus!.Step, "controller-unpublish");
  assert.match(st.ReleaseStatus!.LastError, /waiting for a controller of plugin "p1"/);
  assert.equal("ControllerPublishPluginID" in st, false, "berth's bookkeeping stays out of the API");
  assert.deepEqual(c.calls, ["publish"]);

  // `volume detach` runs the same walk: with no controller it answers 503 with the same reason and
  // changes nothing (a detach never pretends one happened). The job is stopped first.
  assert.equal((await http(c.base, "DELETE", "/v1/job/web")).status, 200);
  const r = await http(c.base, "DELETE", "/v1/volume/csi/vol1/detach?node=B");
  assert.equal(r.status, 503, r.text);
  assert.match(r.text, /waiting for a controller of plugin "p1" to run ControllerUnpublishVolume/);
  const still = await volume(c.base, "vol1");
  assert.equal(still.PastClaims[c.claimReq.AllocationID]?.State, "node-detached", "nothing changed");
  assert.deepEqual(c.calls, ["publish"]);

  // A replacement controller (rescheduled on C) takes the detach: exactly one, then the claim frees.
  const cAgent = await connectAgent(c.base, controllerHandlers(c.calls, "@C"));
  t.after(() => cAgent.close());
  await cAgent.call("Node.Register", {
    Node: makeNode("C", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } }),
  });
  keepAlive(t, cAgent, "C");
  const freed = await until("the release to finish through C", async () => {
    const v = await volume(c.base, "vol1");
    return Object.keys(v.PastClaims).length === 0 ? v : undefined;
  });
  assert.deepEqual(freed.WriteAllocs, {});
  assert.equal(freed.Schedulable, true);
  assert.deepEqual(c.calls, ["publish", "unpublish@C"]);
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

  // A comes back. The server dropped its connection once it was silent for a TTL (as for a node
  // cut off without a reset), so A connects and registers again, as an agent does, then
  // heartbeats: its controller is back on the record and speaks for the plugin.
  const a2 = await connectAgent(c.base, controllerHandlers([], ""));
  t.after(() => a2.close());
  await a2.call("Node.Register", {
    Node: makeNode("A", { CSIControllerPlugins: { p1: controllerInfo("p1", true) } }),
  });
  const again = keepAlive(t, a2, "A");
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

test("a release owed a detach waits even when its plugin's record is gone altogether", async (t) => {
  const c = await cluster(t, 300);
  await c.b.call("CSIVolume.Claim", c.claimReq);
  assert.deepEqual(c.calls, ["publish"]);
  await c.stopA();
  await until("A's controller off the plugin record", async () => {
    const p = await plugin(c.base);
    return p.Controllers.A === undefined ? true : undefined;
  });
  // B's node plugin stops too: no instance and no job, so the plugin record is deleted.
  await c.b.call("Node.UpdateFingerprint", {
    NodeID: "B",
    Drivers: makeNode("B").Drivers,
    CSIControllerPlugins: {},
    CSINodePlugins: {},
  });
  await until("the plugin record to go", async () =>
    (await http(c.base, "GET", "/v1/plugin/csi/p1")).status === 404 ? true : undefined,
  );
  // Not "nothing to release": the claim waits for a controller of p1.
  await assert.rejects(
    c.b.call("CSIVolume.Unpublish", { ...c.claimReq, State: "node-detached" }),
    (err: Error & { code?: string }) => {
      assert.equal(err.code, "ERR_CSI_PLUGIN_UNAVAILABLE");
      assert.match(err.message, /waiting for a controller of plugin "p1".*no instance left/);
      return true;
    },
  );
  const v = await volume(c.base, "vol1");
  assert.equal(v.PastClaims[c.claimReq.AllocationID]?.State, "node-detached");
  assert.deepEqual(c.calls, ["publish"]);
});

test("forced deregister with no controller left drops the volume and names what may stay attached; detach stays 503", async (t) => {
  const c = await cluster(t, 60 * 60_000);
  await c.b.call("CSIVolume.Claim", c.claimReq);
  await c.stopA();
  await until("node A down", async () => ((await nodeStatus(c.base, "A")) === "down" ? true : undefined));

  // Refused while the alloc runs, forced or not.
  const running = await http(c.base, "DELETE", "/v1/volume/csi/vol1?force=true");
  assert.equal(running.status, 409, running.text);
  assert.equal((await http(c.base, "DELETE", "/v1/job/web")).status, 200);
  // Without -force: in use, nothing changes.
  const plain = await http(c.base, "DELETE", "/v1/volume/csi/vol1");
  assert.equal(plain.status, 409, plain.text);
  const detach = await http(c.base, "DELETE", "/v1/volume/csi/vol1/detach?node=B");
  assert.equal(detach.status, 503, detach.text);
  assert.ok(
    (await http(c.base, "GET", "/v1/volume/csi/vol1?claims=true")).status === 200,
    "detach changed nothing",
  );

  // Forced: the node step runs, the controller step cannot; the volume and its claim are dropped
  // and the answer names the node and the external ID that may still be attached there.
  const forced = await http(c.base, "DELETE", "/v1/volume/csi/vol1?force=true");
  assert.equal(forced.status, 200, forced.text);
  const warnings = forced.json.Warnings as string[];
  assert.equal(warnings.length, 1, forced.text);
  assert.match(warnings[0]!, /"ext-vol1".*may still be attached on node B/);
  assert.equal(typeof forced.json.Index, "number");
  assert.equal((await http(c.base, "GET", "/v1/volume/csi/vol1?claims=true")).status, 404);
  assert.deepEqual(c.calls, ["publish", "node-detach"], "no controller call was made or pretended");
});

test("forced deregister while a controller is alive still runs exactly one ControllerUnpublish", async (t) => {
  const c = await cluster(t, 60 * 60_000);
  await c.b.call("CSIVolume.Claim", c.claimReq);
  assert.equal((await http(c.base, "DELETE", "/v1/job/web")).status, 200);
  const forced = await http(c.base, "DELETE", "/v1/volume/csi/vol1?force=true");
  assert.equal(forced.status, 200, forced.text);
  assert.equal(forced.json.Warnings, undefined, "nothing left behind");
  assert.equal((await http(c.base, "GET", "/v1/volume/csi/vol1?claims=true")).status, 404);
  assert.deepEqual(c.calls, ["publish", "node-detach", "unpublish"]);
});
