/**
 * ClientAlloc.ReadLog (client_alloc_logs.ts) through the registered handler, on files in a temp
 * data dir: a task this agent runs is read from its alloc dir with its runner's state; an alloc
 * with no runner, or a runner with no task runner (a terminal alloc restored after an agent
 * restart), is read from the files left in `<data dir>/alloc/<id>` as a dead task; nothing outside
 * an alloc dir can be read (hostile IDs, task names, types; links planted where the walk goes).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import type { TaskRunnerLike } from "../../../src/client/allocrunner/alloc_runner_config.js";
import type { AllocAccess } from "../../../src/client/rpc/alloc_peer.js";
import { registerClientAllocHandlers } from "../../../src/client/rpc/client_alloc.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";

const RUNNING = "11111111-1111-4111-8111-111111111111";
const RESTORED = "22222222-2222-4222-8222-222222222222";
const GONE = "33333333-3333-4333-8333-333333333333";
const NEVER = "44444444-4444-4444-8444-444444444444";

type Req = ClientMethods["ClientAlloc.ReadLog"][0];
type Read = (req: Partial<Req>) => Promise<{ text: string; dead: boolean; size: number }>;

let dir: string;
let allocsDir: string;

function writeLogs(allocId: string, task: string, stdout: string, stderr = ""): void {
  const logs = path.join(allocsDir, allocId, task, "logs");
  fs.mkdirSync(logs, { recursive: true });
  fs.writeFileSync(path.join(logs, `${task}.stdout.0`), stdout);
  fs.writeFileSync(path.join(logs, `${task}.stderr.0`), stderr);
}

function runner(state: "running" | "dead"): TaskRunnerLike {
  return {
    state: () => ({
      State: state,
      Failed: false,
      Restarts: 0,
      StartedAt: null,
      FinishedAt: null,
      Events: [],
    }),
  } as unknown as TaskRunnerLike;
}

/** The ReadLog handler, registered with `withDir` deciding whether it knows the allocs' dir. */
function reader(withDir: boolean): Read {
  let fn: ((p: unknown, s: AbortSignal) => Promise<unknown>) | undefined;
  const allocs = (id: string): AllocAccess | undefined => {
    if (id === RUNNING)
      return {
        root: path.join(allocsDir, id),
        taskNames: () => ["web"],
        task: (n) => (n === "web" ? runner("running") : undefined),
      };
    // A terminal alloc restored after a restart: a runner, but no task runners.
    if (id === RESTORED)
      return { root: path.join(allocsDir, id), taskNames: () => ["web"], task: () => undefined };
    return undefined;
  };
  registerClientAllocHandlers(
    {
      handle: (method, h) => {
        if (method === "ClientAlloc.ReadLog") fn = h as typeof fn;
      },
    },
    allocs,
    nullLogger,
    undefined,
    withDir ? allocsDir : undefined,
  );
  return async (req) => {
    const full: Req = {
      AllocID: RUNNING,
      Task: "web",
      Type: "stdout",
      Offset: 0,
      Origin: "start",
      Limit: 1 << 20,
      ...req,
    };
    const r = (await fn!(full, new AbortController().signal)) as ClientMethods["ClientAlloc.ReadLog"][1];
    return { text: Buffer.from(r.Data, "base64").toString("utf8"), dead: r.TaskDead, size: r.Size };
  };
}

describe("ClientAlloc.ReadLog", () => {
  let read: Read;
  before(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-readlog-")));
    allocsDir = path.join(dir, "data", "alloc");
    writeLogs(RUNNING, "web", "running-out\n");
    writeLogs(RESTORED, "web", "restored-out\n", "restored-err\n");
    writeLogs(GONE, "web", "gone-out\n");
    // Something worth stealing beside the data dir.
    fs.mkdirSync(path.join(dir, "secret", "web", "logs"), { recursive: true });
    fs.writeFileSync(path.join(dir, "secret", "web", "logs", "web.stdout.0"), "SECRET\n");
    read = reader(true);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("a running task: from its alloc dir, alive", async () => {
    assert.deepEqual(await read({}), { text: "running-out\n", dead: false, size: 12 });
    assert.deepEqual(await read({ Origin: "end", Offset: 4 }), { text: "out\n", dead: false, size: 12 });
  });

  it("a restored terminal alloc and an alloc with no runner: the files left, a dead task", async () => {
    assert.deepEqual(await read({ AllocID: RESTORED }), { text: "restored-out\n", dead: true, size: 13 });
    assert.equal((await read({ AllocID: RESTORED, Type: "stderr" })).text, "restored-err\n");
    assert.deepEqual(await read({ AllocID: GONE }), { text: "gone-out\n", dead: true, size: 9 });
    // A task dir with no log file yet: an empty read.
    fs.mkdirSync(path.join(allocsDir, GONE, "idle"));
    assert.deepEqual(await read({ AllocID: GONE, Task: "idle" }), { text: "", dead: true, size: 0 });
  });

  it("nothing on the node: 404, as before", async () => {
    await assert.rejects(read({ AllocID: NEVER }), { code: "ERR_NOT_FOUND", message: new RegExp(NEVER) });
    await assert.rejects(read({ AllocID: RESTORED, Task: "other" }), {
      code: "ERR_NOT_FOUND",
      message: /task in allocation .*"other" not found/,
    });
    await assert.rejects(read({ AllocID: RUNNING, Task: "other" }), { code: "ERR_NOT_FOUND" });
    // An agent that does not say where its alloc dirs are reads only its runners' tasks.
    await assert.rejects(reader(false)({ AllocID: GONE }), { code: "ERR_NOT_FOUND" });
  });

  it("never outside an alloc dir: hostile IDs, task names and types are refused", async () => {
    for (const AllocID of ["..", "../secret", "../../secret", "", "."]) {
      await assert.rejects(read({ AllocID }), { code: "ERR_NOT_FOUND" }, AllocID);
    }
    for (const Task of ["..", "../..", "../../secret/web", "alloc", "", "a/b", "a\0b"]) {
      await assert.rejects(read({ AllocID: GONE, Task }), { code: "ERR_VALIDATION" }, JSON.stringify(Task));
    }
    await assert.rejects(read({ AllocID: GONE, Type: "../x" as "stdout" }), { code: "ERR_VALIDATION" });
  });

  it("links planted on the way are never followed", async () => {
    // The alloc dir itself a link to elsewhere (only the agent could plant it: refused anyway).
    const linked = "55555555-5555-4555-8555-555555555555";
    fs.symlinkSync(path.join(dir, "secret"), path.join(allocsDir, linked));
    await assert.rejects(read({ AllocID: linked }), (err: NodeJS.ErrnoException) => {
      assert.notEqual(err.code, undefined);
      assert.doesNotMatch(String(err.message), /SECRET/);
      return true;
    });
    // The task's logs dir replaced by a link (a task can do that): refused, not read.
    const logs = path.join(allocsDir, GONE, "web", "logs");
    fs.renameSync(logs, `${logs}.old`);
    fs.symlinkSync(path.join(dir, "secret", "web", "logs"), logs);
    await assert.rejects(read({ AllocID: GONE }), { code: "ERR_DRIVER", message: /symlink|link/ });
  });
});
