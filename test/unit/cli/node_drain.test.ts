import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { UsageError } from "../../../src/cli/flags.js";
import { nodeDrain } from "../../../src/cli/commands/node_drain.js";
import { nodeEligibility } from "../../../src/cli/commands/node_eligibility.js";
import { nodeStatus } from "../../../src/cli/commands/node_status.js";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import * as fx from "../../builders/api_records.js";
import { captureIO } from "../../fakes/command_io.js";

const usageError = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => err instanceof UsageError && pattern.test(err.message));

describe("node drain parse", () => {
  const base = { address: undefined, node: "n1", ignoreSystem: false, keepIneligible: false, pollMs: 1000 };
  it("-enable: a 1h deadline unless -deadline, -no-deadline or -force", () => {
    assert.deepEqual(nodeDrain.parse(["-enable", "-yes", "n1"]), {
      ...base,
      action: "enable",
      deadlineNs: 3600e9,
      detach: false,
    });
    assert.equal(nodeDrain.parse(["-enable", "-deadline", "30m", "n1"]).deadlineNs, 1800e9);
    assert.equal(nodeDrain.parse(["-enable", "-deadline=1h30m", "n1"]).deadlineNs, 5400e9);
    assert.equal(nodeDrain.parse(["-enable", "-no-deadline", "n1"]).deadlineNs, 0);
    assert.equal(nodeDrain.parse(["-enable", "-force", "n1"]).deadlineNs, -1);
    const p = nodeDrain.parse(["-enable", "-ignore-system", "-detach", "n1"]);
    assert.deepEqual([p.ignoreSystem, p.detach], [true, true]);
  });

  it("-disable, -keep-ineligible, -monitor", () => {
    const p = nodeDrain.parse(["-disable", "-keep-ineligible", "n1"]);
    assert.deepEqual([p.action, p.keepIneligible], ["disable", true]);
    assert.equal(nodeDrain.parse(["-monitor", "n1"]).action, "monitor");
  });

  it("refuses contradictory or misplaced flags", () => {
    usageError(() => nodeDrain.parse(["n1"]), /exactly one of -enable, -disable or -monitor/);
    usageError(() => nodeDrain.parse(["-enable", "-disable", "n1"]), /exactly one of/);
    usageError(
      () => nodeDrain.parse(["-enable", "-force", "-deadline", "1h", "n1"]),
      /only one of -deadline/,
    );
    usageError(() => nodeDrain.parse(["-enable", "-force", "-no-deadline", "n1"]), /only one of -deadline/);
    usageError(() => nodeDrain.parse(["-disable", "-force", "n1"]), /go with -enable/);
    usageError(
      () => nodeDrain.parse(["-enable", "-keep-ineligible", "n1"]),
      /-keep-ineligible goes with -disable/,
    );
    usageError(() => nodeDrain.parse(["-enable", "-deadline", "soon", "n1"]), /positive duration/);
    usageError(() => nodeDrain.parse(["-enable", "-deadline", "0", "n1"]), /positive duration/);
    usageError(() => nodeDrain.parse(["-monitor", "-detach", "n1"]), /-detach cannot be used with -monitor/);
    usageError(() => nodeDrain.parse(["-enable"]), /exactly one argument: <node>/);
  });

  it("node eligibility", () => {
    assert.deepEqual(nodeEligibility.parse(["-disable", "n1"]), {
      address: undefined,
      node: "n1",
      eligible: false,
    });
    assert.equal(nodeEligibility.parse(["-enable", "n1"]).eligible, true);
    usageError(() => nodeEligibility.parse(["n1"]), /exactly one of -enable or -disable/);
    usageError(() => nodeEligibility.parse(["-enable", "-disable", "n1"]), /exactly one of/);
  });
});

const ID = fx.NODE_ID;
const strategy = {
  Deadline: 0,
  IgnoreSystemJobs: false,
  ForceDeadline: "0001-01-01T00:00:00Z",
  StartedAt: "x",
};
const updated = { json: { NodeModifyIndex: 30, EvalIDs: [], EvalCreateIndex: 0, Index: 30 } };
const migrated = (over: object) => ({ ...fx.alloc, DesiredTransition: { Migrate: true }, ...over });

/** The node and its allocs as successive polls see them during a drain. */
const polls = [
  { node: { ...fx.node, Drain: true, DrainStrategy: strategy }, allocs: [fx.alloc] },
  {
    node: { ...fx.node, Drain: true, DrainStrategy: strategy },
    allocs: [migrated({ DesiredStatus: "stop" })],
  },
  {
    node: { ...fx.node, DrainStrategy: null, LastDrain: { Status: "complete" } },
    allocs: [migrated({ DesiredStatus: "stop", ClientStatus: "complete" })],
  },
];

