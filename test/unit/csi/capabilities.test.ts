import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BerthError } from "../../../src/structs/errors.js";
import { PluginCapabilitySet, guardCsiClient } from "../../../src/csi/capabilities.js";
import {
  DEFAULT_FAKE_PLUGIN_CAPABILITIES,
  NO_CONTROLLER_CAPABILITIES,
  NO_NODE_CAPABILITIES,
} from "../../../src/csi/fake/plugin.js";
import type { CsiClient } from "../../../src/csi/types.js";

const set = (o: { controller?: boolean; publish?: boolean; stage?: boolean }) =>
  new PluginCapabilitySet({
    plugin: { ...DEFAULT_FAKE_PLUGIN_CAPABILITIES, controllerService: o.controller ?? true },
    controller: {
      ...NO_CONTROLLER_CAPABILITIES,
      createDeleteVolume: true,
      publishUnpublishVolume: o.publish ?? false,
    },
    node: { ...NO_NODE_CAPABILITIES, stageUnstageVolume: o.stage ?? false },
  });

void describe("PluginCapabilitySet", () => {
  void it("allows only advertised capabilities", () => {
    const caps = set({ publish: false, stage: true });
    assert.equal(caps.supportsMethod("CreateVolume"), true);
    assert.equal(caps.supportsMethod("ControllerPublishVolume"), false);
    assert.equal(caps.supportsMethod("NodeStageVolume"), true);
    assert.equal(caps.supportsMethod("NodePublishVolume"), true);
    assert.throws(
      () => caps.require("controller.publishUnpublishVolume", "ControllerPublishVolume"),
      (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED" && /ControllerPublishVolume/.test(e.message),
    );
  });

  void it("controller capabilities count only with CONTROLLER_SERVICE", () => {
    const caps = set({ controller: false, publish: true });
    assert.equal(caps.has("controller.publishUnpublishVolume"), false);
    assert.throws(() => caps.requireMethod("CreateVolume"), /CONTROLLER|controllerService/);
  });

  void it("unknown methods are refused", () => {
    assert.throws(
      () => set({}).requireMethod("Bogus"),
      (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED",
    );
  });
});

void describe("guardCsiClient", () => {
  void it("refuses unadvertised calls without calling the plugin", async () => {
    const called: string[] = [];
    const inner = new Proxy({} as CsiClient, {
      get: (_t, prop) => (prop === "endpoint" ? "unix:///x" : async () => void called.push(String(prop))),
    });
    const guarded = guardCsiClient(inner, set({ publish: false, stage: false }));
    await assert.rejects(
      guarded.nodeStageVolume({} as never),
      (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED",
    );
    await assert.rejects(
      guarded.controllerPublishVolume({} as never),
      (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED",
    );
    assert.deepEqual(called, []);
    await guarded.nodePublishVolume({} as never);
    await guarded.probe();
    assert.deepEqual(called, ["nodePublishVolume", "probe"]);
  });
});
