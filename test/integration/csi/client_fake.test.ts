import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import type { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { fetchCapabilities, waitForProbe } from "../../../src/csi/capabilities.js";
import { FakeCsiPlugin, FakeRpcError } from "../../../src/csi/fake/index.js";
import type { CsiClient, CsiVolumeCapability } from "../../../src/csi/types.js";

const cap: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "ext4", mountFlags: ["noatime"] },
};

void describe("CsiClient against FakeCsiPlugin", () => {
  let dir: string;
  let plugin: FakeCsiPlugin;
  let client: CsiClient;

  void before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-csi-"));
    plugin = await FakeCsiPlugin.start({
      socketPath: path.join(dir, "csi.sock"),
      nodeInfo: { nodeId: "n1", maxVolumesPerNode: 3, accessibleTopology: { segments: { zone: "a" } } },
    });
    client = createCsiClient(plugin.endpoint, { log: nullLogger });
  });
  void after(async () => {
    client.close();
    await plugin.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  void it("a closed client fails calls with the retryable ERR_CSI_UNAVAILABLE, never an internal error", async () => {
    const other = createCsiClient(plugin.endpoint, { log: nullLogger });
    await other.probe();
    other.close();
    await assert.rejects(other.probe(), (e: BerthError) => e.code === "ERR_CSI_UNAVAILABLE");
  });

  void it("fingerprints the plugin", async () => {
    assert.deepEqual(await client.getPluginInfo(), {
      name: "fake.csi.berth.io",
      vendorVersion: "0.0.1",
      manifest: {},
    });
    assert.deepEqual(await client.probe(), { ready: true });
    plugin.ready = false;
    assert.deepEqual(await client.probe(), { ready: false });
    plugin.ready = null;
    assert.deepEqual(await client.probe(), { ready: true });
    plugin.ready = true;
    const caps = await fetchCapabilities(client, { isNode: true });
    assert.equal(caps.has("controller.publishUnpublishVolume"), true);
    assert.equal(caps.has("node.stageUnstageVolume"), true);
    assert.equal(caps.has("controller.listVolumes"), false);
    assert.deepEqual(await client.nodeGetInfo(), {
      nodeId: "n1",
      maxVolumesPerNode: 3,
      accessibleTopology: { segments: { zone: "a" } },
    });
  });

  void it("creates volumes idempotently and passes contexts through", async () => {
    const req = {
      name: "v1",
      capacityRange: { requiredBytes: 1024, limitBytes: 0 },
      volumeCapabilities: [cap],
      parameters: { a: "b" },
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    };
    const v = await client.createVolume(req);
    assert.equal(v.capacityBytes, 1024);
    assert.deepEqual(await client.createVolume(req), v);
    const pub = await client.controllerPublishVolume({
      volumeId: v.volumeId,
      nodeId: "n1",
      volumeCapability: cap,
      readonly: false,
      secrets: {},
      volumeContext: v.volumeContext,
    });
    assert.ok(Object.keys(pub.publishContext).length > 0);
    const wire = plugin.callsTo("CreateVolume")[0]!.request;
    assert.deepEqual(wire.capacity_range, { required_bytes: 1024, limit_bytes: 0 });
    assert.equal(
      (wire.volume_capabilities as { access_mode: { mode: string } }[])[0]!.access_mode.mode,
      "SINGLE_NODE_WRITER",
    );
    const confirmed = await client.validateVolumeCapabilities({
      volumeId: v.volumeId,
      volumeContext: {},
      volumeCapabilities: [cap],
      parameters: {},
      secrets: {},
    });
    assert.deepEqual(confirmed.confirmed?.volumeCapabilities, [cap]);
  });

  void it("creates the target path on publish and removes it on unpublish", async () => {
    const target = path.join(dir, "alloc", "target");
    const base = { volumeId: "v", publishContext: {}, volumeCapability: cap, secrets: {}, volumeContext: {} };
    await client.nodeStageVolume({ ...base, stagingTargetPath: path.join(dir, "staging") });
    await client.nodePublishVolume({
      ...base,
      stagingTargetPath: path.join(dir, "staging"),
      targetPath: target,
      readonly: false,
    });
    assert.ok((await fs.stat(target)).isDirectory());
    await client.nodeUnpublishVolume({ volumeId: "v", targetPath: target });
    await assert.rejects(fs.stat(target), /ENOENT/);
    await client.nodeUnpublishVolume({ volumeId: "v", targetPath: target });
  });

  void it("maps deadlines, cancellation and plugin errors to codes", async () => {
    plugin.on("NodeStageVolume", { hang: true }, { times: 2 });
    const req = {
      volumeId: "v",
      publishContext: {},
      stagingTargetPath: path.join(dir, "s"),
      volumeCapability: cap,
      secrets: {},
      volumeContext: {},
    };
    await assert.rejects(client.nodeStageVolume(req, { timeoutMs: 100 }), (e: BerthError) => {
      return e.code === "ERR_CSI_DEADLINE_EXCEEDED" && /NodeStageVolume/.test(e.message);
    });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const started = Date.now();
    await assert.rejects(
      client.nodeStageVolume(req, { signal: ac.signal }),
      (e: BerthError) => e.code === "ERR_ABORTED",
    );
    assert.ok(Date.now() - started < 5_000);
    plugin.failNext("NodeStageVolume", 2, { code: status.UNAVAILABLE, message: "busy" });
    for (let i = 0; i < 2; i++) {
      await assert.rejects(
        client.nodeStageVolume(req),
        (e: BerthError) => e.code === "ERR_CSI_UNAVAILABLE" && /busy/.test(e.message),
      );
    }
    await client.nodeStageVolume(req);
    plugin.on(
      "NodeStageVolume",
      { delayMs: 30, then: { error: { code: status.NOT_FOUND, message: "gone" } } },
      { times: 1 },
    );
    await assert.rejects(client.nodeStageVolume(req), (e: BerthError) => e.code === "ERR_CSI_NOT_FOUND");
  });

  void it("keeps secrets and mount flags out of error messages", async () => {
    plugin.on(
      "NodePublishVolume",
      (r) => {
        const secrets = r.secrets as Record<string, string>;
        throw new FakeRpcError(
          status.INTERNAL,
          `mount -o s3cr3tflag failed with password ${secrets.password}`,
        );
      },
      { times: 1 },
    );
    await assert.rejects(
      client.nodePublishVolume({
        volumeId: "v",
        publishContext: {},
        stagingTargetPath: "",
        targetPath: path.join(dir, "t2"),
        volumeCapability: { ...cap, access: { type: "mount", fsType: "", mountFlags: ["s3cr3tflag"] } },
        readonly: false,
        secrets: { password: "hunter22" },
        volumeContext: {},
      }),
      (e: BerthError) =>
        e.code === "ERR_CSI_INTERNAL" && !/hunter22|s3cr3tflag/.test(e.message + JSON.stringify(e.toJSON())),
    );
  });
});

