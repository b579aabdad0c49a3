/**
 * Node identity on the agent RPC, against a real in-process server over real WebSockets: a node
 * proves itself with the secret it registered with, a connection that cannot is refused and
 * changes nothing, and a node acts only for its own allocations (issue 12's impersonation
 * reproduction: a fake node with a live node's ID got volume secrets, disconnected the real node
 * and freed its claim).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { Server } from "../../../src/server/server.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { createLogger, nullLogger } from "../../../src/internal/log.js";
import { ServerConnection } from "../../../src/client/rpc/server_conn.js";
import { isBerthError } from "../../../src/structs/errors.js";
import { hashNodeSecret } from "../../../src/server/rpc/node_auth.js";
import type { NodeAuthLimits } from "../../../src/server/rpc/node_auth_limit.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { eventually } from "../../helpers/agent_process.js";
import { connectAgent, fakeNodeSecret, getJson, http, put, type AgentPeer, type Call } from "./fake_agent.js";

const SECRET_WORD = "hunter2";

async function startServer(
  t: { after(fn: () => unknown): void },
  opts: { limits?: Partial<NodeAuthLimits>; dataDir?: string } = {},
): Promise<string> {
  const server = new Server({
    dataDir: opts.dataDir ?? null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    ...(opts.limits ? { limits: opts.limits } : {}),
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

/** A fake agent that records every server → node call it gets (a rogue must get none). */
async function agent(base: string, secret?: string | null) {
  const calls: Call[] = [];
  const record =
    (method: string, answer: unknown) =>
    async (params: unknown): Promise<never> => {
      calls.push({ method, params });
      return answer as never;
    };
  const peer = await connectAgent(
    base,
    {
      "ClientCSI.ControllerCreateVolume": record("create", {
        ExternalVolumeID: "ext-new",
        CapacityBytes: 1024,
        VolumeContext: {},
        Topologies: [],
      }),
      "ClientCSI.ControllerPublishVolume": record("publish", { PublishContext: { dev: "/dev/x" } }),
      "ClientCSI.ControllerUnpublishVolume": record("unpublish", {}),
      "ClientCSI.ControllerValidateVolume": record("validate", {}),
      "ClientCSI.ControllerDeleteVolume": record("delete", {}),
    },
    secret === undefined ? {} : { secret },
  );
  return { peer, calls };
}

/** A node with a node plugin for p1 (and its controller when `controller`). */
function nodeRecord(id: string, controller: boolean) {
  return makeNode(id, {
    CSIControllerPlugins: controller ? { p1: controllerInfo("p1", true) } : {},
    CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }, { ID: `ext-${id}` }) },
  });
}

async function registerVolume(base: string, id: string): Promise<void> {
  await put(base, `/v1/volume/csi/${id}`, {
    Volumes: [
      {
        ID: id,
        Name: id,
        PluginID: "p1",
        ExternalID: `ext-${id}`,
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
        Secrets: { password: SECRET_WORD },
        MountOptions: { FSType: "ext4", MountFlags: [`pw=${SECRET_WORD}`] },
      },
    ],
  });
}

async function runJob(base: string, id: string, volume: string): Promise<{ ID: string; NodeID: string }> {
  await put(base, "/v1/jobs", {
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
  const allocs = await getJson<{ ID: string; NodeID: string }[]>(base, `/v1/job/${id}/allocations`);
  assert.equal(allocs.length, 1, `job ${id} is placed`);
  return allocs[0]!;
}

function claimReq(alloc: { ID: string }, nodeId: string, volume = "vol1") {
  return {
    VolumeID: volume,
    Namespace: "default",
    AllocationID: alloc.ID,
    NodeID: nodeId,
    Mode: "write" as const,
    AccessMode: "single-node-writer" as const,
    AttachmentMode: "file-system" as const,
  };
}

/** Asserts `p` fails with `code` and (optionally) a message matching `re`. */
async function refused(p: Promise<unknown>, code: string, re?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(isBerthError(err), String(err));
    assert.equal(err.code, code, err.message);
    if (re) assert.match(err.message, re);
    return true;
  });
}

