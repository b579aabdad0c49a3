/** The node's task user policy (structs/task_user.ts): Nomad's defaults and its client options. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DEFAULT_TASK_USER_POLICY,
  disallowedTaskUser,
  taskUserPolicyFromOptions,
} from "../../../src/structs/task_user.js";

describe("task user policy", () => {
  it("by default refuses root and Administrator for exec, qemu and java, and nothing for raw_exec", () => {
    assert.equal(
      disallowedTaskUser(DEFAULT_TASK_USER_POLICY, "exec", "root"),
      'running as user "root" is disallowed',
    );
    assert.match(disallowedTaskUser(DEFAULT_TASK_USER_POLICY, "java", "Administrator") ?? "", /disallowed/);
    assert.equal(disallowedTaskUser(DEFAULT_TASK_USER_POLICY, "exec", "nobody"), null);
    assert.equal(
      disallowedTaskUser(DEFAULT_TASK_USER_POLICY, "exec", ""),
      null,
      "no user: the driver's default",
    );
    assert.equal(disallowedTaskUser(DEFAULT_TASK_USER_POLICY, "raw_exec", "root"), null);
  });

  it("reads user.denylist (else the older user.blacklist) and user.checked_drivers, trimmed", () => {
    const p = taskUserPolicyFromOptions({
      "user.denylist": " alice , bob,",
      "user.checked_drivers": "raw_exec",
    });
    assert.deepEqual(p, { denylist: ["alice", "bob"], checkedDrivers: ["raw_exec"] });
    assert.match(disallowedTaskUser(p, "raw_exec", "bob") ?? "", /"bob" is disallowed/);
    assert.equal(disallowedTaskUser(p, "exec", "root"), null, "exec no longer checked");
    assert.deepEqual(taskUserPolicyFromOptions({ "user.blacklist": "carol" }).denylist, ["carol"]);
    assert.deepEqual(
      taskUserPolicyFromOptions({ "user.denylist": "dave", "user.blacklist": "carol" }).denylist,
      ["dave"],
      "the new name wins",
    );
    assert.deepEqual(taskUserPolicyFromOptions({ "user.denylist": "" }).denylist, [], "empty: nobody denied");
    assert.deepEqual(taskUserPolicyFromOptions(undefined), DEFAULT_TASK_USER_POLICY);
  });
});
