/**
 * Issue 30, "a fake node ... its malformed answer (empty external ID) was stored as a volume": the
 * answers a node returns for controller calls are checked before anything is stored. Real parts:
 * an in-process server on loopback, a node agent on the real agent RPC path (its answers
 * programmed, as a rogue agent's would be), the real HTTP API.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { createLogger } from "../../../src/internal/log.js";
import type { ControllerCreateVolumeResponse } from "../../../src/structs/rpc.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http } from "./fake_agent.js";

/** One server and one odd node for the whole file; `answer` is what its next CreateVolume returns. */
async function setup(t: { after(fn: () => unknown): void }) {
  const lines: string[] = [];
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: createLogger({ level: "warn", sink: { write: (l) => lines.push(l) } }),
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const state: { answer: unknown; list: unknown } = { answer: undefined, list: undefined };
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async () => state.answer as ControllerCreateVolumeResponse,
    "ClientCSI.ControllerDeleteVolume": async () => ({}),
    "ClientCSI.ControllerListVolumes": async () => state.list as never,
  });
  t.after(() => peer.close());
  const info = controllerInfo("p1", true);
  info.ControllerInfo = { ...info.ControllerInfo!, SupportsListVolumes: true };
  await peer.call("Node.Register", {
    Node: makeNode("odd", {
      CSIControllerPlugins: { p1: info },
      CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }) },
    }),
  });
  return { base, state, lines };
}

const good: ControllerCreateVolumeResponse = {
  ExternalVolumeID: "ext-1",
  CapacityBytes: 1024,
  VolumeContext: {},
  Topologies: [],
};

async function create(base: string, id: string) {
  return http(base, "PUT", `/v1/volume/csi/${id}/create`, {
    Volumes: [
      {
        ID: id,
        Name: id,
        PluginID: "p1",
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
}

test("a malformed CreateVolume answer fails the create naming the field, logs it, and stores no volume", async (t) => {
  const { base, state, lines } = await setup(t);
  const cases: [string, unknown, string][] = [
    ["empty-id", { ...good, ExternalVolumeID: "" }, "ExternalVolumeID"],
    ["no-id", { ...good, ExternalVolumeID: undefined }, "ExternalVolumeID"],
    ["long-id", { ...good, ExternalVolumeID: "x".repeat(100_000) }, "ExternalVolumeID"],
    ["nul-id", { ...good, ExternalVolumeID: "a\u0000b" }, "ExternalVolumeID"],
    ["neg-cap", { ...good, CapacityBytes: -5 }, "CapacityBytes"],
    ["str-cap", { ...good, CapacityBytes: "1G" }, "CapacityBytes"],
    ["ctx", { ...good, VolumeContext: { a: 7 } }, "VolumeContext.a"],
    ["big-ctx", { ...good, VolumeContext: { a: "v".repeat(20_000) } }, "VolumeContext"],
    ["topo", { ...good, Topologies: [{ Segments: { zone: 1 } }] }, "Topologies[0].Segments.zone"],
    ["topo-shape", { ...good, Topologies: "zone=a" }, "Topologies"],
  ];
  for (const [id, answer, field] of cases) {
    state.answer = answer;
    const res = await create(base, id);
    assert.equal(res.status, 502, `${id}: ${res.text}`);
    assert.match(res.text, new RegExp(`${field.replace(/[[\].]/g, "\\$&")} `), `${id}: names the field`);
    assert.match(res.text, /on node odd/, `${id}: names the node`);
    assert.ok(res.text.length < 2000, `${id}: the answer is not echoed`);
    assert.equal((await http(base, "GET", `/v1/volume/csi/${id}`)).status, 404, `${id}: nothing stored`);
  }
  const listed = await http(base, "GET", "/v1/volumes?type=csi");
  assert.deepEqual(listed.json, [], "no volume was recorded");
  const warned = lines.filter((l) => l.includes("refused a malformed controller answer"));
  assert.equal(warned.length, cases.length, "one warning per refused answer");
  assert.match(warned[0]!, /node=odd/);
  assert.match(warned[0]!, /field=ExternalVolumeID/);

  // A good answer still creates the volume: the check refuses only what is malformed.
  state.answer = good;
  const ok = await create(base, "fine");
  assert.equal(ok.status, 200, ok.text);
  const vol = await http(base, "GET", "/v1/volume/csi/fine");
  assert.equal(vol.json.ExternalID, "ext-1");

  // ListVolumes answers are held to the same rules before they reach an API caller.
  state.list = { Entries: [{ ExternalID: "", CapacityBytes: 1 }], NextToken: "" };
  const ext = await http(base, "GET", "/v1/volumes/external?plugin_id=p1");
  assert.equal(ext.status, 502, ext.text);
  assert.match(ext.text, /Entries\[0\]\.ExternalID is empty/);
});
