/**
 * The task `logs` stanza (structs/log_config.ts) through validateJob: Nomad's defaults for an
 * absent block or field, its minimums and disk check with its texts, each refusal naming the field.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BerthError } from "../../../src/structs/errors.js";
import { validateJob } from "../../../src/structs/job_validate.js";

function job(logs: unknown, disk?: unknown): unknown {
  return {
    ID: "j",
    TaskGroups: [
      {
        Name: "g",
        ...(disk === undefined ? {} : { EphemeralDisk: disk }),
        Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/true" }, LogConfig: logs }],
      },
    ],
  };
}

function logsOf(logs: unknown, disk?: unknown): unknown {
  return validateJob(job(logs, disk)).TaskGroups[0]!.Tasks[0]!.LogConfig;
}

function refused(logs: unknown, field: string, message: string, disk?: unknown): void {
  assert.throws(
    () => validateJob(job(logs, disk)),
    (err: unknown) => {
      assert.ok(err instanceof BerthError, String(err));
      assert.equal(err.code, "ERR_VALIDATION");
      assert.equal(err.field, field);
      assert.equal(err.message, `${field}: ${message}`);
      return true;
    },
  );
}

describe("task logs stanza", () => {
  it("takes Nomad's defaults for an absent block or field", () => {
    assert.deepEqual(logsOf(undefined), { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false });
    assert.deepEqual(logsOf(null), { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false });
    assert.deepEqual(logsOf({ MaxFiles: 2 }), { MaxFiles: 2, MaxFileSizeMB: 10, Disabled: false });
    assert.deepEqual(logsOf({ MaxFileSizeMB: 1, Disabled: true }), {
      MaxFiles: 10,
      MaxFileSizeMB: 1,
      Disabled: true,
    });
    // Nomad's deprecated Enabled: false disables, unless Disabled says otherwise.
    assert.equal((logsOf({ Enabled: false }) as { Disabled: boolean }).Disabled, true);
    assert.equal((logsOf({ Enabled: false, Disabled: false }) as { Disabled: boolean }).Disabled, false);
  });

  it("refuses what Nomad refuses, naming the field", () => {
    const at = "Job.TaskGroups[0].Tasks[0].LogConfig";
    refused({ MaxFiles: 0 }, `${at}.MaxFiles`, "minimum number of files is 1; got 0");
    refused({ MaxFileSizeMB: 0 }, `${at}.MaxFileSizeMB`, "minimum file size is 1MB; got 0");
    refused({ MaxFiles: 1.5 }, `${at}.MaxFiles`, "must be an integer");
    refused({ MaxFiles: "3" }, `${at}.MaxFiles`, "must be a number");
    refused({ Disabled: "yes" }, `${at}.Disabled`, "must be a boolean");
    refused({ MaxFilez: 3 }, `${at}.MaxFilez`, "unknown field");
    refused([], at, "must be an object");
  });

  it("needs the logs to fit below the group's ephemeral disk (default 300 MB)", () => {
    const at = "Job.TaskGroups[0].Tasks[0].LogConfig";
    refused({ MaxFiles: 30 }, at, "log storage (300 MB) must be less than requested disk capacity (300 MB)");
    refused({}, at, "log storage (100 MB) must be less than requested disk capacity (50 MB)", { SizeMB: 50 });
    assert.deepEqual(logsOf({ MaxFiles: 30 }, { SizeMB: 301 }), {
      MaxFiles: 30,
      MaxFileSizeMB: 10,
      Disabled: false,
    });
  });
});
