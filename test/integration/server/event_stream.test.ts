/**
 * The event stream on a real in-process server over real HTTP on loopback, with a node agent's real
 * RPC connection (fake_agent.ts): one volume followed from register through claim and release to
 * deregister, every event in index order; a reader that disconnects and resumes from its last
 * index sees no gap and no duplicate; topic, key and namespace filters; heartbeats; bad queries
 * answer 400 naming the parameter; secrets are redacted on the wire and never erased in the store.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import { makeNode } from "../../builders/node.js";
import { nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, type AgentPeer } from "./fake_agent.js";
import { decodeGo } from "../../nomadapi/go_decode.js";
import { NOMAD_SERVER_FIELDS } from "../../nomadapi/extra_fields.js";
import {
  endedWithin,
  eventFrames,
  hasEvent,
  openStream,
  type Frame,
  type OpenStream,
} from "./event_client.js";

const volumeSpec = (id: string, ns = "default") => ({
  ID: id,
  Namespace: ns,
  PluginID: "p1",
  ExternalID: `ext-${id}`,
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  Secrets: { password: "hunter2" },
  MountOptions: { FSType: "ext4", MountFlags: ["pw=hunter2"] },
});

const jobSpec = (id: string, volume: string) => ({
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
});

async function startWithNode(
  t: { after(fn: () => unknown): void },
  events = {},
): Promise<{ base: string; peer: AgentPeer }> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    events,
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const peer = await connectAgent(base);
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", { CSINodePlugins: { p1: nodePluginInfo("p1") } }),
  });
  return { base, peer };
}

function track(t: { after(fn: () => unknown): void }, s: OpenStream): OpenStream {
  t.after(() => s.close());
  return s;
}

/** Every frame's index rises, each event carries its frame's index, and no index repeats. */
function assertInOrder(s: OpenStream): void {
  const frames = eventFrames(s);
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    if (i > 0)
      assert.ok(f.Index > frames[i - 1]!.Index, `frame ${i} index ${f.Index} after ${frames[i - 1]!.Index}`);
    for (const e of f.Events) assert.equal(e.Index, f.Index);
  }
}

