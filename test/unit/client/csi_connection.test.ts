/**
 * Connections follow the plugin (issue 8 item 9), with fake CSI clients: calls in flight on a plugin
 * that deregisters or stops answering its fingerprint fail at once and retryably; the handle a
 * caller holds reaches the plugin's new connection; a call made while the plugin is away waits for
 * it; a volume manager whose NodeStage hung on a deregistered plugin stages on the new connection.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CsiManager } from "../../../src/client/csimanager/manager.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { abortError } from "../../../src/internal/abort.js";
import type { CsiCallOptions } from "../../../src/csi/types.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { claimedVolume, plugin } from "../../builders/client_records.js";
import { tempDir } from "../../helpers/temp_dir.js";

/**
 * A fake connection like grpc-js's to a SIGSTOPped plugin: the methods in `hung` answer only when
 * cancelled; once closed, new calls fail with ERR_CSI_UNAVAILABLE (calls in flight are not
 * cancelled by close, as with grpc-js).
 */
class HangableClient extends FakeCsiClient {
  readonly hung = new Set<string>();
  /** The deadline each NodeStageVolume was given. */
  readonly stageTimeouts: (number | undefined)[] = [];

  override nodeStageVolume(req: { volumeId?: string; stagingTargetPath: string }, o?: CsiCallOptions) {
    this.stageTimeouts.push(o?.timeoutMs);
    return this.maybeHang("NodeStageVolume", o, () => super.nodeStageVolume(req, o));
  }

  override getPluginInfo(o?: CsiCallOptions) {
    return this.maybeHang("GetPluginInfo", o, () => super.getPluginInfo(o));
  }

  private maybeHang<T>(method: string, o: CsiCallOptions | undefined, answer: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new BerthError("ERR_CSI_UNAVAILABLE", `${method}: closed`));
    if (!this.hung.has(method)) return answer();
    this.calls.push({ method, req: null, start: Date.now(), end: 0 });
    return new Promise((_, reject) => {
      const signal = o?.signal;
      if (!signal) return;
      if (signal.aborted) reject(abortError(signal));
      signal.addEventListener("abort", () => reject(abortError(signal)), { once: true });
    });
  }
}

function setup(opts: { fingerprintIntervalMs?: number } = {}) {
  const registry = new PluginRegistry(StateDB.open(":memory:"), nullLogger);
  /** Every connection the manager opened, oldest first. */
  const clients: HangableClient[] = [];
  const manager = new CsiManager({
    registry,
    clientFactory: (socketPath) => {
      const c = new HangableClient(socketPath);
      clients.push(c);
      return c;
    },
    log: nullLogger,
    fingerprintIntervalMs: opts.fingerprintIntervalMs ?? 60_000,
    onFingerprint: () => undefined,
  });
  manager.start();
  return { registry, manager, clients };
}

const stageReq = {
  volumeId: "ext-vol1",
  publishContext: {},
  stagingTargetPath: "/csi/staging/x",
  volumeCapability: {
    accessMode: "single-node-writer" as const,
    access: { type: "mount" as const, fsType: "", mountFlags: [] },
  },
  secrets: {},
  volumeContext: {},
};

async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 2));
}

test(
  "a call in flight on a plugin that deregisters fails at once, retryably; the same handle reaches the new connection",
  { timeout: 10_000 },
  async () => {
    const { registry, manager, clients } = setup();
    registry.register(plugin());
    const handle = await manager.nodePlugin("fake");
    clients[0]!.hung.add("NodeStageVolume");
    const inFlight = handle.client.nodeStageVolume(stageReq, { timeoutMs: 3_600_000 });
    await until(() => clients[0]!.callsOf("NodeStageVolume").length === 1);

    registry.deregister("csi-node", "fake", "plugin-alloc");
    await assert.rejects(inFlight, (err: BerthError) => {
      assert.equal(err.code, "ERR_CSI_UNAVAILABLE");
      assert.match(
        err.message,
        /NodeStageVolume: connection to \/tmp\/none\/csi\.sock dropped \(plugin deregistered\)/,
      );
      return true;
    });
    assert.ok(clients[0]!.closed, "the old connection is closed");

    registry.register(plugin());
    await handle.client.nodeStageVolume(stageReq);
    assert.equal(clients.length, 2, "a fresh connection");
    assert.equal(clients[1]!.callsOf("NodeStageVolume").length, 1, "the retry ran on the new connection");
    await manager.stop();
  },
);

