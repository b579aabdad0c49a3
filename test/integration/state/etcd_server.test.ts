/**
 * The test etcd launcher itself: a real etcd member on loopback that the `etcd3` client reads and
 * writes, and that is gone (process and data dir) after stop().
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { test } from "node:test";
import { Etcd3 } from "etcd3";
import { startEtcd } from "../../helpers/etcd_server.js";

test("a real etcd member on loopback: put, get, then stopped with nothing left", async () => {
  const etcd = await startEtcd();
  const client = new Etcd3({ hosts: etcd.endpoint });
  try {
    await client.put("berth/probe").value("1");
    assert.equal(await client.get("berth/probe").string(), "1");
  } finally {
    client.close();
    await etcd.stop();
  }
  assert.notEqual(etcd.process.exitCode ?? etcd.process.signalCode, null);
  assert.equal(fs.existsSync(etcd.dataDir), false);
});