void describe("FakeCsiPlugin realistic options", () => {
  void it("answers INTERNAL for unadvertised calls and requires volume_context", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-csi-"));
    const plugin = await FakeCsiPlugin.start({
      socketPath: path.join(dir, "csi.sock"),
      controllerCapabilities: { publishUnpublishVolume: false },
      internalForUnadvertised: true,
      requireVolumeContext: true,
    });
    const client = createCsiClient(path.join(dir, "csi.sock"), { log: nullLogger });
    try {
      await assert.rejects(
        client.controllerUnpublishVolume({ volumeId: "v", nodeId: "n", secrets: {} }),
        (e: BerthError) => e.code === "ERR_CSI_INTERNAL",
      );
      const req = {
        volumeId: "v",
        publishContext: {},
        stagingTargetPath: path.join(dir, "s"),
        volumeCapability: cap,
        secrets: {},
      };
      await assert.rejects(
        client.nodeStageVolume({ ...req, volumeContext: {} }),
        (e: BerthError) => e.code === "ERR_CSI_INVALID_ARGUMENT",
      );
      await client.nodeStageVolume({ ...req, volumeContext: { k: "v" } });
    } finally {
      client.close();
      await plugin.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});

void describe("waitForProbe", () => {
  void it("waits through a stale socket file until the plugin really answers", async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-csi-"));
    const sock = path.join(dir, "csi.sock");
    await fs.writeFile(sock, "");
    const client = createCsiClient(sock, { log: nullLogger });
    let plugin: FakeCsiPlugin | undefined;
    try {
      await assert.rejects(
        waitForProbe(client, { timeoutMs: 300, intervalMs: 50 }),
        (e: BerthError) => e.code === "ERR_CSI_PLUGIN_UNAVAILABLE",
      );
      const starting = (async () => {
        await new Promise((r) => setTimeout(r, 200));
        plugin = await FakeCsiPlugin.start({ socketPath: sock });
        // The first answer says "not ready yet": waitForProbe must keep going past it.
        plugin.on("Probe", { respond: { ready: { value: false } } }, { times: 1 });
      })();
      await waitForProbe(client, { timeoutMs: 10_000, intervalMs: 50 });
      await starting;
      assert.ok(plugin!.callsTo("Probe").length >= 2);
      const ac = new AbortController();
      ac.abort();
      await assert.rejects(
        waitForProbe(client, { timeoutMs: 1_000, signal: ac.signal }),
        (e: Error) => e.name === "AbortError",
      );
    } finally {
      client.close();
      await plugin?.stop();
      await fs.rm(dir, { recursive: true, force: true });
    }
  });
});
