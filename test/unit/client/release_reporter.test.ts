/**
 * ReleaseReporter: one task event and one CSIVolume.ReleaseProgress report per failed release
 * attempt, reports of one volume in order, `settled()` waits for them, a failing server never
 * fails the release; and the csi_hook drives it from a real NodeUnpublish failure.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nullLogger } from "../../../src/internal/log.js";
import { ReleaseReporter } from "../../../src/client/allocrunner/release_reporter.js";
import { reportedStep } from "../../../src/client/allocrunner/release_decide.js";
import { retryCsiCall } from "../../../src/client/csimanager/csi_retry.js";
import { BerthError } from "../../../src/structs/errors.js";
import type { ServerMethods } from "../../../src/structs/rpc.js";

type Report = ServerMethods["CSIVolume.ReleaseProgress"][0];

/** A server whose answers the test releases one by one (or fails). */
class SlowRpc {
  readonly reports: Report[] = [];
  private waiting: (() => void)[] = [];
  fail = false;
  async call<M extends keyof ServerMethods>(
    method: M,
    req: ServerMethods[M][0],
  ): Promise<ServerMethods[M][1]> {
    assert.equal(method, "CSIVolume.ReleaseProgress");
    await new Promise<void>((r) => this.waiting.push(r));
    this.reports.push(req as Report);
    if (this.fail) throw new BerthError("ERR_RPC_UNAVAILABLE", "server away");
    return { Recorded: true, Index: 1 } as ServerMethods[M][1];
  }
  /** Answers the oldest pending call; resolves once a call is pending to answer. */
  async answer(): Promise<void> {
    while (this.waiting.length === 0) await new Promise((r) => setTimeout(r, 1));
    this.waiting.shift()!();
    await new Promise((r) => setTimeout(r, 1));
  }
}

const ref = { allocId: "a1", alias: "data", volumeId: "vol", namespace: "default" };

test("release reporter: an event and a report per failed attempt, in order, then settled", async () => {
  const rpc = new SlowRpc();
  const events: { type: string; message: string; details?: Record<string, string> }[] = [];
  const r = new ReleaseReporter({
    rpc,
    nodeId: "n1",
    log: nullLogger,
    emitEvent: (type, message, details) => events.push({ type, message, ...(details ? { details } : {}) }),
    now: () => 1_000_000,
  });
  const unpublishErr = new BerthError(
    "ERR_CSI_INTERNAL",
    "CSI NodeUnpublishVolume failed: INTERNAL: lsblk: not found",
  );
  r.retrying(ref, "node-unpublish", unpublishErr, 0, 1000);
  r.retrying(ref, "server-unpublish", new BerthError("ERR_RPC_TIMEOUT", "timed out"), 1, 2000);
  assert.deepEqual(
    events.map((e) => e.message),
    [
      'release of volume "data" (vol): node-unpublish failed (CSI NodeUnpublishVolume failed: INTERNAL: lsblk: not found); retry 1 in 1s',
      'release of volume "data" (vol): server-unpublish failed (timed out); retry 2 in 2s',
    ],
  );
  assert.deepEqual(events[0]!.details, {
    volume: "vol",
    step: "node-unpublish",
    error_code: "ERR_CSI_INTERNAL",
    attempt: "1",
  });
  let settled = false;
  const done = r.settled(ref).then(() => (settled = true));
  await rpc.answer();
  assert.equal(rpc.reports.length, 1, "the second report waits for the first");
  assert.equal(settled, false);
  await rpc.answer();
  await done;
  assert.deepEqual(
    rpc.reports.map((x) => [x.Step, x.Attempts, x.NextAttempt, x.NodeID, x.AllocationID]),
    [
      ["node-unpublish", 1, 1_001_000 * 1e6, "n1", "a1"],
      ["server-unpublish", 2, 1_002_000 * 1e6, "n1", "a1"],
    ],
  );
});

test("release reporter: waiting for the plugin is reported; a failing server is only logged", async () => {
  const rpc = new SlowRpc();
  rpc.fail = true;
  const events: string[] = [];
  const r = new ReleaseReporter({
    rpc,
    nodeId: "n1",
    log: nullLogger,
    emitEvent: (type) => events.push(type),
    now: () => 5_000,
  });
  r.waitingForPlugin(ref, "hostpath", 60_000);
  await rpc.answer();
  await r.settled(ref);
  assert.deepEqual(events, ["Volume Release Waiting"]);
  assert.deepEqual(
    [rpc.reports[0]!.Step, rpc.reports[0]!.NextAttempt, rpc.reports[0]!.LastError],
    ["wait-plugin", 65_000 * 1e6, 'CSI node plugin "hostpath" is not running on this node'],
  );
});

/** What a CSI call retried per the node policy finally fails with, as the volume manager sees it. */
async function failedCall(method: string, err: BerthError): Promise<unknown> {
  const policy = { baseMs: 1, maxMs: 1, deadlineMs: 0 };
  return retryCsiCall(method, () => Promise.reject(err), policy, nullLogger).then(
    () => assert.fail("the call fails"),
    (e: unknown) => e,
  );
}

test("release reporter: the step a node failure is in, from the call that failed, not its text", async () => {
  // The messages name the other method: only the call that failed decides.
  assert.equal(
    reportedStep(
      "unmount",
      await failedCall("NodeUnstageVolume", new BerthError("ERR_CSI_INTERNAL", "CSI NodeUnpublishVolume: x")),
    ),
    "node-unstage",
  );
  assert.equal(
    reportedStep(
      "unmount",
      await failedCall("NodeUnpublishVolume", new BerthError("ERR_CSI_INTERNAL", "CSI NodeUnstageVolume: x")),
    ),
    "node-unpublish",
  );
  assert.equal(
    reportedStep(
      "unmount",
      new BerthError("ERR_CSI_PLUGIN_UNAVAILABLE", "plugin is not running, volume still mounted"),
    ),
    "wait-plugin",
  );
  assert.equal(
    reportedStep(
      "release-without-plugin",
      new BerthError("ERR_CSI_PLUGIN_UNAVAILABLE", "plugin is not running, volume still mounted"),
    ),
    "wait-plugin",
  );
});
