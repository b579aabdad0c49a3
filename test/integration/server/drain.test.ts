/**
 * Node drain through the real server over HTTP, with fake node agents A and B (both running node
 * plugin p1) that report their allocs and drive the volume release themselves: on a drain of A the
 * volume's user is stopped first, the node plugin (a system job) only once the user's claim is
 * released, the user's replacement lands on B, and the drain completes with A ineligible. Also: the
 * deadline, a forced drain, input validation, and a server restart in the middle of a drain.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as tick } from "node:timers/promises";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { freePort } from "../../helpers/agent_process.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, type AgentPeer } from "./fake_agent.js";

interface NodeView {
  Drain: boolean;
  SchedulingEligibility: string;
  DrainStrategy: { Deadline: number; IgnoreSystemJobs: boolean; ForceDeadline: string } | null;
  LastDrain: { Status: string; Meta: Record<string, string> | null } | null;
}

interface AllocView {
  ID: string;
  Name: string;
  NodeID: string;
  JobID: string;
  DesiredStatus: string;
  ClientStatus: string;
  DesiredTransition?: { Migrate?: boolean | null };
}

/** A fake node agent: registers with node plugin p1, heartbeats, and does what the test tells it. */
class Agent {
  peer!: AgentPeer;
  private beat: NodeJS.Timeout | undefined;

  constructor(
    private readonly base: string,
    readonly id: string,
  ) {}

  async connect(): Promise<this> {
    this.peer = await connectAgent(this.base);
    await this.peer.call("Node.Register", {
      Node: makeNode(this.id, { CSINodePlugins: { p1: nodePluginInfo("p1", {}, { ID: `ext-${this.id}` }) } }),
    });
    const peer = this.peer;
    this.beat = setInterval(() => {
      peer.call("Node.Heartbeat", { NodeID: this.id }).catch(() => undefined);
    }, 200);
    return this;
  }

  disconnect(): void {
    clearInterval(this.beat);
    this.peer?.close();
  }

  async report(allocId: string, status: "running" | "complete"): Promise<void> {
    await this.peer.call("Node.UpdateAllocs", {
      NodeID: this.id,
      Allocs: [{ ID: allocId, ClientStatus: status, ClientDescription: "", TaskStates: {} }],
    });
  }

