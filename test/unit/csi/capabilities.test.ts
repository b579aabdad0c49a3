import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { BerthError } from "../../../src/structs/errors.js";
import { PluginCapabilitySet } from "../../../src/csi/capabilities.js";
import { registerClientCsiHandlers, type ClientCsiPeer } from "../../../src/client/rpc/client_csi.js";
import { nullLogger } from "../../../src/internal/log.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import {
  DEFAULT_FAKE_PLUGIN_CAPABILITIES,
  NO_CONTROLLER_CAPABILITIES,
  NO_NODE_CAPABILITIES,
} from "../../../src/csi/fake/plugin.js";

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

// guardCsiClient (a whole-client wrapper used only by this test) is gone; the gate in use for
// controller calls is the ClientCSI handlers' capability check (src/client/rpc/client_csi.ts). On
// the node side the volume manager never calls NodeStage without STAGE_UNSTAGE_VOLUME (it skips
// staging rather than refusing; see volume_manager.test.ts "a plugin without STAGE_UNSTAGE_VOLUME
// is never staged").
void describe("ClientCSI capability gate", () => {
  void it("refuses unadvertised calls without calling the plugin", async () => {
    const handlers = new Map<string, (req: unknown, signal: AbortSignal) => Promise<unknown>>();
    const peer: ClientCsiPeer = {
      handle: (method, fn) =>
        handlers.set(method, fn as (req: unknown, signal: AbortSignal) => Promise<unknown>),
    };
    const client = new FakeCsiClient();
    client.controllerCaps.publishUnpublishVolume = false;
    registerClientCsiHandlers(peer, { controllerClient: () => client, log: nullLogger });
    const call = (method: string, req: unknown) => handlers.get(method)!(req, new AbortController().signal);
    const called = () => client.methods().filter((m) => m !== "ControllerGetCapabilities");
    await assert.rejects(
      call("ClientCSI.ControllerPublishVolume", {
        PluginID: "fake",
        ExternalVolumeID: "ext-1",
        ExternalNodeID: "node-ext",
        Capability: { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
        MountOptions: null,
        ReadOnly: false,
        Secrets: {},
        VolumeContext: {},
      }),
      (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED",
    );
    await assert.rejects(
      call("ClientCSI.ControllerUnpublishVolume", {
        PluginID: "fake",
        ExternalVolumeID: "ext-1",
        ExternalNodeID: "node-ext",
        Secrets: {},
      }),
      (e: BerthError) => e.code === "ERR_CSI_NOT_SUPPORTED",
    );
    assert.deepEqual(called(), []);
    await call("ClientCSI.ControllerDeleteVolume", {
      PluginID: "fake",
      ExternalVolumeID: "ext-1",
      Secrets: {},
    });
    assert.deepEqual(called(), ["DeleteVolume"]);
  });
});
