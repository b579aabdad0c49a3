/**
 * Parameterized jobs' pure parts (structs/parameterized.ts, job_ids.ts): the block's canonical
 * form, a dispatch's checks in Nomad's words naming the field, the child's ID and record, and the
 * job IDs the API takes (a child's `/` suffixes only).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  checkDispatch,
  dispatchChildId,
  dispatchedJob,
  DISPATCH_PAYLOAD_SIZE_LIMIT,
  isParameterized,
  validateParameterized,
} from "../../../src/structs/parameterized.js";
import { checkJobId, isValidJobId } from "../../../src/structs/job_ids.js";
import { validateJob } from "../../../src/structs/job_validate.js";
import type { Job } from "../../../src/structs/job.js";

const rule = (over: object = {}) => validateParameterized("P", over);
const none = Buffer.alloc(0);

describe("the parameterized block", () => {
  it("defaults the payload to optional and refuses unknown rules and overlapping keys", () => {
    assert.deepEqual(rule(), { Payload: "optional", MetaRequired: [], MetaOptional: [] });
    assert.throws(() => rule({ Payload: "maybe" }), /P\.Payload: Unknown payload requirement: "maybe"/);
    assert.throws(() => rule({ MetaRequired: ["a"], MetaOptional: ["a"] }), /disjoint.*\[a\]/);
  });

  it("is for batch jobs, and dispatch_payload files stay under local/", () => {
    const job = (Type: string, file = "input.txt") => ({
      ID: "j",
      Type,
      ParameterizedJob: {},
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", DispatchPayload: { File: file } }] }],
    });
    assert.deepEqual(validateJob(job("batch")).TaskGroups[0]!.Tasks[0]!.DispatchPayload, {
      File: "input.txt",
    });
    assert.throws(() => validateJob(job("service")), /Parameterized job can only be used with "batch"/);
    assert.throws(
      () => validateJob(job("batch", "../../etc/x")),
      /DispatchPayload\.File: dispatch payload file name escapes/,
    );
    assert.throws(() => validateJob(job("batch", "/etc/x")), /escapes/);
  });
});

describe("a dispatch", () => {
  it("checks the payload rule and size as Nomad does", () => {
    assert.throws(
      () => checkDispatch(rule({ Payload: "required" }), none, {}),
      (e: Error & { field?: string }) => {
        assert.match(e.message, /Payload is not provided but required by parameterized job/);
        assert.equal(e.field, "Payload");
        return true;
      },
    );
    assert.throws(
      () => checkDispatch(rule({ Payload: "forbidden" }), Buffer.from("x"), {}),
      /Payload provided but forbidden/,
    );
    const big = Buffer.alloc(DISPATCH_PAYLOAD_SIZE_LIMIT + 1);
    assert.throws(() => checkDispatch(rule(), big, {}), /Payload exceeds maximum size; 16385 > 16384/);
    checkDispatch(rule(), Buffer.alloc(DISPATCH_PAYLOAD_SIZE_LIMIT), {});
  });

  it("checks meta keys: unknown ones refused, required ones demanded", () => {
    const r = rule({ MetaRequired: ["b", "a"], MetaOptional: ["c"] });
    assert.throws(
      () => checkDispatch(r, none, { a: "1", b: "2", zz: "3" }),
      (e: Error & { field?: string }) => {
        assert.match(e.message, /Dispatch request included unpermitted metadata keys: \[zz\]/);
        assert.equal(e.field, "Meta");
        return true;
      },
    );
    assert.throws(
      () => checkDispatch(r, none, { c: "1" }),
      /Dispatch did not provide required meta keys: \[a b\]/,
    );
    checkDispatch(r, none, { a: "1", b: "2", c: "3" });
  });

  it("makes a child named as Nomad's, meta merged, payload kept, marked dispatched", () => {
    const id = dispatchChildId("render", Date.UTC(2024, 4, 1, 10), "0a1b2c3d-4e5f-6789-abcd-ef0123456789");
    assert.equal(id, "render/dispatch-1714557600-0a1b2c3d");
    const parent = {
      ID: "render",
      Name: "render",
      Meta: { keep: "1", over: "parent" },
      ParameterizedJob: rule(),
      Version: 4,
      CreateIndex: 9,
    } as unknown as Job;
    const child = dispatchedJob(parent, id, Buffer.from("hello"), { over: "child" }, 5);
    assert.equal(child.ParentID, "render");
    assert.equal(child.Name, id);
    assert.equal(child.Dispatched, true);
    assert.equal(child.Payload, Buffer.from("hello").toString("base64"));
    assert.deepEqual(child.Meta, { keep: "1", over: "child" });
    assert.equal(child.Version, 0);
    assert.equal(isParameterized(parent), true);
    assert.equal(isParameterized(child), false);
  });
});

describe("job IDs in the API", () => {
  it("take a child's suffixes and nothing else after a slash", () => {
    for (const ok of [
      "a",
      "a/periodic-1714557600",
      "a/dispatch-1714557600-0a1b2c3d",
      "a/dispatch-1-0a1b2c3d/periodic-2",
    ])
      assert.equal(isValidJobId(ok), true, ok);
    for (const bad of ["a/b", "a/../x", "/a", "a/periodic-", "a/dispatch-1-XYZ12345", "../a/periodic-1"])
      assert.equal(isValidJobId(bad), false, bad);
    assert.throws(() => checkJobId("id", "a/etc"), /id: "a\/etc" is not a valid job ID/);
  });
});
