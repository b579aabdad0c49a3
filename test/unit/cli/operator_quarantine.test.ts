/** `operator quarantine [list|delete]`: parsing, the requests sent, the output. */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { UsageError } from "../../../src/cli/flags.js";
import { operatorQuarantine } from "../../../src/cli/commands/operator_quarantine.js";
import { captureIO } from "../../fakes/command_io.js";

const usageError = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, `a UsageError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });

const entry = {
  Table: "jobs",
  Namespace: "default",
  Key: "poison",
  Error: "Job.TaskGroups[0].Count: must be at most 10000",
  QuarantineTime: 1_767_268_800_000_000_000,
};

let api: FakeApi;
before(async () => {
  api = await startFakeApi({
    "GET /v1/operator/quarantine": {
      json: [
        entry,
        { ...entry, Table: "nodes", Namespace: "", Key: "n1", Error: 'Node.Status: unknown value "x"' },
      ],
    },
    "DELETE /v1/operator/quarantine/jobs/poison": { json: {} },
  });
});
after(() => api.close());

describe("operator quarantine", () => {
  it("parses list (the default) and delete; refuses anything else", () => {
    assert.deepEqual(operatorQuarantine.parse([]), { address: undefined, verb: "list", json: false });
    assert.deepEqual(operatorQuarantine.parse(["list", "-json"]), {
      address: undefined,
      verb: "list",
      json: true,
    });
    assert.deepEqual(operatorQuarantine.parse(["delete", "-namespace", "web", "jobs", "poison"]), {
      address: undefined,
      verb: "delete",
      table: "jobs",
      key: "poison",
      namespace: "web",
    });
    usageError(
      () => operatorQuarantine.parse(["delete", "jobs"]),
      /exactly 3 arguments: delete <table> <key>/,
    );
    usageError(
      () => operatorQuarantine.parse(["purge"]),
      /unknown subcommand "purge" \(want list or delete\)/,
    );
  });

  it("lists the entries as a table, one per record, without any record content", async () => {
    const io = captureIO(api.address);
    assert.equal(await operatorQuarantine.run(operatorQuarantine.parse([]), io), 0);
    assert.deepEqual(io.out, [
      "Table  Namespace  Key     Quarantined           Error",
      "jobs   default    poison  2026-01-01T12:00:00Z  Job.TaskGroups[0].Count: must be at most 10000",
      'nodes  -          n1      2026-01-01T12:00:00Z  Node.Status: unknown value "x"',
    ]);
  });

  it("deletes one, sending the namespace; a missing one is an error and exit 1", async () => {
    const io = captureIO(api.address);
    const p = operatorQuarantine.parse(["delete", "-namespace=web", "jobs", "poison"]);
    assert.equal(await operatorQuarantine.run(p, io), 0);
    assert.equal(api.requests.at(-1)?.url, "/v1/operator/quarantine/jobs/poison?namespace=web");
    assert.deepEqual(io.out, ['Deleted quarantined jobs record "poison"']);
    const missing = captureIO(api.address);
    assert.equal(
      await operatorQuarantine.run(operatorQuarantine.parse(["delete", "nodes", "n9"]), missing),
      1,
    );
    assert.match(missing.err[0] ?? "", /^Error deleting quarantined record: Unexpected response code: 404/);
  });
});
