import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocDir } from "../../../src/client/allocdir/alloc_dir.js";
import {
  buildTaskEnv,
  interpolate,
  type TaskEnvInput,
} from "../../../src/client/allocrunner/taskrunner/task_env.js";
import { makeAlloc, makeTask } from "../../builders/task_runner.js";

function input(env: Record<string, string> = {}): TaskEnvInput {
  const task = makeTask({ Env: env });
  return {
    alloc: makeAlloc(task),
    task,
    allocDir: new AllocDir("/data", "alloc-1"),
    node: {
      id: "node-1",
      name: "n1",
      datacenter: "dc2",
      nodeClass: "storage",
      attributes: { "kernel.name": "linux", "cpu.arch": "amd64" },
      meta: { rack: "r7" },
    },
    taskView: true,
  };
}

describe("task_env interpolation", () => {
  it("expands node, attr, meta, NOMAD_*, hook env and env[...] in command-like text", () => {
    const { scope } = buildTaskEnv(input({ OWN: "mine" }), { CSI_ENDPOINT: "unix:///csi/csi.sock" });
    const text =
      "--endpoint=${CSI_ENDPOINT} ${node.unique.id}/${node.unique.name}/${node.datacenter}/${node.class}" +
      ' ${attr.kernel.name}-${attr.cpu.arch} ${meta.rack} ${NOMAD_ALLOC_ID} ${env["OWN"]} ${env.OWN} ${ OWN }';
    assert.equal(
      interpolate(text, scope),
      "--endpoint=unix:///csi/csi.sock node-1/n1/dc2/storage linux-amd64 r7 alloc-1 mine mine mine",
    );
  });

  it("leaves unknown references as written", () => {
    const { scope } = buildTaskEnv(input(), {});
    const text = '${nope} ${attr.nope} ${meta.nope} ${env["NOPE"]} ${node.nope} $NOMAD_ALLOC_ID ${';
    assert.equal(interpolate(text, scope), text);
  });

  it("env values see NOMAD_*, the node and hook env, but not each other; NOMAD_* and hooks win", () => {
    const { env } = buildTaskEnv(
      input({
        A: "${NOMAD_TASK_DIR}:${meta.rack}:${CSI_ENDPOINT}",
        B: "${A}",
        NOMAD_TASK_DIR: "/mine",
        CSI_ENDPOINT: "mine",
      }),
      { CSI_ENDPOINT: "unix:///csi/csi.sock" },
    );
    assert.equal(env.A, "/local:r7:unix:///csi/csi.sock");
    assert.equal(env.B, "${A}");
    assert.equal(env.NOMAD_TASK_DIR, "/local");
    assert.equal(env.CSI_ENDPOINT, "unix:///csi/csi.sock");
    assert.equal(env.NOMAD_DC, "dc2");
    assert.equal(env.NOMAD_SHORT_ALLOC_ID, "alloc-1");
  });

  it("NOMAD_META_*: job, group and task meta merged (task wins), as written and upper-cased, cleaned", () => {
    const i = input({ GREETING: "hi ${NOMAD_META_who}" });
    i.task = { ...i.task, Meta: { who: "task", "log.level": "debug" } };
    const group = { ...i.alloc.Job.TaskGroups[0]!, Meta: { who: "group", zone: "${node.unique.name}" } };
    i.alloc = {
      ...i.alloc,
      TaskGroup: group.Name,
      Job: {
        ...i.alloc.Job,
        Meta: { who: "job", team: "storage" },
        TaskGroups: [group],
        ParentID: "render",
        Dispatched: true,
        ParameterizedJob: { Payload: "optional", MetaRequired: [], MetaOptional: ["tone", "team"] },
      },
    };
    const { env } = buildTaskEnv(i, {});
    assert.equal(env.NOMAD_META_who, "task");
    assert.equal(env.NOMAD_META_WHO, "task");
    assert.equal(env.NOMAD_META_team, "storage", "the job's meta wins over an empty optional key");
    assert.equal(env.NOMAD_META_tone, "", "an optional key not given is set, empty");
    assert.equal(env.NOMAD_META_zone, "n1", "meta values are interpolated");
    assert.equal(env.NOMAD_META_log_level, "debug");
    assert.equal(env.NOMAD_META_LOG_LEVEL, "debug");
    assert.equal(env.NOMAD_JOB_PARENT_ID, "render");
    assert.equal(env.GREETING, "hi task", "the task's env sees them");
  });
});
