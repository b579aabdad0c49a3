import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { startHostpathServer, type HostpathServer } from "../../../src/csi/hostpath/index.js";
import type { HostpathConfig } from "../../../src/csi/hostpath/flags.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import type { CsiClient, CsiVolumeCapability } from "../../../src/csi/types.js";
import { mountsUnder } from "../../helpers/mounts.js";

const writer: CsiVolumeCapability = {
  accessMode: "single-node-writer",
  access: { type: "mount", fsType: "", mountFlags: [] },
};
const code = (c: string) => (e: BerthError) => e.code === c;

/**
 * One controller process and two node processes (A, B) of csi-hostpath, all --attach-required,
 * sharing one state dir: the split deployment the two-node lifecycle test runs under agents.
 */
void describe("csi-hostpath --mode and --attach-required", () => {
  let dir: string;
  const servers: HostpathServer[] = [];
  const clients: CsiClient[] = [];
  let ctrl: CsiClient;
  let nodeA: CsiClient;
  let nodeB: CsiClient;

  const start = async (name: string, mode: HostpathConfig["mode"], nodeId: string): Promise<CsiClient> => {
    const server = await startHostpathServer(
      {
        socketPath: path.join(dir, name, "csi.sock"),
        nodeId,
        stateDir: path.join(dir, "state"),
        maxVolumes: 8,
        topology: nodeId ? { "berth.io/hostname": nodeId } : {},
        callLog: path.join(dir, "calls.jsonl"),
        mode,
        attachRequired: true,
      },
      nullLogger,
    );
    servers.push(server);
    const client = createCsiClient(server.endpoint, { log: nullLogger });
    clients.push(client);
    return client;
  };

  void before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-hpa-"));
    ctrl = await start("ctrl", "controller", "");
    nodeA = await start("a", "node", "A");
    nodeB = await start("b", "node", "B");
  });

  void after(async () => {
    for (const c of clients) c.close();
    for (const s of servers) await s.stop();
    for (const m of await mountsUnder(dir)) execFileSync("umount", ["-l", m]);
    const left = await mountsUnder(dir);
    await fs.rm(dir, { recursive: true, force: true });
    assert.deepEqual(left, []);
  });

  void it("a controller process serves Identity+Controller only, a node process Identity+Node only", async () => {
    const c = await ctrl.getPluginCapabilities();
    assert.equal(c.controllerService, true);
    const cc = await ctrl.controllerGetCapabilities();
    assert.equal(cc.publishUnpublishVolume && cc.createDeleteVolume, true);
    await assert.rejects(ctrl.nodeGetInfo(), code("ERR_CSI_UNIMPLEMENTED"));
    await assert.rejects(ctrl.nodeGetCapabilities(), code("ERR_CSI_UNIMPLEMENTED"));

    const n = await nodeB.getPluginCapabilities();
    assert.equal(n.controllerService, false, "a node process must not advertise CONTROLLER_SERVICE");
    assert.equal(n.volumeAccessibilityConstraints, true);
    await assert.rejects(nodeB.controllerGetCapabilities(), code("ERR_CSI_UNIMPLEMENTED"));
    assert.equal((await nodeB.nodeGetInfo()).nodeId, "B");
    assert.equal((await nodeB.nodeGetCapabilities()).stageUnstageVolume, true);
  });

  void it("publish records the attachment, refuses a second node, and NodeStage needs its publish_context", async () => {
    const vol = await ctrl.createVolume({
      name: "attach-me",
      capacityRange: null,
      volumeCapabilities: [writer],
      parameters: {},
      secrets: {},
      contentSource: null,
      accessibilityRequirements: null,
    });
    assert.deepEqual(vol.accessibleTopology, [], "a controller without a node ID reports no topology");
    const publish = (nodeId: string) =>
      ctrl.controllerPublishVolume({
        volumeId: vol.volumeId,
        nodeId,
        volumeCapability: writer,
        readonly: false,
        secrets: {},
        volumeContext: {},
      });
    const stage = (client: CsiClient, publishContext: Record<string, string>) =>
      client.nodeStageVolume({
        volumeId: vol.volumeId,
        publishContext,
        stagingTargetPath: path.join(dir, "staging", publishContext.attached_to ?? "none"),
        volumeCapability: writer,
        secrets: {},
        volumeContext: {},
      });

    await assert.rejects(stage(nodeB, {}), code("ERR_CSI_FAILED_PRECONDITION"));
    const { publishContext } = await publish("B");
    assert.deepEqual(publishContext, { attached_to: "B" });
    assert.deepEqual((await publish("B")).publishContext, publishContext, "publish is idempotent");
    await assert.rejects(publish("A"), code("ERR_CSI_FAILED_PRECONDITION"));
    await assert.rejects(stage(nodeA, publishContext), code("ERR_CSI_FAILED_PRECONDITION"));
    const staging = path.join(dir, "staging", "B");
    try {
      await stage(nodeB, publishContext);
      await assert.rejects(
        ctrl.deleteVolume({ volumeId: vol.volumeId, secrets: {} }),
        code("ERR_CSI_FAILED_PRECONDITION"),
      );
    } finally {
      await nodeB.nodeUnstageVolume({ volumeId: vol.volumeId, stagingTargetPath: staging });
    }
    const unpublish = (nodeId: string) =>
      ctrl.controllerUnpublishVolume({ volumeId: vol.volumeId, nodeId, secrets: {} });
    await unpublish("B");
    await unpublish("B");
    await ctrl.controllerUnpublishVolume({
      volumeId: "hp-000000000000000000000000",
      nodeId: "B",
      secrets: {},
    });
    assert.deepEqual((await publish("A")).publishContext, { attached_to: "A" }, "free after unpublish");
    await assert.rejects(stage(nodeB, publishContext), code("ERR_CSI_FAILED_PRECONDITION"));
    await unpublish("A");
    await ctrl.deleteVolume({ volumeId: vol.volumeId, secrets: {} });

    const calls = readCallLog(path.join(dir, "calls.jsonl")).filter((c) => c.volume_id === vol.volumeId);
    assert.deepEqual(
      calls.filter((c) => c.method.startsWith("Node")).map((c) => `${c.method}:${c.node_id}:${c.code}`),
      [
        "NodeStageVolume:B:FAILED_PRECONDITION",
        "NodeStageVolume:A:FAILED_PRECONDITION",
        "NodeStageVolume:B:OK",
        "NodeUnstageVolume:B:OK",
        "NodeStageVolume:B:FAILED_PRECONDITION",
      ],
      "node calls are recorded with the serving node's ID",
    );
    assert.deepEqual(await mountsUnder(dir), []);
  });
});