test("one volume from register to deregister: each event in index order; a reader resumes with no gap and no duplicate", async (t) => {
  const { base, peer } = await startWithNode(t);
  const whole = track(t, await openStream(base, "?topic=CSIVolume:vol1&topic=Job:web"));
  assert.equal(whole.status, 200);
  await whole.waitFor((f) => f.Index === undefined && f.Events === undefined);
  const part = track(t, await openStream(base, "?topic=CSIVolume:vol1&topic=Job:web"));

  const reg = await http(base, "PUT", "/v1/volume/csi/vol1", { Volumes: [volumeSpec("vol1")] });
  assert.equal(reg.status, 200, reg.text);
  const registered = await whole.waitFor(hasEvent("CSIVolumeRegistered", "vol1"));
  const ev = registered.Events![0]!;
  assert.deepEqual([ev.Topic, ev.Namespace, ev.FilterKeys], ["CSIVolume", "default", ["vol1", "vol1", "p1"]]);
  assert.equal(ev.Payload.Volume.ID, "vol1");
  assert.equal(ev.Payload.Volume.Secrets, null);
  assert.deepEqual(ev.Payload.Volume.MountOptions.MountFlags, ["[REDACTED]"]);

  const job = await http(base, "PUT", "/v1/jobs", { Job: jobSpec("web", "vol1") });
  assert.equal(job.status, 200, job.text);
  await whole.waitFor(hasEvent("JobRegistered", "web"));
  const allocs = await http(base, "GET", "/v1/job/web/allocations");
  const allocId = allocs.json[0].ID as string;

  await peer.call("CSIVolume.Claim", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  const claimed = await whole.waitFor(hasEvent("CSIVolumeClaim", "vol1"));
  assert.ok(Object.keys(claimed.Events![0]!.Payload.Volume.WriteAllocs).includes(allocId));

  // The second reader got as far as the claim, and goes away.
  const seen = (await part.waitFor(hasEvent("CSIVolumeClaim", "vol1"))) as Required<Frame>;
  part.close();
  await endedWithin(part);
  const partFrames = eventFrames(part).filter((f) => f.Index <= seen.Index);

  await peer.call("CSIVolume.Unpublish", {
    VolumeID: "vol1",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    State: "node-detached",
  });
  const stop = await http(base, "DELETE", "/v1/job/web?purge=true");
  assert.equal(stop.status, 200, stop.text);
  // Released: the claims are gone from the record, then it can go.
  const freed = await http(base, "GET", "/v1/volume/csi/vol1?claims=true");
  assert.deepEqual([freed.json.WriteClaims, freed.json.PastClaims], [{}, {}], freed.text);
  const dereg = await http(base, "DELETE", "/v1/volume/csi/vol1");
  assert.equal(dereg.status, 200, dereg.text);
  const gone = (await whole.waitFor(hasEvent("CSIVolumeDeregistered", "vol1"))) as Required<Frame>;
  assert.equal(gone.Events[0]!.Payload.Volume.Secrets, null);
  assertInOrder(whole);

  const types = eventFrames(whole).flatMap((f) =>
    f.Events.filter((e) => e.Topic === "CSIVolume").map((e) => e.Type),
  );
  assert.equal(types[0], "CSIVolumeRegistered");
  assert.ok(types.includes("CSIVolumeClaim"));
  assert.equal(types.at(-1), "CSIVolumeDeregistered");
  const jobTypes = eventFrames(whole).flatMap((f) =>
    f.Events.filter((e) => e.Topic === "Job").map((e) => e.Type),
  );
  assert.equal(jobTypes[0], "JobRegistered");
  assert.equal(jobTypes.at(-1), "JobDeregistered");

  // Every payload decodes strictly into the Go api struct under its key (Nomad's api.Event
  // helpers: Job(), Allocation(), ...); berth's claim records are the volume's only extras.
  const goTypes: Record<string, string> = { Volume: "CSIVolume", Job: "Job", Allocation: "Allocation" };
  const extra = {
    ...NOMAD_SERVER_FIELDS,
    CSIVolume: Object.fromEntries(
      ["ReadClaims", "WriteClaims", "PastClaims"].map((k) => [k, "map[string]interface{}"]),
    ),
  };
  for (const f of eventFrames(whole)) {
    for (const e of f.Events) {
      for (const [key, value] of Object.entries(e.Payload as Record<string, unknown>)) {
        if (goTypes[key]) decodeGo(value, goTypes[key], `${e.Type}.${key}`, extra);
      }
    }
  }

  // Resume from the index after the last one seen: together, exactly what the whole reader got.
  const resumed = track(
    t,
    await openStream(base, `?topic=CSIVolume:vol1&topic=Job:web&index=${seen.Index + 1}`),
  );
  await resumed.waitFor(hasEvent("CSIVolumeDeregistered", "vol1"));
  assertInOrder(resumed);
  const upTo = (frames: ReturnType<typeof eventFrames>) => frames.filter((f) => f.Index <= gone.Index);
  const joined = [...partFrames, ...upTo(eventFrames(resumed))];
  assert.deepEqual(joined, upTo(eventFrames(whole)));
  assert.ok(partFrames.length > 0 && joined.length > partFrames.length);
  // Resuming at an index delivers that index again (Nomad's rule: from `index` on).
  const again = track(t, await openStream(base, `?topic=CSIVolume:vol1&index=${seen.Index}`));
  const first = await again.waitFor((f) => f.Index !== undefined);
  assert.equal(first.Index, seen.Index);
});

test("reading never mutates: two readers and a later GET see redacted payloads while the store keeps the secrets", async (t) => {
  const { base, peer } = await startWithNode(t);
  const a = track(t, await openStream(base, "?topic=CSIVolume"));
  const b = track(t, await openStream(base, "?topic=CSIVolume"));
  assert.equal((await http(base, "PUT", "/v1/volume/csi/v2", { Volumes: [volumeSpec("v2")] })).status, 200);
  const fa = await a.waitFor(hasEvent("CSIVolumeRegistered", "v2"));
  const fb = await b.waitFor(hasEvent("CSIVolumeRegistered", "v2"));
  // A late reader converts nothing again: it gets the very same bytes from the buffer.
  const c = track(t, await openStream(base, "?topic=CSIVolume&index=1"));
  const fc = await c.waitFor(hasEvent("CSIVolumeRegistered", "v2"));
  for (const [name, s] of [
    ["a", a],
    ["b", b],
    ["c", c],
  ] as const) {
    assert.ok(!s.text.includes("hunter2"), `reader ${name} never sees the secret`);
  }
  assert.deepEqual(fa, fb);
  assert.deepEqual(fa, fc);
  assert.equal(fa.Events![0]!.Payload.Volume.Secrets, null);
  const got = await http(base, "GET", "/v1/volume/csi/v2");
  assert.equal(got.json.Secrets, null);
  assert.deepEqual(got.json.MountOptions.MountFlags, ["[REDACTED]"]);
  // The node-internal claim answer carries the volume as stored: secrets and flags intact.
  const job = await http(base, "PUT", "/v1/jobs", { Job: jobSpec("w2", "v2") });
  assert.equal(job.status, 200, job.text);
  const allocId = (await http(base, "GET", "/v1/job/w2/allocations")).json[0].ID as string;
  const claim = await peer.call("CSIVolume.Claim", {
    VolumeID: "v2",
    Namespace: "default",
    AllocationID: allocId,
    NodeID: "n1",
    Mode: "write",
    AccessMode: "single-node-writer",
    AttachmentMode: "file-system",
  });
  assert.deepEqual(claim.Volume.Secrets, { password: "hunter2" });
  assert.deepEqual(claim.Volume.MountOptions?.MountFlags, ["pw=hunter2"]);
  await a.waitFor(hasEvent("CSIVolumeClaim", "v2"));
  assert.ok(!a.text.includes("hunter2"));
});

test("filters: topic keys and FilterKeys, namespaces (`*` for all), nodes in every namespace; heartbeats", async (t) => {
  const { base } = await startWithNode(t, { heartbeatMs: 100 });
  assert.equal((await http(base, "PUT", "/v1/namespace/b", { Name: "b" })).status, 200);
  const byKey = track(t, await openStream(base, "?topic=Job:web"));
  const byPlugin = track(t, await openStream(base, "?topic=CSIVolume:p1"));
  const inB = track(t, await openStream(base, "?topic=CSIVolume&topic=Node&namespace=b"));
  const all = track(t, await openStream(base, "?topic=CSIVolume&namespace=*"));
  // NodePool: a topic Nomad has and berth never emits, so this stream carries heartbeats only.
  const heartbeats = track(t, await openStream(base, "?topic=NodePool"));

  for (const [id, ns] of [
    ["va", "default"],
    ["vb", "b"],
  ]) {
    const res = await http(base, "PUT", `/v1/volume/csi/${id}?namespace=${ns}`, {
      Volumes: [volumeSpec(id!, ns)],
    });
    assert.equal(res.status, 200, res.text);
  }
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: jobSpec("other", "va") })).status, 200);
  assert.equal((await http(base, "PUT", "/v1/jobs", { Job: jobSpec("web", "va") })).status, 200);
  const drained = await http(base, "PUT", "/v1/node/n1/eligibility", { Eligibility: "ineligible" });
  assert.equal(drained.status, 200, drained.text);

  await byKey.waitFor(hasEvent("JobRegistered", "web"));
  await all.waitFor(hasEvent("CSIVolumeRegistered", "vb"));
  await all.waitFor(hasEvent("CSIVolumeRegistered", "va"));
  await byPlugin.waitFor(hasEvent("CSIVolumeRegistered", "va"));
  await inB.waitFor(hasEvent("NodeEligibility", "n1"));
  await inB.waitFor(hasEvent("CSIVolumeRegistered", "vb"));

  const keysOf = (s: OpenStream) => eventFrames(s).flatMap((f) => f.Events.map((e) => `${e.Topic}:${e.Key}`));
  assert.deepEqual(new Set(keysOf(byKey)), new Set(["Job:web"]), "only the job asked for");
  assert.ok(!keysOf(byPlugin).includes("CSIVolume:vb"), "vb is in namespace b");
  assert.ok(keysOf(byPlugin).every((k) => k.startsWith("CSIVolume:")));
  assert.ok(!keysOf(inB).includes("CSIVolume:va"), "va is in namespace default");
  assert.ok(keysOf(inB).includes("Node:n1"), "node events have no namespace and reach every stream");
  assert.ok(keysOf(all).includes("CSIVolume:va") && keysOf(all).includes("CSIVolume:vb"));
  for (const s of [byKey, byPlugin, inB, all]) assertInOrder(s);

  // `{}` at once, then one every heartbeat interval, with no event in between.
  await heartbeats.waitFor((f) => f.Index === undefined, 1);
  assert.ok(heartbeats.frames.length >= 2);
  assert.ok(heartbeats.frames.every((f) => JSON.stringify(f) === "{}"));
});

test("bad queries answer 400 naming the parameter, before anything streams", async (t) => {
  const { base } = await startWithNode(t);
  for (const [query, field] of [
    ["?topic=Bogus", "topic"],
    ["?topic=Job:a:b", "topic"],
    ["?topic=:x", "topic"],
    ["?index=x", "index"],
    ["?index=-1", "index"],
    ["?index=1.5", "index"],
    ["?namespace=../x", "namespace"],
  ] as const) {
    // Read as a stream: a query wrongly accepted would stream on, and fail here within the bound.
    const res = await openStream(base, query);
    await endedWithin(res);
    assert.equal(res.status, 400, `${query}: ${res.text}`);
    assert.ok(res.text.startsWith(`${field}: `), `${query}: ${res.text}`);
  }
  const post = await http(base, "POST", "/v1/event/stream");
  assert.equal(post.status, 405);
});
