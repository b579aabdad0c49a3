/**
 * Multi-volume register/create requests are all or nothing (issue 10, "Partial writes"), on an
 * in-process server with a fake node agent answering the controller calls:
 * - a create whose second CreateVolume fails answers that error and records nothing; the storage
 *   already created for the first volume is deleted again through the plugin;
 * - a register whose second spec is refused records nothing;
 * - a request naming one namespace + ID twice is a 400 naming `Volumes[1].ID`, calls no plugin and
 *   records nothing;
 * - storage a failed create may have left (an unknown outcome, an undo that failed) stays reported
 *   as an orphan (GET /v1/volumes/orphans) until deleted or adopted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { BerthError } from "../../../src/structs/errors.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer, type Call } from "./fake_agent.js";

async function setup(t: { after(fn: () => unknown): void }) {
  const base = await startServer(t);
  const calls: Call[] = [];
  const state = { flaky: true };
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      calls.push({ method: "create", params: p });
      if (p.SnapshotID === "missing") {
        throw new BerthError("ERR_CSI_NOT_FOUND", "CSI CreateVolume failed: NOT_FOUND: no snapshot missing");
      }
      // An answer that says nothing of what the plugin did: storage may exist.
      if (p.Name === "flaky" && state.flaky) {
        throw new BerthError("ERR_CSI_INTERNAL", "CSI CreateVolume failed: INTERNAL: disk on fire");
      }
      return { ExternalVolumeID: `ext-${p.Name}`, CapacityBytes: 1024, VolumeContext: {}, Topologies: [] };
    },
    "ClientCSI.ControllerDeleteVolume": async (p) => {
      calls.push({ method: "delete", params: p });
      if (p.ExternalVolumeID === "ext-stuck") {
        throw new BerthError("ERR_CSI_INTERNAL", "CSI DeleteVolume failed: INTERNAL: still busy");
      }
      return {};
    },
    "ClientCSI.ControllerValidateVolume": async (p) => {
      calls.push({ method: "validate", params: p });
      if (p.ExternalVolumeID === "gone") {
        throw new BerthError("ERR_CSI_NOT_FOUND", "CSI ValidateVolumeCapabilities failed: NOT_FOUND: gone");
      }
      return {};
    },
  });
  t.after(() => peer.close());
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: { p1: controllerInfo("p1", true) },
      CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }) },
    }),
  });
  return { base, calls, state };
}

const spec = (id: string, over: Record<string, unknown> = {}) => ({
  ID: id,
  PluginID: "p1",
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
  ...over,
});

/** The X-Berth-Error-Code header of a PUT. */
async function errorCode(base: string, route: string, body: unknown): Promise<string | null> {
  const res = await fetch(base + route, { method: "PUT", body: JSON.stringify(body) });
  await res.text();
  return res.headers.get("x-berth-error-code");
}

async function volumeIds(base: string): Promise<string[]> {
  const res = await http(base, "GET", "/v1/volumes?type=csi");
  assert.equal(res.status, 200, res.text);
  return (res.json as { ID: string }[]).map((v) => v.ID).sort();
}

test("create: the second volume's plugin error keeps nothing and undoes the first's storage", async (t) => {
  const { base, calls } = await setup(t);
  const res = await http(base, "PUT", "/v1/volume/csi/a/create", {
    Volumes: [spec("a"), spec("b", { SnapshotID: "missing" })],
  });
  assert.equal(res.status, 404, res.text);
  assert.match(res.text, /Volumes\[1\] \("b"\).*NOT_FOUND.*no volume of this request was recorded/);
  assert.deepEqual(await volumeIds(base), [], "the first volume is not kept");
  assert.deepEqual(
    calls.map((c) => `${c.method}:${c.params.Name ?? c.params.ExternalVolumeID}`),
    ["create:a", "create:b", "delete:ext-a"],
    "the storage created for the first volume is deleted again",
  );

  // The same request without the failing spec records both, in one write.
  const ok = await http(base, "PUT", "/v1/volume/csi/a/create", { Volumes: [spec("a"), spec("b")] });
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(await volumeIds(base), ["a", "b"]);
});

test("register: a refused second volume keeps nothing", async (t) => {
  const { base } = await setup(t);
  const res = await http(base, "PUT", "/v1/volume/csi/a", {
    Volumes: [spec("a", { ExternalID: "ext-a" }), spec("b", { ExternalID: "gone" })],
  });
  assert.equal(res.status, 404, res.text);
  assert.deepEqual(await volumeIds(base), []);
  const unknownPlugin = await http(base, "PUT", "/v1/volume/csi/a", {
    Volumes: [spec("a", { ExternalID: "ext-a" }), spec("b", { ExternalID: "ext-b", PluginID: "nope" })],
  });
  assert.equal(unknownPlugin.status, 400, unknownPlugin.text);
  assert.match(unknownPlugin.text, /^Volumes\[1\]\.PluginID: /);
  assert.deepEqual(await volumeIds(base), []);
});

