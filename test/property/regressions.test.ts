/**
 * The minimal failing inputs the property suite (api.property.test.ts) found, kept as fixed cases
 * against the same in-process server: each one answered a 5xx, blocked for minutes or retried for
 * half a minute before its fix. Each must now be a 400 with ERR_VALIDATION naming the field, and
 * leave the stored state exactly as it was.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { FuzzTarget, type RawRequest } from "./harness.js";
import { deepNest } from "./arb_mutate.js";
import { dumpDiff } from "./store_dump.js";

const target = new FuzzTarget();
before(async () => {
  await target.start();
  await target.settle();
});
after(async () => {
  await target.stop();
  assert.deepEqual(target.errors, [], "no error logged");
});

const JSON_HEADERS = { "Content-Type": "application/json" };

/** Sends `r`; expects a 400 ERR_VALIDATION whose message names `field`, and no state change. */
async function refused(r: RawRequest, field: string): Promise<string> {
  const before = target.store.dump();
  const res = await target.send(r);
  assert.equal(res.status, 400, res.text);
  assert.equal(res.code, "ERR_VALIDATION");
  assert.ok(res.text.startsWith(`${field}:`), `names ${field}: ${res.text}`);
  const after = target.store.dump();
  assert.ok(before === after, `state changed:\n${dumpDiff(before, after)}`);
  return res.text;
}

// A driver berth has no config schema for (its config is free-form JSON here): exec and docker
// refuse keys they do not know, which is not what these depth tests are about.
const jobWithConfig = (config: string) =>
  `{"Job":{"ID":"fz-deep","TaskGroups":[{"Name":"g","Count":1,"Tasks":[{"Name":"t","Driver":"podman","Config":${config}}]}]}}`;

test("a job body nested 5,000 deep is a 400, not a stack overflow 500", async () => {
  await refused(
    { method: "PUT", url: "/v1/jobs", headers: JSON_HEADERS, body: jobWithConfig(deepNest(5000, "object")) },
    "body",
  );
});

test("a volume create body nested 5,000 deep is a 400, not a stack overflow 500", async () => {
  const caps = `[{"AccessMode":${deepNest(5000, "array")},"AttachmentMode":"file-system"}]`;
  const body = `{"Volumes":[{"ID":"fz-v1","PluginID":"fz-p1","RequestedCapabilities":${caps}}]}`;
  await refused({ method: "PUT", url: "/v1/volume/csi/fz-v1/create", headers: JSON_HEADERS, body }, "body");
});

test("nesting up to the limit is read; brackets inside strings do not count", async () => {
  const config = `{"a":${deepNest(40, "array")},"s":"${"[".repeat(200)}"}`;
  const res = await target.send({
    method: "PUT",
    url: "/v1/jobs",
    headers: JSON_HEADERS,
    body: jobWithConfig(config),
  });
  assert.equal(res.status, 200, res.text);
  const purge = await target.send({ method: "DELETE", url: "/v1/job/fz-deep?purge=true", headers: {} });
  assert.equal(purge.status, 200, purge.text);
  await target.settle();
});

test("a drain deadline past int64 nanoseconds is a 400, not 500 'Invalid time value'", async () => {
  for (const deadline of ["1e300", "-1e300", "9223372036854775808", "9e21"]) {
    const body = `{"DrainSpec":{"Deadline":${deadline},"IgnoreSystemJobs":false},"MarkEligible":false}`;
    await refused(
      { method: "POST", url: "/v1/node/fz-n1/drain", headers: JSON_HEADERS, body },
      "DrainSpec.Deadline",
    );
  }
});

test("?index= takes decimal digits only (0x10 was read as 16: a blocking query)", async () => {
  for (const index of ["0x10", "1e3", " 5", "1.0"]) {
    const url = `/v1/node/fz-n2/allocations?index=${encodeURIComponent(index)}&wait=1ms`;
    await refused({ method: "GET", url, headers: {} }, "index");
  }
});

test("?per_page= takes decimal digits only", async () => {
  for (const perPage of ["0x10", "1e1", " 5"]) {
    const url = `/v1/volumes/snapshot?plugin_id=fz-p1&per_page=${encodeURIComponent(perPage)}`;
    await refused({ method: "GET", url, headers: {} }, "per_page");
  }
});

test("a paging token the plugin refuses (ABORTED) is a 400 on next_token at once, not retried for 30 s", async () => {
  for (const path of ["/v1/volumes/snapshot", "/v1/volumes/external"]) {
    const text = await refused(
      { method: "GET", url: `${path}?plugin_id=fz-p1&next_token=bogus`, headers: {} },
      "next_token",
    );
    assert.match(text, /starting_token is not valid/);
  }
  // A token the plugin knows pages as before.
  const ok = await target.send({
    method: "GET",
    url: "/v1/volumes/snapshot?plugin_id=fz-p1&next_token=t1",
    headers: {},
  });
  assert.equal(ok.status, 200, ok.text);
});

test("a reschedule policy of 401,197,223 attempts is answered, not a process-killing 4e8-element array", async () => {
  for (const DelayFunction of ["fibonacci", "exponential"]) {
    const job = {
      ID: "fz-resched",
      Type: "batch",
      TaskGroups: [
        {
          Name: "g",
          Count: 0,
          Tasks: [{ Name: "t", Driver: "exec" }],
          ReschedulePolicy: {
            Attempts: 401197223,
            Interval: 3600e9,
            Delay: 30e9,
            DelayFunction,
            MaxDelay: 3600e9,
            Unlimited: false,
          },
        },
      ],
    };
    const body = JSON.stringify({ Job: job });
    const text = await refused(
      { method: "PUT", url: "/v1/jobs", headers: JSON_HEADERS, body },
      "Job.TaskGroups[0].ReschedulePolicy",
    );
    assert.match(text, /can only make 401197223 attempts/);
  }
});
