import assert from "node:assert/strict";
import { test } from "node:test";
import { PluginRegistry, type RegistryEvent } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import { isBerthError } from "../../../src/structs/errors.js";
import { plugin } from "../../builders/client_records.js";
import { tempDir } from "../../helpers/temp_dir.js";

test("registry: register/deregister persist and notify; deregister needs the owning alloc", () => {
  const dir = tempDir();
  const db = StateDB.open(dir);
  const reg = new PluginRegistry(db, nullLogger);
  const events: RegistryEvent[] = [];
  const unsubscribe = reg.subscribe((e) => events.push(e));
  reg.register(plugin());
  reg.register(plugin({ role: "csi-controller" }));
  assert.equal(reg.list("csi-node").length, 1);
  assert.equal(reg.get("csi-controller", "fake")?.role, "csi-controller");

  reg.deregister("csi-node", "fake", "some-other-alloc");
  assert.ok(reg.get("csi-node", "fake"), "a newer alloc's registration is not removed");

  const reloaded = new PluginRegistry(StateDB.open(dir), nullLogger);
  assert.equal(reloaded.list("csi-node").length, 1);
  assert.equal(reloaded.list("csi-controller").length, 1);

  reg.deregister("csi-node", "fake", "plugin-alloc");
  assert.equal(reg.get("csi-node", "fake"), undefined);
  assert.deepEqual(
    events.map((e) => `${e.type}:${e.plugin.role}`),
    ["register:csi-node", "register:csi-controller", "deregister:csi-node"],
  );
  unsubscribe();
  reg.register(plugin());
  assert.equal(events.length, 3);
  assert.equal(new PluginRegistry(db, nullLogger).list("csi-node").length, 1);
});

test("registry: waitForPlugin resolves at once, on registration, or fails naming the plugin", async () => {
  const reg = new PluginRegistry(StateDB.open(":memory:"), nullLogger);
  reg.register(plugin({ pluginId: "here" }));
  assert.equal((await reg.waitForPlugin("csi-node", "here")).pluginId, "here");

  const later = reg.waitForPlugin("csi-node", "later", { timeoutMs: 5000 });
  reg.register(plugin({ pluginId: "later", role: "csi-controller" }));
  reg.register(plugin({ pluginId: "later" }));
  assert.equal((await later).role, "csi-node");

  await assert.rejects(reg.waitForPlugin("csi-node", "never", { timeoutMs: 20 }), (err) => {
    assert.ok(isBerthError(err));
    assert.equal(err.code, "ERR_CSI_PLUGIN_UNAVAILABLE");
    assert.match(err.message, /"never"/);
    return true;
  });

  const ac = new AbortController();
  const aborted = reg.waitForPlugin("csi-node", "never", { signal: ac.signal });
  ac.abort();
  await assert.rejects(aborted, { name: "AbortError" });
});

test("registry: an entry restored from the DB is not taken by waiters until its supervisor registers it again", async () => {
  const db = StateDB.open(":memory:");
  new PluginRegistry(db, nullLogger).register(plugin());
  const restored = new PluginRegistry(db, nullLogger);
  assert.ok(restored.get("csi-node", "fake"), "restored, readable");
  await assert.rejects(restored.waitForPlugin("csi-node", "fake", { timeoutMs: 20 }), /did not register/);
  const waiting = restored.waitForPlugin("csi-node", "fake", { timeoutMs: 5000 });
  restored.register(plugin({ registeredAt: 2 }));
  assert.equal((await waiting).registeredAt, 2);
  assert.equal((await restored.waitForPlugin("csi-node", "fake")).registeredAt, 2, "confirmed: at once");
});