  async claim(allocId: string): Promise<void> {
    await this.peer.call("CSIVolume.Claim", {
      VolumeID: "vol1",
      Namespace: "default",
      AllocationID: allocId,
      NodeID: this.id,
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
  }

  /** What the agent's csi_hook does after NodeUnpublish/NodeUnstage: hand the claim back. */
  async release(allocId: string): Promise<void> {
    await this.peer.call("CSIVolume.Unpublish", {
      VolumeID: "vol1",
      Namespace: "default",
      AllocationID: allocId,
      NodeID: this.id,
      State: "node-detached",
    });
  }
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(20);
  }
}

const pluginGroup = (name: string, node: string) => ({
  Name: name,
  Constraints: [{ LTarget: "${node.unique.id}", RTarget: node, Operand: "=" }],
  Tasks: [{ Name: "plugin", Driver: "exec", CSIPluginConfig: { ID: "p1", Type: "node", MountDir: "/csi" } }],
});

const webJob = {
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
};

/**
 * A server (on `dir`'s state file when given) on a fixed port, agents A and B, volume vol1, the
 * node plugin system job "nodes" (group "a" on A, "b" on B) and the service job "web" on A using
 * vol1, every alloc reported running and web's claim taken.
 */
async function setup(t: { after(fn: () => unknown): void }, dir: string | null = null) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let server: Server | undefined;
  const agents: Agent[] = [];
  const start = async () => {
    server = new Server({
      dataDir: dir,
      httpAddr: `127.0.0.1:${port}`,
      log: nullLogger,
      heartbeatTtlMs: 60_000,
      drainer: { settleMs: 10 },
    });
    await server.start();
  };
  const stop = async () => {
    for (const a of agents) a.disconnect();
    await server?.stop();
    server = undefined;
  };
  t.after(stop);
  await start();
  const connect = async () => {
    agents.splice(0);
    agents.push(await new Agent(base, "A").connect(), await new Agent(base, "B").connect());
    return { a: agents[0]!, b: agents[1]! };
  };
  const { a, b } = await connect();
  const ok = async <T = unknown>(method: string, route: string, body?: unknown): Promise<T> => {
    const r = await http(base, method, route, body);
    assert.equal(r.status, 200, `${method} ${route}: ${r.text}`);
    return r.json as T;
  };
  await ok("PUT", "/v1/volume/csi/vol1", {
    Volumes: [
      {
        ID: "vol1",
        PluginID: "p1",
        ExternalID: "ext-vol1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
  // B is ineligible while the jobs are placed, so web lands on A.
  await ok("POST", "/v1/node/B/eligibility", { Eligibility: "ineligible" });
  await ok("PUT", "/v1/jobs", {
    Job: { ID: "nodes", Type: "system", TaskGroups: [pluginGroup("a", "A"), pluginGroup("b", "B")] },
  });
  await ok("PUT", "/v1/jobs", { Job: webJob });
  await ok("POST", "/v1/node/B/eligibility", { Eligibility: "eligible" });
  const allocs = (job: string) => ok<AllocView[]>("GET", `/v1/job/${job}/allocations`);
  const one = async (job: string, name: string) => {
    const found = (await allocs(job)).filter((x) => x.Name === name && x.DesiredStatus === "run");
    assert.equal(found.length, 1, `${name}: ${JSON.stringify(await allocs(job))}`);
    return found[0]!;
  };
  const web = await one("web", "web.g[0]");
  const pluginA = await until("the plugin group b to be placed", async () =>
    (await allocs("nodes")).length === 2 ? one("nodes", "nodes.a[0]") : undefined,
  );
  const pluginB = await one("nodes", "nodes.b[0]");
  assert.deepEqual([web.NodeID, pluginA.NodeID, pluginB.NodeID], ["A", "A", "B"]);
  await a.report(pluginA.ID, "running");
  await b.report(pluginB.ID, "running");
  await a.report(web.ID, "running");
  await a.claim(web.ID);
  return {
    base,
    ok,
    allocs,
    get: (id: string) => ok<AllocView>("GET", `/v1/allocation/${id}`),
    node: (id: string) => ok<NodeView>("GET", `/v1/node/${id}`),
    agents: () => ({ a: agents[0]!, b: agents[1]! }),
    restart: async () => {
      await stop();
      await start();
      return connect();
    },
    web,
    pluginA,
    pluginB,
  };
}

const migrating = (x: AllocView) => x.DesiredStatus === "stop" && x.DesiredTransition?.Migrate === true;

test("drain: the volume's user stops first, the node plugin once the claim is released; A ends ineligible", async (t) => {
  const c = await setup(t);
  const { a } = c.agents();

  const drained = await c.ok<{ NodeModifyIndex: number }>("POST", "/v1/node/A/drain", {
    DrainSpec: { Deadline: 0, IgnoreSystemJobs: false },
  });
  assert.ok(drained.NodeModifyIndex > 0);
  const node = await c.node("A");
  assert.equal(node.Drain, true);
  assert.equal(node.SchedulingEligibility, "ineligible");
  assert.deepEqual(
    [node.DrainStrategy?.Deadline, node.DrainStrategy?.IgnoreSystemJobs, node.DrainStrategy?.ForceDeadline],
    [0, false, "0001-01-01T00:00:00Z"],
  );
  const list = await c.ok<{ ID: string; Drain: boolean }[]>("GET", "/v1/nodes");
  assert.deepEqual(
    list.map((n) => [n.ID, n.Drain]),
    [
      ["A", true],
      ["B", false],
    ],
  );

  await until("web to be marked for migration", async () =>
    migrating(await c.get(c.web.ID)) ? true : undefined,
  );
  assert.equal((await c.get(c.pluginA.ID)).DesiredStatus, "run", "the plugin stays while web runs");
  await a.report(c.web.ID, "complete");
  await tick(300);
  assert.equal(
    (await c.get(c.pluginA.ID)).DesiredStatus,
    "run",
    "the plugin stays while web's claim is held",
  );
  assert.equal(
    (await c.allocs("web")).filter((x) => x.DesiredStatus === "run").length,
    0,
    "the replacement waits for the single-node-writer claim on A",
  );
  assert.equal((await c.node("A")).Drain, true);

  await a.release(c.web.ID);
  await until("the plugin on A to be marked", async () =>
    migrating(await c.get(c.pluginA.ID)) ? true : undefined,
  );
  const replacement = (await c.allocs("web")).find((x) => x.DesiredStatus === "run");
  assert.equal(replacement?.NodeID, "B", "web moved to B");
  assert.equal((await c.get(c.pluginB.ID)).DesiredStatus, "run", "B's plugin is untouched");
  assert.equal((await c.allocs("nodes")).length, 2, "the system alloc is not replaced anywhere");

  await a.report(c.pluginA.ID, "complete");
  const done = await until("the drain to complete", async () => {
    const n = await c.node("A");
    return n.Drain ? undefined : n;
  });
  assert.equal(done.DrainStrategy, null);
  assert.equal(done.SchedulingEligibility, "ineligible");
  assert.equal(done.LastDrain?.Status, "complete");
  const onA = await c.ok<AllocView[]>("GET", "/v1/node/A/allocations");
  assert.deepEqual(onA.map((x) => x.ClientStatus).sort(), ["complete", "complete"]);

  // Scheduling on A again: the system job's slot is placed back there.
  await c.ok("POST", "/v1/node/A/eligibility", { Eligibility: "eligible" });
  const back = (await c.allocs("nodes")).filter((x) => x.Name === "nodes.a[0]" && x.DesiredStatus === "run");
  assert.deepEqual(
    back.map((x) => x.NodeID),
    ["A"],
  );
});

test("drain: bad input answers 400 naming the field; unknown nodes 404; a draining node stays ineligible", async (t) => {
  const c = await setup(t);
  const bad = async (route: string, body: unknown, field: RegExp) => {
    const r = await http(c.base, "POST", route, body);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, field);
  };
  await bad("/v1/node/A/drain", { DrainSpec: { Deadline: "1h" } }, /^DrainSpec\.Deadline: /);
  await bad(
    "/v1/node/A/drain",
    { DrainSpec: { Deadline: 1, IgnoreSystemJobs: "y" } },
    /^DrainSpec\.IgnoreSystemJobs/,
  );
  await bad("/v1/node/A/drain", { DrainSpec: null, MarkEligible: "true" }, /^MarkEligible: /);
  await bad("/v1/node/A/drain", "[]", /^body: /);
  await bad("/v1/node/A/eligibility", { Eligibility: "maybe" }, /^Eligibility: unknown/);
  await bad("/v1/node/A/eligibility", {}, /^Eligibility: is required/);
  await bad("/v1/node/..%2Fx/drain", { DrainSpec: null }, /^id: /);
  assert.equal((await c.node("A")).Drain, false, "refused requests changed nothing");
  assert.equal((await http(c.base, "POST", "/v1/node/nope/drain", { DrainSpec: null })).status, 404);
  assert.equal(
    (await http(c.base, "POST", "/v1/node/nope/eligibility", { Eligibility: "eligible" })).status,
    404,
  );
  assert.equal((await http(c.base, "GET", "/v1/node/nope/allocations")).status, 404);

  await c.ok("POST", "/v1/node/A/drain", { DrainSpec: { Deadline: 0 } });
  await bad("/v1/node/A/eligibility", { Eligibility: "eligible" }, /^Eligibility: .*draining/);
  // Cancel with MarkEligible: the node takes work again; what was already marked still moves.
  await c.ok("POST", "/v1/node/A/drain", { DrainSpec: null, MarkEligible: true, Meta: { why: "oops" } });
  const n = await c.node("A");
  assert.deepEqual([n.Drain, n.SchedulingEligibility, n.LastDrain?.Status], [false, "eligible", "canceled"]);
  assert.deepEqual(n.LastDrain?.Meta, { why: "oops" });
});

test("drain: -1 forces everything now; a deadline stops the plugin even while a claim is held", async (t) => {
  const c = await setup(t);
  await c.ok("POST", "/v1/node/A/drain", { DrainSpec: { Deadline: 600e6 } });
  await until("web to be marked", async () => (migrating(await c.get(c.web.ID)) ? true : undefined));
  assert.equal((await c.get(c.pluginA.ID)).DesiredStatus, "run", "before the deadline the plugin waits");
  const done = await until("the deadline to end the drain", async () => {
    const n = await c.node("A");
    return n.Drain ? undefined : n;
  });
  assert.ok(migrating(await c.get(c.pluginA.ID)), "the deadline stopped the plugin");
  assert.equal(done.LastDrain?.Status, "complete", "every alloc was told to stop");
  assert.equal(
    (await c.get(c.web.ID)).ClientStatus,
    "running",
    "even though the agent has not stopped web yet",
  );
  assert.equal((await c.get(c.pluginB.ID)).DesiredStatus, "run");

  // B, forced: its plugin is marked at once (nothing else runs there).
  await c.ok("POST", "/v1/node/B/drain", { DrainSpec: { Deadline: -1 } });
  await until("B's plugin to be marked", async () =>
    migrating(await c.get(c.pluginB.ID)) ? true : undefined,
  );
});

test("drain: the drain survives a server restart and resumes where it stopped", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-drain-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const c = await setup(t, dir);
  await c.ok("POST", "/v1/node/A/drain", { DrainSpec: { Deadline: 0, IgnoreSystemJobs: false } });
  await until("web to be marked", async () => (migrating(await c.get(c.web.ID)) ? true : undefined));
  await c.agents().a.report(c.web.ID, "complete");

  const { a } = await c.restart();
  const node = await c.node("A");
  assert.equal(node.Drain, true, "the drain is in the node record");
  assert.equal(node.SchedulingEligibility, "ineligible", "re-registering does not make A eligible");
  await tick(300);
  assert.equal(
    (await c.get(c.pluginA.ID)).DesiredStatus,
    "run",
    "the claim still holds the plugin after restart",
  );

  await a.release(c.web.ID);
  await until("the plugin on A to be marked", async () =>
    migrating(await c.get(c.pluginA.ID)) ? true : undefined,
  );
  assert.equal((await c.allocs("web")).find((x) => x.DesiredStatus === "run")?.NodeID, "B");
  await a.report(c.pluginA.ID, "complete");
  await until("the drain to complete", async () => ((await c.node("A")).Drain ? undefined : true));
});
