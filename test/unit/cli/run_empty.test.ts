import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { jobStatus } from "../../../src/cli/commands/job_status.js";
import { nodeStatus } from "../../../src/cli/commands/node_status.js";
import { pluginStatus } from "../../../src/cli/commands/plugin_status.js";
import { volumeStatus } from "../../../src/cli/commands/volume_status.js";
import { captureIO } from "../../fakes/command_io.js";

let api: FakeApi;

before(async () => {
  api = await startFakeApi({
    "GET /v1/jobs": { json: [] },
    "GET /v1/nodes": { json: [] },
    "GET /v1/volumes": { json: [] },
    "GET /v1/plugins": { status: 500, text: "state store closed" },
  });
});

after(() => api.close());

describe("empty lists and list errors", () => {
  for (const [name, cmd, line] of [
    ["job status", jobStatus, "No running jobs"],
    ["node status", nodeStatus, "No nodes registered"],
    ["volume status", volumeStatus, "No CSI volumes"],
  ] as const) {
    it(`${name} says there is nothing, and -json prints []`, async () => {
      const o = captureIO(api.address);
      assert.equal(await cmd.run(cmd.parse([]), o), 0);
      assert.deepEqual(o.out, [line]);
      const j = captureIO(api.address);
      assert.equal(await cmd.run(cmd.parse(["-json"]), j), 0);
      assert.deepEqual(j.out, ["[]"]);
    });
  }

  it("a server error on a list is one line and exit 1", async () => {
    const o = captureIO(api.address);
    assert.equal(await pluginStatus.run(pluginStatus.parse([]), o), 1);
    assert.deepEqual(o.err, [
      "Error querying CSI plugins: Unexpected response code: 500 (state store closed)",
    ]);
    assert.deepEqual(o.out, []);
  });
});
