/**
 * csi-hostpath --faults through a real server and client: an injected failure reaches the client as
 * its code and is marked in the call log; a hang holds the volume's in-flight slot, so a second call
 * for that volume meanwhile answers ABORTED, and the hung call then runs normally.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import type { BerthError } from "../../../src/structs/errors.js";
import { createCsiClient } from "../../../src/csi/client.js";
import { startHostpathServer, type HostpathServer } from "../../../src/csi/hostpath/index.js";
import { readCallLog } from "../../../src/csi/hostpath/call_log.js";
import type { CsiClient } from "../../../src/csi/types.js";

void describe("csi-hostpath --faults", () => {
  let dir: string;
  let faultsFile: string;
  let server: HostpathServer;
  let client: CsiClient;

  void before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-hp-faults-"));
    faultsFile = path.join(dir, "faults.json");
    server = await startHostpathServer(
      {
        socketPath: path.join(dir, "csi.sock"),
        nodeId: "node-1",
        stateDir: path.join(dir, "state"),
        maxVolumes: 4,
        topology: {},
        callLog: path.join(dir, "calls.jsonl"),
        faults: faultsFile,
        mode: "monolith",
        attachRequired: false,
      },
      nullLogger,
    );
    client = createCsiClient(server.endpoint, { log: nullLogger });
  });

  void after(async () => {
    client.close();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function setFaults(faults: object): void {
    fs.writeFileSync(faultsFile + ".tmp", JSON.stringify(faults));
    fs.renameSync(faultsFile + ".tmp", faultsFile);
  }

  void it("fails the named method with the named code, marked as injected in the call log", async () => {
    setFaults({ NodeUnstageVolume: { code: "UNAVAILABLE", times: 1 } });
    const req = { volumeId: "v1", stagingTargetPath: path.join(dir, "staging", "v1") };
    await assert.rejects(client.nodeUnstageVolume(req), (e: BerthError) => e.code === "ERR_CSI_UNAVAILABLE");
    await client.nodeUnstageVolume(req);
    const calls = readCallLog(path.join(dir, "calls.jsonl")).filter((c) => c.volume_id === "v1");
    assert.deepEqual(
      calls.map((c) => [c.method, c.code, c.fault ?? false, c.target]),
      [
        ["NodeUnstageVolume", "UNAVAILABLE", true, req.stagingTargetPath],
        ["NodeUnstageVolume", "OK", false, req.stagingTargetPath],
      ],
    );
  });

  void it("a hang keeps the volume busy (concurrent calls are ABORTED), then the call runs", async () => {
    setFaults({ NodeUnpublishVolume: { hangMs: 600 } });
    const target = path.join(dir, "per-alloc", "a1", "v2");
    const started = Date.now();
    const hung = client.nodeUnpublishVolume({ volumeId: "v2", targetPath: target });
    await new Promise((r) => setTimeout(r, 100));
    await assert.rejects(
      client.nodeUnstageVolume({ volumeId: "v2", stagingTargetPath: path.join(dir, "staging", "v2") }),
      (e: BerthError) => e.code === "ERR_CSI_ABORTED",
    );
    await hung;
    assert.ok(Date.now() - started >= 550, "the call waited for the hang");
    const calls = readCallLog(path.join(dir, "calls.jsonl")).filter((c) => c.volume_id === "v2");
    assert.deepEqual(
      calls.map((c) => `${c.method}:${c.code}`),
      ["NodeUnstageVolume:ABORTED", "NodeUnpublishVolume:OK"],
    );
  });
});
