/**
 * AllocSync hands a runner only what the server changed: an answer in which an alloc's
 * AllocModifyIndex has not moved (the node's own status reports, echoed back) neither calls the
 * runner's update() nor rewrites the alloc in the state DB; a server write (AllocModifyIndex
 * moved: the alloc told to stop) reaches the runner once.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { AllocSync, type AllocRunnerLike, type AllocSource } from "../../../src/client/alloc_sync.js";
import type { Logger } from "../../../src/internal/log.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import { allocWith } from "../../builders/csi_alloc.js";

class RecordingRunner implements AllocRunnerLike {
  readonly updates: Allocation[] = [];
  async run(): Promise<void> {}
  update(alloc: Allocation): void {
    this.updates.push(alloc);
  }
  async destroy(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

/** Answers each watch with the next of `answers`, then blocks until the sync stops. */
function scripted(answers: Allocation[][]): AllocSource & { served: () => number } {
  let n = 0;
  return {
    served: () => n,
    call: async (_m, req, opts) => {
      const next = answers[n];
      if (next) {
        n++;
        return { Allocs: next, Index: n };
      }
      await new Promise<void>((_, reject) =>
        opts?.signal?.addEventListener("abort", () => reject(opts.signal?.reason as Error)),
      );
      return { Allocs: [], Index: req.MinIndex };
    },
  };
}

const quiet: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => quiet,
};

test("only allocs whose AllocModifyIndex moved reach their runner", async () => {
  const placed = allocWith({}, { ID: "a1", ModifyIndex: 10, AllocModifyIndex: 10 });
  const other = allocWith({}, { ID: "a2", Name: "j.g[1]", ModifyIndex: 11, AllocModifyIndex: 11 });
  // The node reported a1 running: ModifyIndex moved, AllocModifyIndex did not.
  const reported = { ...placed, ClientStatus: "running" as const, ModifyIndex: 12 };
  // The server told a1 to stop.
  const stopped = { ...reported, DesiredStatus: "stop" as const, ModifyIndex: 13, AllocModifyIndex: 13 };
  const src = scripted([
    [placed, other],
    [reported, other],
    [stopped, other],
  ]);
  const runners = new Map<string, RecordingRunner>();
  const sync = new AllocSync(
    "node1",
    src,
    (alloc) => {
      const r = new RecordingRunner();
      runners.set(alloc.ID, r);
      return r;
    },
    quiet,
  );
  sync.start();
  for (let i = 0; i < 200 && src.served() < 3; i++) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20));
  await sync.stop();
  await sync.settled();
  assert.equal(src.served(), 3);
  assert.deepEqual(
    runners.get("a1")!.updates.map((a) => [a.DesiredStatus, a.AllocModifyIndex]),
    [["stop", 13]],
    "the echo of the node's own report is not an update; the server's stop is, once",
  );
  assert.deepEqual(runners.get("a2")!.updates, [], "an alloc nobody changed is left alone");
});
