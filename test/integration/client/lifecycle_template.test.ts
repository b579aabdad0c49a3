/**
 * Lifecycle and templates end to end on this host: the real alloc runner and task runners, the
 * raw_exec driver running real processes, a real alloc dir and SQLite state file. One batch alloc:
 * a prestart task writes a file the main task reads, a prestart sidecar runs alongside the main
 * task and is stopped once it ends, the main task prints a variable from an `env = true` template,
 * and a poststop task runs after all of them. Then a template error fails its task before it runs.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, describe, it } from "node:test";
import { AllocRunner } from "../../../src/client/allocrunner/alloc_runner.js";
import { TaskRunner } from "../../../src/client/allocrunner/taskrunner/task_runner.js";
import { VolumeManager } from "../../../src/client/csimanager/volume_manager.js";
import { ExecDriver } from "../../../src/client/drivers/exec/exec_driver.js";
import { RawExecDriver } from "../../../src/client/drivers/raw_exec/raw_exec_driver.js";
import { PluginRegistry } from "../../../src/client/dynamicplugins/registry.js";
import { StateDB } from "../../../src/client/state/state_db.js";
import { nullLogger } from "../../../src/internal/log.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { Task } from "../../../src/structs/job.js";
import type { Template, TaskLifecycle } from "../../../src/structs/job_stanzas.js";
import { makeAlloc, makeTask, tempDataDir } from "../../builders/task_runner.js";
import { FakeRpc } from "../../fakes/server_rpc.js";

function sh(name: string, script: string, over: Partial<Task> = {}): Task {
  return makeTask({
    Name: name,
    Driver: "raw_exec",
    Config: { command: "/bin/sh", args: ["-c", script] },
    KillTimeout: 2_000_000_000,
    RestartPolicy: { Attempts: 0, Interval: 60_000_000_000, Delay: 1_000_000, Mode: "fail" },
    ...over,
  });
}

function lc(Hook: TaskLifecycle["Hook"], Sidecar = false): { Lifecycle: TaskLifecycle } {
  return { Lifecycle: { Hook, Sidecar } };
}

function tmpl(over: Partial<Template>): Template {
  return {
    SourcePath: "",
    DestPath: "",
    EmbeddedTmpl: "",
    ChangeMode: "restart",
    ChangeSignal: "",
    Splay: 5_000_000_000,
    Perms: "0644",
    LeftDelim: "{{",
    RightDelim: "}}",
    Envvars: false,
    ErrMissingKey: false,
    ...over,
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("task lifecycle and templates with raw_exec", () => {
  const dirs: string[] = [];
  const pids: number[] = [];
  const dbs: StateDB[] = [];

  after(async () => {
    for (const pid of pids) if (alive(pid)) process.kill(pid, "SIGKILL");
    for (const db of dbs) db.close();
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  async function runAlloc(
    tasks: Task[],
  ): Promise<{ runner: AllocRunner; alloc: Allocation; dataDir: string }> {
    const dataDir = await tempDataDir("berth-lctmpl-");
    dirs.push(dataDir);
    const alloc = makeAlloc(tasks[0]!, { jobType: "batch", group: { Tasks: tasks } });
    const stateDb = StateDB.open(path.join(dataDir, "client.db"));
    dbs.push(stateDb);
    const drivers = { raw_exec: new RawExecDriver({ pollMs: 20 }), exec: new ExecDriver({ pollMs: 20 }) };
    const node = { id: "node-1", name: "lc-node", attributes: { "kernel.name": "linux" } };
    const runner = new AllocRunner({
      alloc,
      dataDir,
      node,
      rpc: new FakeRpc([]),
      registry: new PluginRegistry(stateDb, nullLogger),
      volumeManager: new VolumeManager({
        plugins: {
          nodePlugin: () => Promise.reject(new Error("no CSI plugin in this test")),
        },
        log: nullLogger,
      }),
      stateDb,
      log: nullLogger,
      onUpdate: () => undefined,
      newTaskRunner: ({ task, allocDir, hookResources, onStateChange, initialEvents }) =>
        new TaskRunner({
          alloc,
          task,
          allocDir,
          driver: task.Driver === "exec" ? drivers.exec : drivers.raw_exec,
          hookResources,
          pluginRegistrar: new PluginRegistry(stateDb, nullLogger),
          node,
          dataDir,
          log: nullLogger,
          onStateChange,
          handles: stateDb,
          ...(initialEvents ? { initialEvents } : {}),
        }),
    });
    await runner.run();
    return { runner, alloc, dataDir };
  }

  it("prestart, sidecar, main with an env template, poststop — in Nomad's order", async () => {
    const { runner, dataDir } = await runAlloc([
      sh(
        "main",
        'cat "$NOMAD_ALLOC_DIR/init.txt"; echo "greeting=$GREETING"; for i in $(seq 200); do [ -s "$NOMAD_ALLOC_DIR/proxy.pid" ] && break; sleep 0.05; done; kill -0 "$(cat "$NOMAD_ALLOC_DIR/proxy.pid")" && echo proxy-up',
        {
          Templates: [
            tmpl({
              EmbeddedTmpl:
                'GREETING="hi from {{ env "NOMAD_TASK_NAME" }} on {{ env "node.unique.name" | toUpper }}"\n',
              DestPath: "secrets/app.env",
              Envvars: true,
            }),
          ],
        },
      ),
      sh("init", 'echo "written by init" > "$NOMAD_ALLOC_DIR/init.txt"', lc("prestart")),
      sh("proxy", 'echo $$ > "$NOMAD_ALLOC_DIR/proxy.pid"; exec sleep 60', lc("prestart", true)),
      sh("cleanup", 'ls "$NOMAD_ALLOC_DIR" > "$NOMAD_TASK_DIR/seen.txt"', lc("poststop")),
    ]);
    const dir = runner.allocDir;
    const proxyPid = Number((await fs.readFile(path.join(dir.sharedDir, "proxy.pid"), "utf8")).trim());
    pids.push(proxyPid);
    try {
      assert.equal(
        await fs.readFile(path.join(dir.taskLogsDir("main"), "main.stdout.0"), "utf8"),
        "written by init\ngreeting=hi from main on LC-NODE\nproxy-up\n",
      );
      // poststop ran last: it saw what the others wrote.
      assert.equal(
        await fs.readFile(path.join(dir.taskLocalDir("cleanup"), "seen.txt"), "utf8"),
        "init.txt\nproxy.pid\n",
      );
      assert.equal(runner.clientStatus, "complete");
      assert.equal(alive(proxyPid), false, "the sidecar was stopped when main ended");
    } finally {
      await runner.destroy();
    }
    assert.deepEqual(await mountsUnder(dataDir), []);
  });

  it("an exec task (chrooted) reads its rendered files at its own paths", async () => {
    const { runner, dataDir } = await runAlloc([
      sh("main", 'cat /local/app.conf "$NOMAD_SECRETS_DIR/from-source"; echo "mode=$MODE"', {
        Driver: "exec",
        Templates: [
          tmpl({
            EmbeddedTmpl:
              'dir={{ env "NOMAD_TASK_DIR" }}\n{{- range $i, $p := split "," "a,b" }}\nopt{{ $i }}={{ $p }}{{ end }}\n',
            DestPath: "${NOMAD_TASK_DIR}/app.conf",
          }),
          tmpl({
            EmbeddedTmpl: "MODE=[[ env `NOMAD_GROUP_NAME` ]]",
            LeftDelim: "[[",
            RightDelim: "]]",
            DestPath: "secrets/mode.env",
            Envvars: true,
          }),
          tmpl({ SourcePath: "local/app.conf", DestPath: "secrets/from-source", Perms: "0600" }),
        ],
      }),
    ]);
    try {
      assert.equal(runner.clientStatus, "complete");
      assert.equal(
        await fs.readFile(path.join(runner.allocDir.taskLogsDir("main"), "main.stdout.0"), "utf8"),
        "dir=/local\nopt0=a\nopt1=b\ndir=/local\nopt0=a\nopt1=b\nmode=g\n",
      );
    } finally {
      await runner.destroy();
    }
    assert.deepEqual(await mountsUnder(dataDir), []);
  });

  it("a template error fails the task before it starts and names line and column", async () => {
    const { runner, alloc } = await runAlloc([
      sh("main", "echo should-not-run", {
        Templates: [tmpl({ EmbeddedTmpl: 'port={{ key "redis/port" }}\n', DestPath: "local/app.conf" })],
      }),
    ]);
    try {
      assert.equal(runner.clientStatus, "failed");
      const stored = StateDB.prototype.getAlloc.call(dbs.at(-1)!, alloc.ID)!.clientUpdate!;
      const ev = stored.TaskStates.main!.Events.find((e) => e.Type === "Setup Failure");
      assert.equal(
        ev?.DisplayMessage,
        'prestart hook "template" failed: Template failed: local/app.conf: template: local/app.conf:1:9: executing "local/app.conf" at <key>: error calling key: key reads from Consul, Vault or Nomad variables; berth has no Consul, Vault or Nomad variables',
      );
      assert.equal(stored.TaskStates.main!.StartedAt, null, "the task never started");
      // The log collector may have made the first (empty) file, as Nomad's logmon hook runs first.
      const written = await fs
        .stat(path.join(runner.allocDir.taskLogsDir("main"), "main.stdout.0"))
        .then((st) => st.size)
        .catch(() => 0);
      assert.equal(written, 0, "the task wrote nothing");
    } finally {
      await runner.destroy();
    }
  });
});
