/** The StateStore conformance suite against the SQLite store on a real file in a temp dir. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { runStateStoreConformance } from "../../conformance/state_store.js";
import { runScaleConformance } from "../../conformance/state_store_scale.js";
import { runPluginCapacityConformance } from "../../conformance/plugin_capacity.js";

runStateStoreConformance("sqlite (file)", async ({ now }) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-conformance-"));
  return {
    store: new SqliteStateStore(dir, { now }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

runScaleConformance("sqlite (file)", async ({ now }) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-conformance-"));
  return {
    store: new SqliteStateStore(dir, { now }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

runPluginCapacityConformance("sqlite (file)", async ({ now }) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-conformance-"));
  return {
    store: new SqliteStateStore(dir, { now }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