describe("node drain run", () => {
  let api: FakeApi;
  let allocPoll = 0;
  before(async () => {
    api = await startFakeApi({
      "GET /v1/nodes": { json: [fx.nodeStub] },
      // Each monitor poll reads the node, then its allocs: the node follows the allocs' poll count.
      [`GET /v1/node/${ID}`]: () => ({ json: polls[Math.min(allocPoll, polls.length - 1)]!.node }),
      [`GET /v1/node/${ID}/allocations`]: () => ({
        json: polls[Math.min(allocPoll++, polls.length - 1)]!.allocs,
      }),
      [`POST /v1/node/${ID}/drain`]: updated,
      [`POST /v1/node/${ID}/eligibility`]: (req) =>
        (JSON.parse(req.body) as { Eligibility: string }).Eligibility === "eligible"
          ? { status: 400, text: "Eligibility: can not set the scheduling eligibility of a draining node" }
          : updated,
    });
  });
  after(() => api.close());
  const io = () => captureIO(api.address);
  const sent = () => JSON.parse(api.requests.at(-1)!.body) as unknown;

  it("-detach sets the strategy and returns, by a short ID", async () => {
    const o = io();
    assert.equal(
      await nodeDrain.run(nodeDrain.parse(["-enable", "-detach", "-deadline", "2h", "f00dfeed"]), o),
      0,
    );
    assert.deepEqual(o.out, [`Node "${ID}" drain strategy set`]);
    assert.deepEqual(sent(), {
      DrainSpec: { Deadline: 7200e9, IgnoreSystemJobs: false },
      MarkEligible: false,
      Meta: null,
    });
  });

  it("without -detach follows the drain to the end, Nomad's lines", async () => {
    allocPoll = 0;
    const o = io();
    const p = { ...nodeDrain.parse(["-enable", "-yes", "-ignore-system", ID]), pollMs: 1 };
    assert.equal(await nodeDrain.run(p, o), 0, o.err.join("\n"));
    const t = "2026-01-01T12:00:00Z: ";
    assert.deepEqual(o.out, [
      `${t}Ctrl-C to stop monitoring: will not cancel the node drain`,
      `${t}Node "${ID}" drain strategy set`,
      `${t}Alloc "${fx.ALLOC_ID}" marked for migration`,
      `${t}Alloc "${fx.ALLOC_ID}" draining`,
      `${t}Alloc "${fx.ALLOC_ID}" status running -> complete`,
      `${t}Drain complete for node "${ID}"`,
      `${t}All allocations on node "${ID}" have stopped`,
    ]);
    assert.ok(
      api.requests.some(
        (r) =>
          r.method === "POST" &&
          (JSON.parse(r.body) as { DrainSpec: { IgnoreSystemJobs: boolean } }).DrainSpec?.IgnoreSystemJobs,
      ),
    );
  });

  it("-disable cancels and marks eligible unless -keep-ineligible", async () => {
    const o = io();
    assert.equal(await nodeDrain.run(nodeDrain.parse(["-disable", ID]), o), 0);
    assert.deepEqual(o.out, [`Node "${ID}" drain strategy unset`]);
    assert.deepEqual(sent(), { DrainSpec: null, MarkEligible: true, Meta: null });
    await nodeDrain.run(nodeDrain.parse(["-disable", "-keep-ineligible", ID]), io());
    assert.deepEqual(sent(), { DrainSpec: null, MarkEligible: false, Meta: null });
  });

  it("node eligibility: Nomad's line, and the server's refusal as one error line", async () => {
    const o = io();
    assert.equal(await nodeEligibility.run(nodeEligibility.parse(["-disable", ID]), o), 0);
    assert.deepEqual(o.out, [`Node "${ID}" scheduling eligibility set: ineligible for scheduling`]);
    assert.deepEqual(sent(), { Eligibility: "ineligible" });
    const refused = io();
    assert.equal(await nodeEligibility.run(nodeEligibility.parse(["-enable", ID]), refused), 1);
    assert.match(
      refused.err[0]!,
      /^Error updating scheduling eligibility: Unexpected response code: 400 \(Eligibility: /,
    );
  });

  it("an unknown node is one error line", async () => {
    const o = io();
    assert.equal(await nodeDrain.run(nodeDrain.parse(["-enable", "-detach", "beef"]), o), 1);
    assert.match(o.err[0]!, /^Error updating drain: /);
  });

  it("node status shows the drain", async () => {
    allocPoll = 0;
    const o = io();
    assert.equal(await nodeStatus.run(nodeStatus.parse([ID]), o), 0);
    assert.ok(o.out.includes("Drain              = true; no deadline"), o.out.join("\n"));
  });
});
