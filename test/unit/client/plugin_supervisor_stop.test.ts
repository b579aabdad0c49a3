/**
 * A normal plugin stop is not an error (issue 8 item 10): the task runner stops a plugin task by
 * aborting its signal with a BerthError reason ("task killed: …"), which the supervisor's health
 * loop must take as the end of the loop, logged at debug, not "plugin health loop failed" at ERROR.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PluginSupervisorHook } from "../../../src/client/allocrunner/taskrunner/plugin_supervisor_hook.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import type { TaskHandle } from "../../../src/client/drivers/driver.js";
import { createLogger } from "../../../src/internal/log.js";
import { BerthError } from "../../../src/structs/errors.js";
import { allocWith, task } from "../../builders/csi_alloc.js";
import { tempDir } from "../../helpers/temp_dir.js";

test("a plugin task stopped by its runner ends the health loop without an ERROR line", async () => {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
  const registry = new PluginRegistry(StateDB.open(":memory:"), log);
  let probes = 0;
  const hook = new PluginSupervisorHook({
    alloc: allocWith({}),
    task: task("plugin"),
    plugin: { ID: "hp", Type: "node", MountDir: "/csi", StagePublishBaseDir: "", HealthTimeout: 0 },
    dataDir: tempDir("berth-sup-"),
    registrar: registry,
    lifecycle: { emitEvent: () => undefined, restart: async () => undefined },
    log,
    options: {
      probe: async () => {
        probes++;
        return true;
      },
      probeIntervalMs: 1,
    },
    driverSupportsMounts: false,
  });
  const taskSignal = new AbortController();
  await hook.poststart({} as TaskHandle, taskSignal.signal);
  assert.ok(registry.get("csi-node", "hp"), "registered once healthy");
  while (probes < 3) await new Promise((r) => setTimeout(r, 1));

  taskSignal.abort(new BerthError("ERR_ABORTED", "task killed: alloc desired status is stop"));
  await hook.exited({ exitCode: 0, signal: 0, oomKilled: false } as never);
  assert.equal(registry.get("csi-node", "hp"), undefined, "deregistered");
  assert.deepEqual(
    lines.filter((l) => l.includes("[ERROR]")),
    [],
  );
  assert.ok(lines.some((l) => l.includes("[DEBUG]") && l.includes("plugin health loop stopped")));
});