async function claimsOf(base: string, volume: string): Promise<string[]> {
  const v = await getJson<{ WriteAllocs: Record<string, unknown> }>(
    base,
    `/v1/volume/csi/${volume}?claims=true`,
  );
  return Object.keys(v.WriteAllocs);
}

test("a node's secret is bound at its first registration and never leaves the server", async (t) => {
  const base = await startServer(t);
  const n1 = await agent(base);
  t.after(() => n1.peer.close());
  await n1.peer.call("Node.Register", { Node: nodeRecord("n1", true) });

  const secret = fakeNodeSecret("n1");
  for (const route of ["/v1/node/n1", "/v1/nodes", "/v1/nodes?filter=ID%20%3D%3D%20%22n1%22"]) {
    const res = await http(base, "GET", route);
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes(secret), `${route} does not show the secret`);
    assert.ok(!res.text.includes(hashNodeSecret(secret)), `${route} does not show its hash`);
    assert.ok(!/Secret/i.test(res.text), `${route} has no secret field`);
  }

  // No secret at all, even for a node ID nobody holds: refused, and no node is created.
  const bare = await agent(base, null);
  await refused(
    bare.peer.call("Node.Register", { Node: nodeRecord("fresh", false) }),
    "ERR_PERMISSION_DENIED",
    /Node.SecretID is required/,
  );
  assert.equal((await http(base, "GET", "/v1/node/fresh")).status, 404);
  // The refused connection is closed by the server.
  await refused(bare.peer.call("Node.Heartbeat", { NodeID: "fresh" }), "ERR_RPC_UNAVAILABLE");
});

test("impersonation: a fake node with a live node's ID gets no secret, cannot disconnect it, cannot free its claim", async (t) => {
  const base = await startServer(t);
  const real = await agent(base);
  t.after(() => real.peer.close());
  await real.peer.call("Node.Register", { Node: nodeRecord("n1", true) });
  await registerVolume(base, "vol1");
  const alloc = await runJob(base, "web", "vol1");
  assert.equal(alloc.NodeID, "n1");
  const claimed = await real.peer.call("CSIVolume.Claim", claimReq(alloc, "n1"));
  assert.deepEqual(
    claimed.Volume.Secrets,
    { password: SECRET_WORD },
    "the real node gets its volume's secrets",
  );
  await real.peer.call("Node.UpdateAllocs", {
    NodeID: "n1",
    Allocs: [{ ID: alloc.ID, ClientStatus: "running", ClientDescription: "", TaskStates: {} }],
  });
  const before = await getJson<{ ModifyIndex: number; Status: string }>(base, "/v1/node/n1");

  // The reproduction: register under the live node's ID, with a wrong secret and with none.
  const rogues = [await agent(base, randomUUID()), await agent(base, null), await agent(base, "not-a-uuid")];
  t.after(() => rogues.forEach((r) => r.peer.close()));
  for (const rogue of rogues) {
    await refused(
      rogue.peer.call("Node.Register", { Node: nodeRecord("n1", true) }),
      "ERR_PERMISSION_DENIED",
      /node secret ID does not match|Node.SecretID/,
    );
  }
  // A connection that never registered cannot act as the node either.
  const silent = await agent(base);
  t.after(() => silent.peer.close());
  const notYet = /Node.Register first/;
  await refused(silent.peer.call("CSIVolume.Claim", claimReq(alloc, "n1")), "ERR_PERMISSION_DENIED", notYet);
  await refused(
    silent.peer.call("CSIVolume.Unpublish", { ...claimReq(alloc, "n1"), State: "node-detached" }),
    "ERR_PERMISSION_DENIED",
    notYet,
  );
  await refused(
    silent.peer.call("Node.UpdateAllocs", {
      NodeID: "n1",
      Allocs: [{ ID: alloc.ID, ClientStatus: "failed", ClientDescription: "", TaskStates: {} }],
    }),
    "ERR_PERMISSION_DENIED",
    notYet,
  );

  // Nothing changed: the node record, its alloc, the claim, and the real node's connection, over
  // which the server still sends controller calls (here a volume create) — to the real node only.
  const after = await getJson<{ ModifyIndex: number; Status: string }>(base, "/v1/node/n1");
  assert.equal(after.Status, "ready");
  assert.equal(after.ModifyIndex, before.ModifyIndex, "the refused registrations wrote nothing");
  const a = await getJson<{ ClientStatus: string }>(base, `/v1/allocation/${alloc.ID}`);
  assert.equal(a.ClientStatus, "running");
  assert.deepEqual(await claimsOf(base, "vol1"), [alloc.ID]);
  const created = await http(base, "PUT", "/v1/volume/csi/vol2/create", {
    Volumes: [
      {
        ID: "vol2",
        Name: "vol2",
        PluginID: "p1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
        Secrets: { password: SECRET_WORD },
      },
    ],
  });
  assert.equal(created.status, 200, created.text);
  assert.ok(
    real.calls.some((c) => c.method === "create"),
    "the real node still takes controller calls",
  );
  for (const r of [...rogues, silent]) assert.deepEqual(r.calls, [], "no rogue got any call, nor any secret");
  await real.peer.call("Node.Heartbeat", { NodeID: "n1" });
});

