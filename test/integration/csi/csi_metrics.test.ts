/**
 * CSI call metrics over real gRPC (the node agent's connection factory, csi_metrics.ts, against
 * FakeCsiPlugin on a unix socket): each call is counted per plugin, RPC and gRPC status name and
 * timed per plugin and RPC; a call berth cancels counts as CANCELLED; a plugin's error message
 * (which may echo a secret) never reaches the metrics.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { status } from "@grpc/grpc-js";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import { csiClientFactory } from "../../../src/client/csi_metrics.js";
import { FakeCsiPlugin } from "../../../src/csi/fake/index.js";
import type { CsiClient } from "../../../src/csi/types.js";

const SECRET = "s3cr3t-in-a-plugin-message";
let dir: string;
let plugin: FakeCsiPlugin;
let client: CsiClient;
const telemetry = new Telemetry({ disableHostname: true });

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-csimetrics-"));
  plugin = await FakeCsiPlugin.start({
    socketPath: path.join(dir, "csi.sock"),
    nodeInfo: { nodeId: "n1", maxVolumesPerNode: 3, accessibleTopology: null },
  });
  client = csiClientFactory(nullLogger, telemetry)(plugin.endpoint, "hostpath");
});

after(async () => {
  client.close();
  await plugin.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

const target = {
  volumeId: "v1",
  stagingTargetPath: "/staging/v1",
  targetPath: "/target/v1",
};

test("calls are counted by plugin, RPC and gRPC code, and timed per plugin and RPC", async () => {
  await client.probe();
  await client.probe();
  plugin.failNext("NodeUnpublishVolume", 1, { code: status.NOT_FOUND, message: `no volume ${SECRET}` });
  await assert.rejects(client.nodeUnpublishVolume(target));
  plugin.failNext("NodeUnstageVolume", 1, { code: status.FAILED_PRECONDITION, message: SECRET });
  await assert.rejects(client.nodeUnstageVolume(target));
  plugin.on("NodeGetInfo", { hang: true }, { times: 1 });
  const ac = new AbortController();
  const hung = client.nodeGetInfo({ signal: ac.signal });
  setTimeout(() => ac.abort(), 50);
  await assert.rejects(hung);

  const text = await telemetry.prometheus();
  const has = (line: string) => assert.ok(text.split("\n").includes(line), `${line} in\n${text}`);
  has('berth_client_csi_rpc_calls_total{plugin_id="hostpath",rpc="Probe",code="OK"} 2');
  has('berth_client_csi_rpc_calls_total{plugin_id="hostpath",rpc="NodeUnpublishVolume",code="NOT_FOUND"} 1');
  has(
    'berth_client_csi_rpc_calls_total{plugin_id="hostpath",rpc="NodeUnstageVolume",code="FAILED_PRECONDITION"} 1',
  );
  has('berth_client_csi_rpc_calls_total{plugin_id="hostpath",rpc="NodeGetInfo",code="CANCELLED"} 1');
  has('berth_client_csi_rpc_duration_seconds_count{plugin_id="hostpath",rpc="Probe"} 2');
  has('berth_client_csi_rpc_duration_seconds_bucket{le="+Inf",plugin_id="hostpath",rpc="Probe"} 2');
  assert.ok(!text.includes(SECRET), "no plugin message in the metrics");

  const json = await telemetry.summary();
  const probe = json.Samples.find(
    (s) => s.Name === "berth.client.csi.rpc.duration" && s.Labels.rpc === "Probe",
  );
  assert.equal(probe?.Count, 2);
  assert.ok(!JSON.stringify(json).includes(SECRET));
});
