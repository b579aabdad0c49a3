import { test } from "node:test";
import assert from "node:assert/strict";
import {
  blockedEvalFor,
  evalsToPrune,
  newAllocMetric,
  newEval,
  recordNode,
  type Evaluation,
} from "../../../src/structs/eval.js";

const job = { ID: "web", Namespace: "default", Priority: 50, Type: "service" as const, JobModifyIndex: 7 };

test("recordNode: a feasible node is evaluated only; a refused one is filtered by reason and class", () => {
  const m = newAllocMetric({ dc1: 3 });
  recordNode(m, { NodeClass: "" }, null);
  recordNode(m, { NodeClass: "gpu" }, "missing drivers");
  recordNode(m, { NodeClass: "" }, "missing drivers");
  recordNode(m, { NodeClass: "gpu" }, "${node.class} = fast");
  assert.equal(m.NodesEvaluated, 4);
  assert.equal(m.NodesFiltered, 3);
  assert.deepEqual(m.ClassFiltered, { gpu: 2 });
  assert.deepEqual(m.ConstraintFiltered, { "missing drivers": 2, "${node.class} = fast": 1 });
  assert.deepEqual(m.NodesAvailable, { dc1: 3 });
});

test("blockedEvalFor: queued-allocs, blocked, follows its parent and keeps its failures", () => {
  const parent: Evaluation = {
    ...newEval(job, "e1", "job-register", 5, 3),
    FailedTGAllocs: { g: newAllocMetric({}) },
    PlacedAllocIDs: ["a1"],
  };
  const b = blockedEvalFor(parent, "e2");
  assert.deepEqual(
    [b.ID, b.Status, b.TriggeredBy, b.PreviousEval, b.BlockedEval, b.JobID, b.Priority],
    ["e2", "blocked", "queued-allocs", "e1", "", "web", 50],
  );
  assert.deepEqual(b.FailedTGAllocs, parent.FailedTGAllocs);
  assert.deepEqual(b.PlacedAllocIDs, [], "the parent's allocs are the parent's");
});

test("evalsToPrune: keeps the newest, never the blocked one", () => {
  const ev = (id: string, idx: number, status: Evaluation["Status"] = "complete"): Evaluation => ({
    ...newEval(job, id, "job-register", idx, idx),
    Status: status,
    CreateIndex: idx,
  });
  const evals = [ev("old-blocked", 1, "blocked"), ev("a", 2), ev("b", 3), ev("c", 4), ev("d", 4)];
  assert.deepEqual(evalsToPrune(evals, 2).sort(), ["a", "b"]);
  assert.deepEqual(evalsToPrune(evals, 10), []);
  assert.deepEqual(
    evalsToPrune([ev("x", 1), ev("y", 1)], 1),
    ["x"],
    "made together: the first put goes first",
  );
});