test("duplicate IDs in one request are refused with a 400 naming the field; nothing is called or kept", async (t) => {
  const { base, calls } = await setup(t);
  for (const [route, extra] of [
    ["/v1/volume/csi/a", { ExternalID: "ext-a" }],
    ["/v1/volume/csi/a/create", {}],
  ] as const) {
    const res = await http(base, "PUT", route, {
      Volumes: [spec("a", { ...extra, Name: "first" }), spec("a", { ...extra, Name: "second" })],
    });
    assert.equal(res.status, 400, `${route}: ${res.text}`);
    assert.match(res.text, /^Volumes\[1\]\.ID: volume "a" in namespace "default" is already Volumes\[0\]/);
    assert.equal(
      await errorCode(base, route, { Volumes: [spec("a", extra), spec("a", extra)] }),
      "ERR_VALIDATION",
    );
  }
  // The same ID in two namespaces is two volumes.
  assert.equal((await http(base, "PUT", "/v1/namespace/other", { Name: "other" })).status, 200);
  const two = await http(base, "PUT", "/v1/volume/csi/a", {
    Volumes: [spec("a", { ExternalID: "ext-a" }), spec("a", { ExternalID: "ext-a2", Namespace: "other" })],
  });
  assert.equal(two.status, 200, two.text);
  assert.deepEqual(
    calls.filter((c) => c.method !== "validate"),
    [],
    "no plugin call for a refused request",
  );
});

interface Orphan {
  ID: string;
  UnrecordedStorage: string[] | null;
  ListError: string;
}

async function orphanIds(base: string): Promise<string[]> {
  const res = await http(base, "GET", "/v1/volumes/orphans?type=csi");
  assert.equal(res.status, 200, res.text);
  return (res.json as Orphan[]).map((o) => o.ID).sort();
}

test("a failed create reports as orphans only the storage it may have left; delete and adopt resolve them", async (t) => {
  const { base, calls, state } = await setup(t);
  // "a" is undone, the undo of "stuck" fails, "flaky" answers INTERNAL, "c" is never tried.
  const res = await http(base, "PUT", "/v1/volume/csi/a/create", {
    Volumes: [spec("a"), spec("stuck"), spec("flaky"), spec("c")],
  });
  assert.equal(res.status, 500, res.text);
  assert.deepEqual(await volumeIds(base), []);
  assert.deepEqual(await orphanIds(base), ["flaky", "stuck"]);
  const listed = await http(base, "GET", "/v1/volumes/orphans?type=csi");
  const stuck = (listed.json as Orphan[]).find((o) => o.ID === "stuck")!;
  assert.equal(stuck.UnrecordedStorage, null, "p1 does not list volumes");
  assert.match(stuck.ListError, /ListVolumes/);

  // Delete: the storage's ID is learned through CreateVolume (idempotent by name), then deleted.
  calls.length = 0;
  state.flaky = false;
  const del = await http(base, "DELETE", "/v1/volume/csi/flaky/orphan");
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(
    calls.map((c) => `${c.method}:${c.params.Name ?? c.params.ExternalVolumeID}`),
    ["create:flaky", "delete:ext-flaky"],
  );
  // Adopt: recorded under the intended ID on the storage CreateVolume answers.
  const adopt = await http(base, "PUT", "/v1/volume/csi/stuck/adopt");
  assert.equal(adopt.status, 200, adopt.text);
  assert.equal(adopt.json.Volumes[0].ExternalID, "ext-stuck");
  assert.deepEqual(await volumeIds(base), ["stuck"]);
  assert.deepEqual(await orphanIds(base), []);
  const again = await http(base, "DELETE", "/v1/volume/csi/stuck/orphan");
  assert.equal(again.status, 404, "an adopted volume is no orphan: " + again.text);
});

test("adopt and delete never touch storage a berth volume records; a create never forgets an orphan", async (t) => {
  const { base, calls, state } = await setup(t);
  // The create of "x" (CreateVolume name "flaky") fails in a way that may have left storage.
  const res = await http(base, "PUT", "/v1/volume/csi/x/create", { Volumes: [spec("x", { Name: "flaky" })] });
  assert.equal(res.status, 500, res.text);
  // A create of "x" under another name would forget that storage: refused until it is resolved.
  const other = await http(base, "PUT", "/v1/volume/csi/x/create", { Volumes: [spec("x", { Name: "new" })] });
  assert.equal(other.status, 409, other.text);
  assert.match(other.text, /unfinished create .*name "flaky".*adopt or delete it/);
  // The storage is then registered as volume "y".
  const reg = await http(base, "PUT", "/v1/volume/csi/y", {
    Volumes: [spec("y", { ExternalID: "ext-flaky" })],
  });
  assert.equal(reg.status, 200, reg.text);
  assert.deepEqual(await orphanIds(base), ["x"], "still reported: berth cannot tell it is y's storage");
  state.flaky = false;
  calls.length = 0;
  const adopt = await http(base, "PUT", "/v1/volume/csi/x/adopt");
  assert.equal(adopt.status, 409, adopt.text);
  assert.match(adopt.text, /"ext-flaky" named "flaky" is recorded as volume "y"/);
  // Delete learns it is y's storage: the orphan goes, the storage stays.
  const del = await http(base, "DELETE", "/v1/volume/csi/x/orphan");
  assert.equal(del.status, 200, del.text);
  assert.deepEqual(
    calls.map((c) => c.method),
    ["create", "create"],
    "no DeleteVolume",
  );
  assert.deepEqual(await volumeIds(base), ["y"]);
  assert.deepEqual(await orphanIds(base), []);
});

test("a create retried with the same name completes the interrupted one and ends its orphan", async (t) => {
  const { base, state } = await setup(t);
  const res = await http(base, "PUT", "/v1/volume/csi/x/create", { Volumes: [spec("x", { Name: "flaky" })] });
  assert.equal(res.status, 500, res.text);
  assert.deepEqual(await orphanIds(base), ["x"]);
  state.flaky = false;
  const retry = await http(base, "PUT", "/v1/volume/csi/x/create", {
    Volumes: [spec("x", { Name: "flaky" })],
  });
  assert.equal(retry.status, 200, retry.text);
  assert.equal(retry.json.Volumes[0].ExternalID, "ext-flaky");
  assert.deepEqual(await orphanIds(base), []);
});
