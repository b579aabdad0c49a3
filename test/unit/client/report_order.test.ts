/**
 * The agent's report clock (client/report_order.ts): every report of one process is after the
 * previous one; a restarted agent's epoch is after the previous process's (kept in the data dir),
 * also when the wall clock went back; a lost epoch file still yields an epoch at the wall clock.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { ReportClock } from "../../../src/client/report_order.js";
import { isStaleReport } from "../../../src/structs/node_report.js";
import { tempDir } from "../../helpers/temp_dir.js";

test("ReportClock: reports in order within a process and across restarts", async () => {
  const dir = path.join(tempDir(), "client");
  const first = await ReportClock.open(dir, 1_000);
  const a = first.next();
  const b = first.next();
  assert.deepEqual(a, [1_000, 1]);
  assert.equal(isStaleReport(a, b), false);
  assert.equal(isStaleReport(b, a), true);

  // A restart with the wall clock set back: the kept epoch still moves forward.
  const second = await ReportClock.open(dir, 500);
  const c = second.next();
  assert.deepEqual(c, [1_001, 1]);
  assert.equal(isStaleReport(b, c), false, "the restarted agent's first report is after the last one");
  assert.equal(fs.readFileSync(path.join(dir, "report-epoch"), "utf8"), "1001\n");
  assert.equal(fs.existsSync(path.join(dir, "report-epoch.tmp")), false);

  // The file lost (or unreadable): the wall clock, later than the first start, carries the order.
  fs.writeFileSync(path.join(dir, "report-epoch"), "junk\n");
  const third = await ReportClock.open(dir, 5_000);
  assert.deepEqual(third.next(), [5_000, 1]);
});
