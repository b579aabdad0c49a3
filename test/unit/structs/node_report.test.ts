/**
 * The order of a node agent's reports (structs/node_report.ts): a report not after the last one
 * applied is stale (older epoch, or same epoch and not a greater seq); without an order on either
 * side nothing is stale; malformed orders are refused by name; the refusal is recognisable.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  isStaleReport,
  isStaleReportError,
  refuseStaleReport,
  validateReportOrder,
} from "../../../src/structs/node_report.js";

test("isStaleReport: older or equal orders are stale, later ones and unordered ones are not", () => {
  assert.equal(isStaleReport([5, 10], [5, 9]), true, "an older seq of the same agent process");
  assert.equal(isStaleReport([5, 10], [5, 10]), true, "the same report again");
  assert.equal(isStaleReport([5, 10], [4, 99]), true, "a report of an earlier agent process");
  assert.equal(isStaleReport([5, 10], [5, 11]), false);
  assert.equal(isStaleReport([5, 10], [6, 1]), false, "a restarted agent starts a new epoch");
  assert.equal(isStaleReport(undefined, [1, 1]), false);
  assert.equal(isStaleReport([5, 10], undefined), false, "an agent that sends no order");
});

test("validateReportOrder: absent is undefined; anything but two whole numbers ≥ 0 is refused", () => {
  assert.equal(validateReportOrder("ReportOrder", undefined), undefined);
  assert.equal(validateReportOrder("ReportOrder", null), undefined);
  assert.deepEqual(validateReportOrder("ReportOrder", [1_780_000_000_000, 3]), [1_780_000_000_000, 3]);
  for (const bad of [[1], [1, 2, 3], [1, -1], [1.5, 2], ["1", 2], {}, "1,2", [2 ** 53, 1]]) {
    assert.throws(
      () => validateReportOrder("ReportOrder", bad),
      (err: Error & { code?: string; field?: string }) =>
        err.code === "ERR_VALIDATION" && err.field === "ReportOrder",
      JSON.stringify(bad),
    );
  }
});

test("refuseStaleReport: throws a recognisable ERR_CONFLICT for a stale report only", () => {
  refuseStaleReport("n1", [2, 2], [2, 3]);
  refuseStaleReport("n1", undefined, [2, 3]);
  let caught: unknown;
  try {
    refuseStaleReport("n1", [2, 2], [2, 1]);
  } catch (err) {
    caught = err;
  }
  assert.ok(isStaleReportError(caught), String(caught));
  assert.match(
    (caught as Error).message,
    /stale report of node n1: order \[2,1\] is not after the applied \[2,2\]/,
  );
  assert.equal(isStaleReportError(new Error("stale report")), false);
});
