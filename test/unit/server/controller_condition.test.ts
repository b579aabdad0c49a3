/**
 * The leader's controller condition poll (server/volumecondition/poller.ts), unit: a real SQLite
 * store and the real controller client, fake node connections answering ClientCSI calls. A pass
 * writes a volume's condition once, then nothing while it stays the same (no index moves), and
 * again when it changes; only plugins whose healthy controller advertises GET_VOLUME and
 * VOLUME_CONDITION are asked; a busy volume is skipped; NOT_FOUND is an abnormal condition; any
 * other failure changes nothing; secrets never reach the stored message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { NodeConnections, type NodeConn } from "../../../src/server/clientconn/connections.js";
import { ControllerClient } from "../../../src/server/clientconn/controller.js";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { ControllerConditionPoller } from "../../../src/server/volumecondition/poller.js";
import { KeyedMutex } from "../../../src/internal/keyed_mutex.js";
import { nullLogger } from "../../../src/internal/log.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { ControllerGetVolumeResponse } from "../../../src/structs/volume_condition.js";
import type { CSIControllerInfo } from "../../../src/structs/plugin.js";
import { makeNode } from "../../builders/node.js";
import { makeVolume } from "../../builders/volume.js";
import { controllerInfo } from "../../builders/plugin_info.js";

type Answer = ControllerGetVolumeResponse["Condition"] | BerthError;

/** A node connection whose ControllerGetVolume answers from `answers` (by external ID). */
function node(answers: Map<string, Answer>): NodeConn & { asked: string[] } {
  const c = {
    isOpen: true,
    asked: [] as string[],
    call: (method: string, params: { ExternalVolumeID: string }) => {
      if (method !== "ClientCSI.ControllerGetVolume")
        return Promise.reject(new Error(`unexpected ${method}`));
      c.asked.push(params.ExternalVolumeID);
      const a = answers.get(params.ExternalVolumeID);
      if (a instanceof BerthError) return Promise.reject(a);
      return Promise.resolve({
        ExternalID: params.ExternalVolumeID,
        PublishedExternalNodeIDs: [],
        Condition: a ?? null,
      });
    },
    close: () => undefined,
  };
  return c as unknown as NodeConn & { asked: string[] };
}

const caps = (over: Partial<CSIControllerInfo>) =>
  controllerInfo("p1", true, {
    ControllerInfo: { ...controllerInfo("p1").ControllerInfo!, ...over },
  });

async function setup(over: Partial<CSIControllerInfo> = { SupportsGet: true, SupportsCondition: true }) {
  const store = new SqliteStateStore(null);
  await store.txn((tx) => {
    tx.putNode(makeNode("n1", { CSIControllerPlugins: { p1: caps(over) } }));
    tx.putVolume(makeVolume("v1", { Secrets: { token: "hunter2-secret" } }));
    tx.putVolume(makeVolume("v2"));
  });
  const answers = new Map<string, Answer>([
    ["ext-v1", { Abnormal: false, Message: "present" }],
    ["ext-v2", { Abnormal: false, Message: "present" }],
  ]);
  const conn = node(answers);
  const conns = new NodeConnections();
  conns.add("n1", conn);
  const locks = new KeyedMutex();
  let now = 1_000;
  const poller = new ControllerConditionPoller(
    store,
    new ControllerClient(store, conns, nullLogger),
    locks,
    nullLogger,
    { concurrency: 2 },
    () => now,
  );
  const cond = (id: string) => store.getVolume("default", id)?.ControllerCondition;
  return { store, answers, conn, locks, poller, cond, tick: () => (now += 1_000) };
}

test("controller condition poll: written once, nothing while unchanged, again on a change", async () => {
  const { store, answers, poller, cond, tick } = await setup();
  const first = await poller.pass();
  assert.deepEqual([first.polled, first.written, first.failed], [2, 2, 0]);
  assert.deepEqual(cond("v1"), { Abnormal: false, Message: "present", UpdateTime: 1_000 * 1e6 });

  const index = store.tableIndex("volumes");
  tick();
  const steady = await poller.pass();
  assert.deepEqual([steady.polled, steady.written], [2, 0]);
  assert.equal(store.tableIndex("volumes"), index, "an unchanged condition writes nothing");

  answers.set("ext-v1", { Abnormal: true, Message: "lost; token hunter2-secret rejected" });
  tick();
  const changed = await poller.pass();
  assert.deepEqual([changed.polled, changed.written], [2, 1]);
  assert.deepEqual(cond("v1"), {
    Abnormal: true,
    Message: "lost; token [REDACTED] rejected",
    UpdateTime: 3_000 * 1e6,
  });
  assert.equal(cond("v2")!.UpdateTime, 1_000 * 1e6, "the other volume untouched");
  store.close();
});

test("controller condition poll: only a controller advertising GET_VOLUME and VOLUME_CONDITION is asked", async () => {
  for (const over of [
    { SupportsGet: true, SupportsCondition: false },
    { SupportsGet: false, SupportsCondition: true },
  ]) {
    const { store, conn, poller, cond } = await setup(over);
    const r = await poller.pass();
    assert.deepEqual([r.polled, r.written, conn.asked.length], [0, 0, 0], JSON.stringify(over));
    assert.equal(cond("v1"), undefined);
    store.close();
  }
});

test("controller condition poll: a volume whose lock is held is skipped this pass", async () => {
  const { store, conn, locks, poller, cond } = await setup();
  let release!: () => void;
  const held = locks.run("default/v1", () => new Promise<void>((r) => (release = r)));
  const r = await poller.pass();
  assert.deepEqual([r.polled, r.skippedBusy], [1, 1]);
  assert.deepEqual(conn.asked, ["ext-v2"]);
  assert.equal(cond("v1"), undefined);
  release();
  await held;
  store.close();
});

test("controller condition poll: NOT_FOUND is abnormal; another failure changes nothing", async () => {
  const { store, answers, poller, cond } = await setup();
  await poller.pass();
  answers.set("ext-v1", new BerthError("ERR_CSI_NOT_FOUND", "CSI ControllerGetVolume: volume not found"));
  answers.set("ext-v2", new BerthError("ERR_CSI_INTERNAL", "CSI ControllerGetVolume: boom"));
  const r = await poller.pass();
  assert.deepEqual([r.polled, r.written, r.failed], [1, 1, 1]);
  assert.equal(cond("v1")!.Abnormal, true);
  assert.match(cond("v1")!.Message, /does not know volume ext-v1/);
  assert.deepEqual(cond("v2"), { Abnormal: false, Message: "present", UpdateTime: 1_000 * 1e6 });
  store.close();
});

test("controller condition poll: an answer for a volume deleted meanwhile writes nothing", async () => {
  const { store, conn, poller } = await setup();
  const call = conn.call.bind(conn);
  conn.call = async (...args: Parameters<typeof call>) => {
    const res = await call(...args);
    if ((args[1] as { ExternalVolumeID: string }).ExternalVolumeID === "ext-v1") {
      await store.txn((tx) => tx.deleteVolume("default", "v1"));
    }
    return res;
  };
  const r = await poller.pass();
  assert.deepEqual([r.polled, r.written], [2, 1]);
  assert.equal(store.getVolume("default", "v1"), undefined, "not brought back by the poll");
  store.close();
});
