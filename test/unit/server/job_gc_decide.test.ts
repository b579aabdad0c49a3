/** Which jobs the garbage collector may remove (server/gc/decide.ts jobCollectable), as Nomad's job GC. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { jobCollectable } from "../../../src/server/gc/decide.js";
import type { JobType } from "../../../src/structs/job.js";
import type { Allocation } from "../../../src/structs/alloc.js";

const MS = 1_000_000;
const H = 3_600_000;
const base = {
  Status: "dead" as const,
  Stop: true,
  Type: "service" as JobType,
  Periodic: null,
  ParameterizedJob: null,
  SubmitTime: 0,
};
type AllocView = Pick<Allocation, "ClientStatus" | "DesiredStatus" | "ModifyTime">;
const done: { alloc: AllocView; holdsClaim: boolean } = {
  alloc: { ClientStatus: "complete", DesiredStatus: "stop", ModifyTime: 1 * H * MS },
  holdsClaim: false,
};
const complete = { Status: "complete" as const, ModifyTime: 1 * H * MS };

test("a dead stopped job goes once its last change is past the threshold", () => {
  assert.equal(jobCollectable(base, [done], [complete], 5 * H - 1, 4 * H), false, "the alloc changed at 1 h");
  assert.equal(jobCollectable(base, [done], [complete], 5 * H, 4 * H), true);
  assert.equal(jobCollectable({ ...base, Status: "running" }, [done], [complete], 9 * H, 4 * H), false);
});

test("a finished batch job goes though not stopped; a service job or a launcher only when stopped", () => {
  const batch = { ...base, Stop: false, Type: "batch" as JobType };
  assert.equal(jobCollectable(batch, [done], [complete], 9 * H, 4 * H), true);
  assert.equal(jobCollectable({ ...batch, Type: "sysbatch" }, [done], [complete], 9 * H, 4 * H), true);
  assert.equal(jobCollectable({ ...batch, Type: "service" }, [done], [complete], 9 * H, 4 * H), false);
  const periodic = { ...batch, Periodic: { Enabled: true } as never };
  assert.equal(jobCollectable(periodic, [], [], 9 * H, 4 * H), false, "a periodic parent stays");
  assert.equal(jobCollectable({ ...periodic, Stop: true }, [], [], 9 * H, 4 * H), true);
  const dispatch = { ...batch, ParameterizedJob: {} as never };
  assert.equal(jobCollectable(dispatch, [], [], 9 * H, 4 * H), false, "a parameterized parent stays");
});

test("an alloc still running or holding a claim, or an eval pending or blocked, keeps the job", () => {
  const running = {
    ...done,
    alloc: { ...done.alloc, ClientStatus: "running" as const, DesiredStatus: "run" as const },
  };
  assert.equal(jobCollectable(base, [running], [], 9 * H, 0), false);
  assert.equal(jobCollectable(base, [{ ...done, holdsClaim: true }], [], 9 * H, 0), false);
  for (const Status of ["pending", "blocked"] as const) {
    assert.equal(jobCollectable(base, [done], [{ ...complete, Status }], 9 * H, 0), false, Status);
  }
  assert.equal(jobCollectable(base, [done], [{ ...complete, Status: "cancelled" }], 9 * H, 0), true);
});
