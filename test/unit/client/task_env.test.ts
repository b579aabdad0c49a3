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
});