test(
  "a call made while the plugin is away waits for it within its deadline, then runs on the new connection",
  { timeout: 10_000 },
  async () => {
    const { registry, manager, clients } = setup();
    registry.register(plugin());
    const handle = await manager.nodePlugin("fake");
    registry.deregister("csi-node", "fake", "plugin-alloc");

    await assert.rejects(handle.client.nodeStageVolume(stageReq, { timeoutMs: 20 }), {
      code: "ERR_CSI_PLUGIN_UNAVAILABLE",
      message: 'CSI node plugin "fake" is not running on this node',
    });
    const waiting = handle.client.nodeStageVolume(stageReq, { timeoutMs: 3_600_000 });
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(clients.length, 1, "no connection while the plugin is away");
    registry.register(plugin());
    await waiting;
    assert.equal(clients[1]!.callsOf("NodeStageVolume").length, 1);
    const given = clients[1]!.stageTimeouts[0]!;
    assert.ok(given < 3_600_000, `the wait counts against the call's deadline (${given} ms left)`);

    // The caller's abort still ends a wait, as an abort.
    registry.deregister("csi-node", "fake", "plugin-alloc");
    const ac = new AbortController();
    const aborted = handle.client.nodeStageVolume(stageReq, { signal: ac.signal, timeoutMs: 3_600_000 });
    ac.abort(new BerthError("ERR_ABORTED", "stop"));
    await assert.rejects(aborted, { code: "ERR_ABORTED" });
    await manager.stop();
  },
);

test(
  "a fingerprint the plugin does not answer drops the connection: calls in flight fail at once, later calls use a fresh one",
  { timeout: 10_000 },
  async () => {
    const { registry, manager, clients } = setup({ fingerprintIntervalMs: 5 });
    registry.register(plugin());
    const handle = await manager.nodePlugin("fake");
    clients[0]!.hung.add("NodeStageVolume");
    const inFlight = handle.client.nodeStageVolume(stageReq, { timeoutMs: 3_600_000 });
    await until(() => clients[0]!.callsOf("NodeStageVolume").length === 1);

    // The plugin stops answering: its next fingerprint runs into the deadline.
    clients[0]!.failNext("GetPluginInfo", "ERR_CSI_DEADLINE_EXCEEDED");
    await assert.rejects(inFlight, (err: BerthError) => {
      assert.equal(err.code, "ERR_CSI_UNAVAILABLE");
      assert.match(err.message, /fingerprint failed: ERR_CSI_DEADLINE_EXCEEDED/);
      return true;
    });
    await until(() => clients.length === 2);
    assert.ok(clients[0]!.closed);
    await handle.client.nodeStageVolume(stageReq);
    assert.equal(clients[1]!.callsOf("NodeStageVolume").length, 1);
    await manager.stop();
    assert.ok(clients[1]!.closed, "stopping the manager closes the current connection");
  },
);

test(
  "the same plugin registering again gets a fresh connection; calls in flight on the old one finish there",
  { timeout: 10_000 },
  async () => {
    const { registry, manager, clients } = setup();
    registry.register(plugin());
    const handle = await manager.nodePlugin("fake");
    clients[0]!.delayMs = 30;
    const inFlight = handle.client.nodeGetInfo();
    registry.register(plugin());
    assert.equal(clients.length, 2);
    assert.equal((await inFlight).nodeId, "ext-node-1", "the call in flight was not cancelled");
    await handle.client.nodeGetInfo();
    assert.equal(clients[1]!.callsOf("NodeGetInfo").length, 1);
    await manager.stop();
  },
);

test(
  "volume manager: a NodeStage hung on a plugin that deregisters is staged on its new connection once it is back",
  { timeout: 10_000 },
  async () => {
    const { registry, manager, clients } = setup();
    const hostDir = tempDir("berth-conn-");
    registry.register(plugin({ hostDir }));
    await manager.nodePlugin("fake");
    clients[0]!.hung.add("NodeStageVolume");
    const vm = new VolumeManager({
      plugins: manager,
      log: nullLogger,
      retry: { baseMs: 1, maxMs: 5, deadlineMs: 3_600_000, jitter: 0 },
      callTimeoutMs: 3_600_000,
      // The fake plugin mounts nothing on the host: every stage and publish counts as mounted.
      isMountPoint: async () => true,
    });
    const mounting = vm.mountVolume({
      plugin: plugin({ hostDir }),
      volume: claimedVolume(),
      allocId: "a1",
      usage: {
        readOnly: false,
        accessMode: "single-node-writer",
        attachmentMode: "file-system",
        mountOptions: null,
      },
      publishContext: {},
    });
    await until(() => clients[0]!.callsOf("NodeStageVolume").length === 1);
    registry.deregister("csi-node", "fake", "plugin-alloc");
    registry.register(plugin({ hostDir }));
    const mounted = await mounting;
    assert.match(mounted.source, /per-alloc\/a1\/vol1/);
    assert.deepEqual(
      clients[1]!
        .methods()
        .filter((m) => m.startsWith("Node") && m !== "NodeGetInfo" && m !== "NodeGetCapabilities"),
      ["NodeStageVolume", "NodePublishVolume"],
    );
    await manager.stop();
  },
);