test("a node acts only for itself: its own allocs, the volumes they request, its own claims", async (t) => {
  const base = await startServer(t);
  const n1 = await agent(base);
  const n2 = await agent(base);
  t.after(() => {
    n1.peer.close();
    n2.peer.close();
  });
  await n1.peer.call("Node.Register", { Node: nodeRecord("n1", true) });
  await n2.peer.call("Node.Register", { Node: nodeRecord("n2", false) });
  await registerVolume(base, "vol1");
  await registerVolume(base, "vol2");
  const alloc = await runJob(base, "web", "vol1");
  const peers: Record<string, AgentPeer> = { n1: n1.peer, n2: n2.peer };
  const own = alloc.NodeID;
  const other = own === "n1" ? "n2" : "n1";

  // The other node, naming itself, cannot act for the alloc placed on `own`.
  await refused(
    peers[other]!.call("CSIVolume.Claim", claimReq(alloc, other)),
    "ERR_PERMISSION_DENIED",
    /does not run on node/,
  );
  await refused(
    peers[other]!.call("Node.UpdateAllocs", {
      NodeID: other,
      Allocs: [{ ID: alloc.ID, ClientStatus: "failed", ClientDescription: "", TaskStates: {} }],
    }),
    "ERR_PERMISSION_DENIED",
  );
  await refused(
    peers[other]!.call("CSIVolume.GetForNode", { VolumeID: "vol1", Namespace: "default", NodeID: other }),
    "ERR_PERMISSION_DENIED",
  );
  // …nor name the node it is not: the connection is bound to the node that registered on it.
  await refused(peers[other]!.call("CSIVolume.Claim", claimReq(alloc, own)), "ERR_PERMISSION_DENIED");
  await refused(
    peers[other]!.call("Node.UpdateFingerprint", {
      NodeID: own,
      Drivers: {},
      CSIControllerPlugins: {},
      CSINodePlugins: {},
    }),
    "ERR_PERMISSION_DENIED",
  );

  // The node that runs the alloc claims only the volume the alloc requests.
  await refused(
    peers[own]!.call("CSIVolume.Claim", claimReq(alloc, own, "vol2")),
    "ERR_PERMISSION_DENIED",
    /does not request volume "vol2"/,
  );
  assert.deepEqual(await claimsOf(base, "vol2"), []);
  const lookup = await peers[own]!.call("CSIVolume.GetForNode", {
    VolumeID: "vol1",
    Namespace: "default",
    NodeID: own,
  });
  assert.equal(lookup.PluginID, "p1");
  await peers[own]!.call("CSIVolume.Claim", claimReq(alloc, own));

  // The other node cannot release that claim.
  await refused(
    peers[other]!.call("CSIVolume.Unpublish", { ...claimReq(alloc, other), State: "ready-to-free" }),
    "ERR_PERMISSION_DENIED",
    /not held by node/,
  );
  assert.deepEqual(await claimsOf(base, "vol1"), [alloc.ID]);
  const a = await getJson<{ ClientStatus: string }>(base, `/v1/allocation/${alloc.ID}`);
  assert.equal(a.ClientStatus, "pending", "the other node's report changed nothing");
  // Both nodes are still connected and themselves.
  await n1.peer.call("Node.Heartbeat", { NodeID: "n1" });
  await n2.peer.call("Node.Heartbeat", { NodeID: "n2" });
});

