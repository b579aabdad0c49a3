/**
 * Snapshots of the etcd store, between two real etcd clusters: a server on etcd #1 (a simulated
 * node with a CSI plugin, a volume with secrets, a namespace, a job) is saved while it serves; the
 * file holds the state at one etcd revision with the secrets sealed under that server's new key
 * (never in the clear). Two fresh servers on etcd #2: the follower answers ERR_NO_LEADER naming
 * the leader; the leader restores (after the operator copied the key file into its keystore), and
 * both servers' replicas come to the restored records with their indexes, above the snapshot's
 * index, a blocking query on the follower wakes, and writes go on above it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { ApiClient } from "../../../src/api/index.js";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeSim } from "../../../src/nodesim/nodesim.js";
import { Server } from "../../../src/server/server.js";
import { createEtcdClient } from "../../../src/server/state/etcd/client.js";
import { EtcdLog } from "../../../src/server/state/etcd/log.js";
import { eventually } from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";

const SECRET = "etcd-secret-do-not-leak";

test(
  "etcd: save at one revision, restore into another etcd cluster",
  { skip: !etcdAvailable() && "no etcd" },
  async (t) => {
    const dir = fs.mkdtempSync(path.join(tmpdir(), "berth-etcdsnap-"));
    const etcds: EtcdServer[] = [];
    const servers: Server[] = [];
    const sims: NodeSim[] = [];
    t.after(async () => {
      for (const sim of sims) await sim.stop();
      for (const s of servers) await s.stop();
      for (const e of etcds) await e.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const server = async (name: string, etcd: EtcdServer) => {
      const s = new Server({
        dataDir: path.join(dir, name),
        httpAddr: "127.0.0.1:0",
        log: nullLogger,
        heartbeatTtlMs: 300_000,
        etcd: { endpoints: [etcd.endpoint], prefix: "/snap" },
        member: { name, leaseTtlSec: 2 },
      });
      servers.push(s);
      await s.start();
      return s;
    };
    etcds.push(await startEtcd(), await startEtcd());
    const a = await server("a", etcds[0]!);
    const apiA = new ApiClient({ address: a.httpAddress });
    await eventually("a to lead", async () => (a.leadership.state === "leader" ? true : undefined), 20_000);
    const sim = new NodeSim({
      count: 1,
      servers: [a.httpAddress],
      pluginId: "hostpath",
      csi: { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 0 },
      namePrefix: "etcdsnap",
      dataDir: null,
      log: nullLogger,
    });
    sims.push(sim);
    await sim.start();
    await eventually("the plugin to be healthy", async () =>
      (await apiA.plugins.list()).some((p) => p.NodesHealthy > 0) ? true : undefined,
    );
    await apiA.namespaces.register({ Name: "prod", Description: "" });
    await apiA.volumes.register({
      ID: "vol",
      Name: "vol",
      Namespace: "default",
      PluginID: "hostpath",
      ExternalID: "ext-1",
      Secrets: { password: SECRET },
      RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    });

    const { file, header } = await apiA.operator.snapshot();
    assert.equal(header.Mode, "etcd");
    assert.ok(header.Term > 0, "the etcd revision read at");
    assert.equal(header.KeyIDs.length, 1, "sealed under a's new key");
    assert.ok(fs.readdirSync(path.join(dir, "a", "keystore")).length === 1);
    const image = gunzipSync(file.subarray(file.indexOf(0x0a, 15) + 1));
    assert.ok(!image.includes(SECRET), "the secret is not in the image in the clear");
    assert.ok(image.includes("berth:sealed:v1"));
    const volA = await apiA.volumes.info("vol");

    const b0 = await server("b0", etcds[1]!);
    const b1 = await server("b1", etcds[1]!);
    const leader = await eventually(
      "one leader on etcd #2",
      async () => {
        const l = [b0, b1].filter((s) => s.leadership.state === "leader");
        return l.length === 1 ? l[0] : undefined;
      },
      20_000,
    );
    const follower = leader === b0 ? b1 : b0;
    await eventually("the follower to know the leader", async () => {
      const r = await fetch(`${follower.httpAddress}/v1/status/leader`);
      return ((await r.json()) as string) !== "" ? true : undefined;
    });
    const refused = await fetch(`${follower.httpAddress}/v1/operator/snapshot`, {
      method: "PUT",
      body: new Uint8Array(file),
    });
    assert.equal(refused.status, 503);
    assert.match(await refused.text(), new RegExp(`does not lead the cluster.*${leader.httpAddress}`));

    const leaderDir = path.join(dir, leader === b0 ? "b0" : "b1");
    const wrong = await fetch(`${leader.httpAddress}/v1/operator/snapshot`, {
      method: "PUT",
      body: new Uint8Array(file),
    });
    assert.equal(wrong.status, 400);
    assert.match(await wrong.text(), /keystore/);
    fs.mkdirSync(path.join(leaderDir, "keystore"), { recursive: true, mode: 0o700 });
    for (const f of fs.readdirSync(path.join(dir, "a", "keystore"))) {
      fs.copyFileSync(path.join(dir, "a", "keystore", f), path.join(leaderDir, "keystore", f));
    }
    const apiF = new ApiClient({ address: follower.httpAddress });
    const before = await fetch(`${follower.httpAddress}/v1/namespaces`);
    const fIndex = Number(before.headers.get("X-Nomad-Index"));
    const asked = Date.now();
    const waiting = fetch(`${follower.httpAddress}/v1/namespaces?index=${fIndex}&wait=300s`);
    const { Index } = await new ApiClient({ address: leader.httpAddress }).operator.snapshotRestore(file);
    assert.ok(Index > header.Index, `restored at ${Index}, above the snapshot's ${header.Index}`);
    const woke = await waiting;
    // Woken by the restore, not by the end of its 300 s wait (a bound no run comes near).
    assert.ok(Date.now() - asked < 120_000, "the blocking query woke");
    assert.ok(Number(woke.headers.get("X-Nomad-Index")) >= Index - 1, "the follower's blocking query woke");

    for (const s of [leader, follower]) {
      const api = new ApiClient({ address: s.httpAddress });
      await eventually("the replica to apply the restore", async () => {
        const r = await fetch(`${s.httpAddress}/v1/volumes?type=csi`);
        return Number(r.headers.get("X-Nomad-Index")) >= Index ? true : undefined;
      });
      const vol = await api.volumes.info("vol");
      assert.equal(vol.ModifyIndex, volA.ModifyIndex);
      assert.equal(vol.CreateIndex, volA.CreateIndex);
      assert.equal(vol.ExternalID, "ext-1");
      assert.deepEqual(
        (await api.namespaces.list()).map((n) => n.Name),
        ["default", "prod"],
      );
      assert.equal((await api.nodes.list()).length, 1);
    }
    // etcd keeps secrets as records (README "State on etcd"): the restore opened them for it.
    const client = createEtcdClient([etcds[1]!.endpoint], 5_000);
    try {
      const etcdLog = new EtcdLog(client, "/snap", 1024 * 1024);
      const { pointer, revision } = await etcdLog.readSnapPointer();
      const dump = await etcdLog.readSnapshot(pointer!, revision);
      const volumes = JSON.stringify(dump.tables.volumes);
      assert.ok(volumes.includes(SECRET) && !volumes.includes("berth:sealed"), "stored as etcd stores them");
    } finally {
      client.close();
    }
    await apiF.namespaces.register({ Name: "after", Description: "" });
    assert.ok((await apiF.namespaces.info("after")).CreateIndex > Index);
  },
);
