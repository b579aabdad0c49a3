/**
 * Multi-volume register/create requests are all or nothing (issue 10, "Partial writes"), on an
 * in-process server with a fake node agent answering the controller calls:
 * - a create whose second CreateVolume fails answers that error and records nothing; the storage
 *   already created for the first volume is deleted again through the plugin;
 * - a register whose second spec is refused records nothing;
 * - a request naming one namespace + ID twice is a 400 naming `Volumes[1].ID`, calls no plugin and
 *   records nothing.
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
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      calls.push({ method: "create", params: p });
      if (p.SnapshotID === "missing") {
        throw new BerthError("ERR_CSI_NOT_FOUND", "CSI CreateVolume failed: NOT_FOUND: no snapshot missing");
      }
      return { ExternalVolumeID: `ext-${p.Name}`, CapacityBytes: 1024, VolumeContext: {}, Topologies: [] };
    },
    "ClientCSI.ControllerDeleteVolume": async (p) => (calls.push({ method: "delete", params: p }), {}),
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
  return { base, calls };
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
