/**
 * csi-hostpath's `noop` fault through a real server and client: NodePublishVolume answers success
 * while mounting nothing (what berth's mount check must catch), then, used up, runs for real.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { startHostpathServer, type HostpathConfig } from "../../../src/csi/hostpath/index.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { csiCapabilityOf } from "../../../src/csi/capability_of.js";
import type { NodePublishRequest } from "../../../src/csi/types.js";

void describe("csi-hostpath noop fault", () => {
  let dir: string;
  const config = (over: Partial<HostpathConfig> = {}): HostpathConfig => ({
    socketPath: path.join(dir, "csi.sock"),
    nodeId: "node-1",
    stateDir: path.join(dir, "state"),
    maxVolumes: 4,
    topology: {},
    callLog: null,
    faults: null,
    mode: "monolith",
    attachRequired: false,
    ...over,
  });

  void before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-hp-noop-"));
  });

  void after(async () => {
    assert.deepEqual(await mountsUnder(dir), [], "nothing mounted");
    fs.rmSync(dir, { recursive: true, force: true });
  });

  void it("a noop NodePublishVolume fault answers success and mounts nothing", async () => {
    const faults = path.join(dir, "faults.json");
    fs.writeFileSync(faults, JSON.stringify({ NodePublishVolume: { noop: true } }));
    const server = await startHostpathServer(config({ faults }), nullLogger);
    const client = createCsiClient(server.endpoint, { log: nullLogger });
    const target = path.join(dir, "per-alloc", "a1", "v1");
    const req: NodePublishRequest = {
      volumeId: "v1",
      publishContext: {},
      stagingTargetPath: path.join(dir, "staging", "v1"),
      targetPath: target,
      volumeCapability: csiCapabilityOf("single-node-writer", "file-system", null, false),
      readonly: false,
      secrets: {},
      volumeContext: {},
    };
    try {
      await client.nodePublishVolume(req);
      assert.equal(fs.existsSync(target), false, "no target was made, nothing mounted");
      // Used up (times defaults to 1): the real handler runs and refuses an unknown volume.
      await assert.rejects(client.nodePublishVolume(req), /not found/);
    } finally {
      client.close();
      await server.stop();
    }
  });
});
