/**
 * AllocSync starts every alloc runner as a tracked background task: a runner whose run() throws
 * (a state DB error, say) is logged at error and reported as a failed alloc with the error as its
 * ClientDescription; the agent keeps syncing and running the other allocs, and no rejection ever
 * reaches the process (its 'unhandledRejection' guard is a last resort, not the mechanism).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { AllocSync, type AllocRunnerLike, type AllocSource } from "../../../src/client/alloc_sync.js";
import type { Logger } from "../../../src/internal/log.js";
import type { Allocation } from "../../../src/structs/alloc.js";
import type { BerthError } from "../../../src/structs/errors.js";
import { allocWith } from "../../builders/csi_alloc.js";

class FakeRunner implements AllocRunnerLike {
  ran = false;
  constructor(private readonly fail: Error | null) {}
  async run(): Promise<void> {
    this.ran = true;
    await Promise.resolve();
    if (this.fail) throw this.fail;
  }
  update(): void {}
  async destroy(): Promise<void> {
    await this.run().catch(() => undefined);
    if (this.fail) throw this.fail;
  }
  async shutdown(): Promise<void> {}
}

/** Answers the first watch with `allocs`, then blocks until the sync stops. */
function source(allocs: Allocation[]): AllocSource {
  let answered = false;
  return {
    call: async (_m, req, opts) => {
      if (!answered) {
        answered = true;
        return { Allocs: allocs, Index: 1 };
      }
      await new Promise<void>((_, reject) =>
        opts?.signal?.addEventListener("abort", () => reject(opts.signal?.reason as Error)),
      );
      return { Allocs: [], Index: req.MinIndex };
    },
  };
}

function recordingLog(): Logger & { errors: { msg: string; fields: Record<string, unknown> }[] } {
  const errors: { msg: string; fields: Record<string, unknown> }[] = [];
  const log = {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (msg: string, fields: Record<string, unknown> = {}) => errors.push({ msg, fields }),
    child: () => log,
  };
  return log;
}

async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  assert.ok(cond(), "condition not reached");
}

test("a runner whose run() throws is logged and reported failed; the agent carries on", async () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on("unhandledRejection", onUnhandled);
  try {
    const bad = allocWith({}, { ID: "bad-alloc", Name: "j.g[0]" });
    const good = allocWith({}, { ID: "good-alloc", Name: "j.g[1]" });
    const runners = new Map<string, FakeRunner>();
    const failed: { alloc: Allocation; err: BerthError }[] = [];
    const log = recordingLog();
    const sync = new AllocSync(
      "node1",
      source([bad, good]),
      (alloc) => {
        const r = new FakeRunner(alloc.ID === "bad-alloc" ? new Error("SQLITE_IOERR: disk I/O error") : null);
        runners.set(alloc.ID, r);
        return r;
      },
      log,
      (alloc, err) => failed.push({ alloc, err }),
    );
    sync.start();
    await until(() => failed.length === 1 && runners.get("good-alloc")?.ran === true);
    await sync.settled();
    await sync.stop();

    assert.equal(failed[0]?.alloc.ID, "bad-alloc");
    assert.equal(failed[0]?.err.message, "SQLITE_IOERR: disk I/O error");
    const logged = log.errors.find((e) => e.fields.task === "alloc bad-alloc runner");
    assert.ok(logged, `the failure is logged at error: ${JSON.stringify(log.errors)}`);
    assert.equal(sync.inFlight, 0, "every runner task settled");
    // Let any stray rejection reach the process before looking.
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(unhandled, [], "no rejection reached the process");
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

test("restored runners are tracked the same way", async () => {
  const failed: string[] = [];
  const sync = new AllocSync(
    "node1",
    source([]),
    () => new FakeRunner(new Error("state db is corrupt")),
    recordingLog(),
    (alloc, err) => failed.push(`${alloc.ID}: ${err.message}`),
  );
  sync.restore([allocWith({}, { ID: "a1" })]);
  await sync.settled();
  assert.deepEqual(failed, ["a1: state db is corrupt"]);
});
