/**
 * The agent that dies mid-start, for start_gate.test.ts: starts one task through a real driver and,
 * in beforeRun (the handle is known, the command has not run), writes the handle to a file and
 * SIGKILLs itself — a kill -9 of the agent after the handle was persisted, before "go".
 *
 *   node held_start_child.js DRIVER CONFIG_JSON_FILE HANDLE_FILE
 *
 * Without arguments (the test runner loads every file under test/) it does nothing.
 */
import fs from "node:fs";
import type { TaskDriver, TaskStartConfig } from "../../../src/client/drivers/driver.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";

const [driverName, cfgFile, handleFile] = process.argv.slice(2);
if (driverName !== undefined && cfgFile !== undefined && handleFile !== undefined) {
  const driver: TaskDriver = driverName === "exec" ? new ExecDriver() : new RawExecDriver();
  const cfg = JSON.parse(fs.readFileSync(cfgFile, "utf8")) as TaskStartConfig;
  await driver.start(cfg, (handle) => {
    fs.writeFileSync(handleFile, JSON.stringify(handle));
    process.kill(process.pid, "SIGKILL");
  });
  throw new Error("the start went on past a SIGKILL");
}