/** Opens an agent RPC WebSocket from `from`: "open" or the refusal's status and error code. */
function upgradeFrom(base: string, from: string): Promise<{ ws: WebSocket; status: number; code?: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/agent/rpc", { localAddress: from });
    ws.on("error", () => undefined);
    ws.once("open", () => resolve({ ws, status: 101 }));
    ws.once("unexpected-response", (_req, res) =>
      resolve({ ws, status: res.statusCode ?? 0, code: String(res.headers["x-berth-error-code"]) }),
    );
  });
}

test("an address that fails node authentication too often is refused for a while; others are not", async (t) => {
  const base = await startServer(t, {
    limits: { rpcAuthFailureBurst: 2, rpcAuthFailureIntervalMs: 3_600_000 },
  });
  const real = await agent(base);
  t.after(() => real.peer.close());
  await real.peer.call("Node.Register", { Node: nodeRecord("n1", false) });

  for (let i = 0; i < 2; i++) {
    const rogue = await connectAgent(base, {}, { secret: randomUUID(), localAddress: "127.0.0.2" });
    t.after(() => rogue.close());
    await refused(rogue.call("Node.Register", { Node: nodeRecord("n1", false) }), "ERR_PERMISSION_DENIED");
  }
  const blocked = await upgradeFrom(base, "127.0.0.2");
  t.after(() => blocked.ws.terminate());
  assert.deepEqual([blocked.status, blocked.code], [429, "ERR_TOO_MANY_CONNECTIONS"]);

  const elsewhere = await upgradeFrom(base, "127.0.0.3");
  t.after(() => elsewhere.ws.terminate());
  assert.equal(elsewhere.status, 101, "another address is not limited");
  // The real node, on its own address, is untouched and can register again.
  await real.peer.call("Node.Register", { Node: nodeRecord("n1", false) });
  await real.peer.call("Node.Heartbeat", { NodeID: "n1" });
});

test("a node stored before secrets existed: the first registration with a secret binds it", async (t) => {
  const dir = tempDir("berth-node-identity-");
  const store = new SqliteStateStore(dir);
  await store.txn((tx) => {
    tx.putNode(nodeRecord("old", false));
  });
  store.close();
  const base = await startServer(t, { dataDir: dir });

  const first = await agent(base);
  t.after(() => first.peer.close());
  await first.peer.call("Node.Register", { Node: nodeRecord("old", false) });
  const other = await agent(base, randomUUID());
  t.after(() => other.peer.close());
  await refused(
    other.peer.call("Node.Register", { Node: nodeRecord("old", false) }),
    "ERR_PERMISSION_DENIED",
    /node secret ID does not match/,
  );
  await first.peer.call("Node.Heartbeat", { NodeID: "old" });
});

test("a node agent refused at the upgrade logs the server's code and makes no connection", async (t) => {
  const base = await startServer(t, {
    limits: { rpcAuthFailureBurst: 1, rpcAuthFailureIntervalMs: 3_600_000 },
  });
  const real = await agent(base);
  t.after(() => real.peer.close());
  await real.peer.call("Node.Register", { Node: nodeRecord("n1", false) });
  const rogue = await connectAgent(base, {}, { secret: randomUUID() });
  t.after(() => rogue.close());
  await refused(rogue.call("Node.Register", { Node: nodeRecord("n1", false) }), "ERR_PERMISSION_DENIED");

  // A real agent's connection from the same (now blocked) address.
  const lines: string[] = [];
  let registered = 0;
  const conn = new ServerConnection({
    servers: [base],
    log: createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } }),
    installHandlers: () => undefined,
    onConnect: () => {
      registered++;
      return Promise.resolve();
    },
  });
  conn.start();
  try {
    const refusedLine = await eventually(
      "the agent to log the refusal",
      () => Promise.resolve(lines.find((x) => x.includes("refuses connections from this address"))),
      15_000,
      20,
    );
    assert.match(refusedLine, /code=ERR_TOO_MANY_CONNECTIONS/);
    assert.match(refusedLine, /\(429\)/);
    assert.equal(registered, 0, "no connection was made");
    assert.equal(conn.connected, false);
  } finally {
    await conn.stop();
  }
});
