/**
 * Who tears a CSI plugin's host dir down (plugin_dirs.ts): the pure rule, and the owner reading its
 * facts from a real (in-memory) client state DB, with the teardown itself recorded instead of run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { StateDB } from "../../../src/client/state/state_db.js";
import {
  PluginDirs,
  pluginHostDir,
  teardownDecision,
} from "../../../src/client/allocrunner/taskrunner/plugin_dirs.js";
import type { TaskCSIPluginConfig } from "../../../src/structs/job.js";
import { allocWith, task } from "../../builders/csi_alloc.js";
import { stub } from "../../builders/client_records.js";

const DATA = "/var/lib/berth-test";
const CFG: TaskCSIPluginConfig = {
  ID: "hostpath",
  Type: "monolith",
  MountDir: "/csi",
  StagePublishBaseDir: "",
  HealthTimeout: 0,
};
const DIR = pluginHostDir(DATA, CFG);

test("teardownDecision: only the last user tears down, never while a successor or a volume uses the dir", () => {
  const none = { holders: new Set<string>(), volumeUses: [] };
  assert.deepEqual(teardownDecision("old/plugin", none), { tearDown: true });
  assert.deepEqual(teardownDecision(null, none), { tearDown: true });
  assert.deepEqual(
    teardownDecision("old/plugin", { holders: new Set(["old/plugin"]), volumeUses: [] }),
    { tearDown: true },
    "the leaving task is not a holder of its own",
  );
  const successor = teardownDecision("old/plugin", {
    holders: new Set(["old/plugin", "new/plugin"]),
    volumeUses: [],
  });
  assert.equal(successor.tearDown, false);
  assert.match(!successor.tearDown ? successor.reason : "", /still used by plugin task new\/plugin/);
  const volume = teardownDecision("old/plugin", { holders: new Set(), volumeUses: ["web/data"] });
  assert.equal(volume.tearDown, false);
  assert.match(!volume.tearDown ? volume.reason : "", /in use or pending release: web\/data/);
  assert.equal(
    teardownDecision(null, { holders: new Set(["new/plugin"]), volumeUses: [] }).tearDown,
    false,
    "a completed release does not tear down a dir a running plugin uses",
  );
});

function pluginAlloc(id: string) {
  const t = { ...task("plugin"), CSIPluginConfig: CFG };
  const a = allocWith({}, { ID: id });
  a.Job.TaskGroups[0]!.Tasks = [t];
  return a;
}

function owner(db: StateDB) {
  const tornDown: string[] = [];
  const dirs = new PluginDirs({
    dataDir: DATA,
    store: db,
    tearDown: async (dir) => void tornDown.push(dir),
  });
  return { dirs, tornDown };
}

test("PluginDirs: a plugin update (successor starting while the old alloc stops) keeps the dir", async () => {
  const db = StateDB.open(":memory:");
  const { dirs, tornDown } = owner(db);
  const prepared: string[] = [];
  await dirs.acquire(DIR, "old/plugin", async () => void prepared.push("old"));
  await dirs.acquire(DIR, "new/plugin", async () => void prepared.push("new"));
  assert.deepEqual(prepared, ["old", "new"]);
  assert.equal((await dirs.leave(DIR, "old/plugin")).tearDown, false);
  assert.deepEqual(tornDown, [], "the successor holds it");
  assert.equal((await dirs.leave(DIR, "new/plugin")).tearDown, true);
  assert.deepEqual(tornDown, [DIR], "the last plugin task tears it down");
});

test("PluginDirs: a plugin task recorded in the state DB (re-attached after a restart) holds the dir", async () => {
  const db = StateDB.open(":memory:");
  const successor = pluginAlloc("new");
  db.putAlloc(successor);
  db.putTaskHandle("new", "plugin", { pid: 1 } as never);
  const { dirs, tornDown } = owner(db);
  dirs.hold(DIR, "old/plugin");
  const kept = await dirs.leave(DIR, "old/plugin");
  assert.equal(kept.tearDown, false);
  assert.deepEqual(tornDown, []);
  db.deleteTaskHandle("new", "plugin");
  assert.equal((await dirs.leave(DIR, "old/plugin")).tearDown, true, "handle gone: nobody left");
});

test("PluginDirs: volumes in use or pending release keep the dir; the last completed release tears it down", async () => {
  const db = StateDB.open(":memory:");
  const { dirs, tornDown } = owner(db);
  const inDir = stub({
    pluginId: "hostpath",
    stagingPath: `${DIR}/staging/default/vol1/rw-file-system-single-node-writer`,
    targetPath: `${DIR}/per-alloc/web/vol1/rw-file-system-single-node-writer`,
  });
  db.putVolumeStubs("web", { data: inDir });
  // A stub under another plugin's dir does not count.
  db.putVolumeStubs("other", {
    data: stub({ targetPath: `${DATA}/client/csi/node/other/per-alloc/x/v/k`, stagingPath: "" }),
  });
  dirs.hold(DIR, "plugin-alloc/plugin");
  assert.equal((await dirs.leave(DIR, "plugin-alloc/plugin")).tearDown, false, "a consumer runs");
  assert.deepEqual(dirs.facts(DIR).volumeUses, ["web/data"]);

  db.putPendingRelease("web", "data", { stub: inDir, unmounted: false });
  await dirs.volumeReleased(inDir);
  assert.deepEqual(tornDown, [], "still pending release");

  db.completeRelease("web", "data");
  db.putPendingRelease("gone", "data", { stub: inDir, unmounted: true });
  assert.deepEqual(dirs.facts(DIR).volumeUses, [], "an unmounted release does not need the dir");
  await dirs.volumeReleased(inDir);
  assert.deepEqual(tornDown, [DIR], "the last volume gone, no plugin task: torn down");

  await dirs.volumeReleased(stub({ targetPath: "/elsewhere/x", stagingPath: "" }));
  assert.deepEqual(tornDown, [DIR], "a path outside the plugin dirs is ignored");
});

test("PluginDirs: a successor's setup waits for a predecessor's teardown, never the other way round", async () => {
  const db = StateDB.open(":memory:");
  const order: string[] = [];
  let finishTeardown!: () => void;
  const dirs = new PluginDirs({
    dataDir: DATA,
    store: db,
    tearDown: async () => {
      order.push("teardown start");
      await new Promise<void>((r) => (finishTeardown = r));
      order.push("teardown end");
    },
  });
  dirs.hold(DIR, "old/plugin");
  const leaving = dirs.leave(DIR, "old/plugin");
  await new Promise((r) => setTimeout(r, 5));
  const starting = dirs.acquire(DIR, "new/plugin", async () => void order.push("successor setup"));
  await new Promise((r) => setTimeout(r, 5));
  finishTeardown();
  await Promise.all([leaving, starting]);
  assert.deepEqual(order, ["teardown start", "teardown end", "successor setup"]);
  assert.equal((await dirs.leave(DIR, "other/x")).tearDown, false, "the successor holds it now");
});
