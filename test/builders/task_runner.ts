/** Builders for task-runner tests: a job/alloc around one task and a runner config for it. */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AllocDir } from "../../src/client/allocdir/alloc_dir.js";
import { AllocHookResources } from "../../src/client/allocrunner/hook_resources.js";
import type { TaskRunnerConfig } from "../../src/client/allocrunner/taskrunner/task_runner.js";
import type { TaskDriver } from "../../src/client/drivers/driver.js";
import { nullLogger } from "../../src/internal/log.js";
import type { Allocation, TaskState } from "../../src/structs/alloc.js";
import type { JobType, Task, TaskGroup } from "../../src/structs/job.js";
import { RecordingRegistrar } from "../fakes/plugin_registrar.js";

export function makeTask(over: Partial<Task> = {}): Task {
  return {
    Name: "web",
    Driver: "mock",
    Config: { command: "/bin/run" },
    Env: {},
    VolumeMounts: [],
    CSIPluginConfig: null,
    KillTimeout: 0,
    RestartPolicy: { Attempts: 2, Interval: 60_000_000_000, Delay: 10_000_000, Mode: "fail" },
    ...over,
  };
}

export function makeAlloc(
  task: Task,
  opts: { jobType?: JobType; group?: Partial<TaskGroup> } = {},
): Allocation {
  const group: TaskGroup = {
    Name: "g",
    Count: 1,
    Volumes: {},
    Tasks: [task],
    RestartPolicy: null,
    ...opts.group,
  };
  return {
    ID: "alloc-1",
    Namespace: "default",
    Name: "example.g[2]",
    NodeID: "node-1",
    NodeName: "n1",
    JobID: "example",
    Job: {
      ID: "example",
      Name: "example",
      Namespace: "default",
      Type: opts.jobType ?? "batch",
      Datacenters: ["dc1"],
      Priority: 50,
      Stop: false,
      Status: "running",
      TaskGroups: [group],
      Version: 0,
      SubmitTime: 0,
      CreateIndex: 1,
      ModifyIndex: 1,
      JobModifyIndex: 1,
    },
    TaskGroup: "g",
    DesiredStatus: "run",
    DesiredDescription: "",
    ClientStatus: "pending",
    ClientDescription: "",
    TaskStates: {},
    CreateIndex: 1,
    ModifyIndex: 1,
    AllocModifyIndex: 1,
    CreateTime: 0,
    ModifyTime: 0,
  };
}

export async function tempDataDir(prefix: string): Promise<string> {
  return fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), prefix)));
}

export function runnerConfig(
  dataDir: string,
  task: Task,
  driver: TaskDriver,
  over: Partial<TaskRunnerConfig> & { jobType?: JobType; group?: Partial<TaskGroup> } = {},
): TaskRunnerConfig & { states: TaskState[]; resources: AllocHookResources } {
  const { jobType, group, ...rest } = over;
  const alloc = makeAlloc(task, { jobType, group });
  const states: TaskState[] = [];
  const resources = new AllocHookResources();
  return {
    alloc,
    task,
    allocDir: new AllocDir(dataDir, alloc.ID),
    driver,
    hookResources: resources,
    pluginRegistrar: new RecordingRegistrar(),
    node: { id: "node-1", name: "n1" },
    dataDir,
    log: nullLogger,
    onStateChange: (s) => states.push(s),
    states,
    resources,
    ...rest,
  };
}

export function eventTypes(s: TaskState): string[] {
  return s.Events.map((e) => e.Type);
}
