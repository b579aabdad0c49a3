/** `berth volume orphans [-plugin] [-adopt <volume> | -delete <volume> [-secret k=v]]`: parsing, requests, output. */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { UsageError } from "../../../src/cli/flags.js";
import { volumeOrphans } from "../../../src/cli/commands/volume_orphans.js";
import { captureIO } from "../../fakes/command_io.js";

const orphan = (id: string, storage: string[] | null) => ({
  ID: id,
  Namespace: "default",
  Name: id,
  PluginID: "hostpath",
  CreateTime: 1_767_268_800_000_000_000,
  UnrecordedStorage: storage,
  ListError: storage === null ? 'plugin "hostpath" does not support ListVolumes' : "",
  CreateIndex: 5,
  ModifyIndex: 5,
});

let api: FakeApi;
before(async () => {
  api = await startFakeApi({
    "GET /v1/volumes/orphans": (req) =>
      new URL(req.url, "http://x").searchParams.get("plugin_id") === "none"
        ? { json: [] }
        : { json: [orphan("web", ["hp-1", "hp-2"]), orphan("db", null)], headers: { "X-Nomad-Index": "5" } },
    "PUT /v1/volume/csi/web/adopt": { json: { Volumes: [{ ID: "web", ExternalID: "hp-1" }], Index: 6 } },
    "DELETE /v1/volume/csi/db/orphan": { json: { Index: 7 } },
  });
});
after(() => api.close());

const io = () => captureIO(api.address);

void describe("volume orphans", () => {
  void it("parses its flags; -adopt and -delete exclude each other; a bad -secret is not echoed", () => {
    assert.deepEqual(volumeOrphans.parse(["-plugin", "hostpath"]).plugin, "hostpath");
    assert.equal(volumeOrphans.parse(["-adopt", "web"]).adopt, "web");
    assert.deepEqual(volumeOrphans.parse(["-delete", "db", "-secret", "k=v"]).secrets, { k: "v" });
    assert.throws(
      () => volumeOrphans.parse(["-adopt", "a", "-delete", "b"]),
      (e: unknown) => e instanceof UsageError && /exclude each other/.test(e.message),
    );
    assert.throws(
      () => volumeOrphans.parse(["-delete", "db", "-secret", "s3cr3t"]),
      (e: unknown) => e instanceof UsageError && !e.message.includes("s3cr3t"),
    );
    assert.throws(() => volumeOrphans.parse(["extra"]), UsageError);
  });

  void it("lists the orphans with the plugin's unrecorded storage, or why it is unknown", async () => {
    const c = io();
    assert.equal(await volumeOrphans.run(volumeOrphans.parse([]), c), 0);
    assert.deepEqual(c.out.join("\n").split("\n"), [
      "ID   Namespace  Name  Plugin ID  Create Time           Unrecorded Storage",
      "web  default    web   hostpath   2026-01-01T12:00:00Z  hp-1,hp-2",
      'db   default    db    hostpath   2026-01-01T12:00:00Z  <unknown: plugin "hostpath" does not support ListVolumes>',
    ]);
    const none = io();
    assert.equal(await volumeOrphans.run(volumeOrphans.parse(["-plugin", "none"]), none), 0);
    assert.deepEqual(none.out, ["No orphaned volumes"]);
  });

  void it("adopts and deletes through their routes; secrets travel in the header", async () => {
    const a = io();
    assert.equal(await volumeOrphans.run(volumeOrphans.parse(["-adopt", "web"]), a), 0);
    assert.deepEqual(a.out, ['Adopted orphaned storage "hp-1" as volume "web"']);
    const d = io();
    assert.equal(await volumeOrphans.run(volumeOrphans.parse(["-delete", "db", "-secret", "k=v"]), d), 0);
    assert.deepEqual(d.out, ['Deleted the orphaned storage of volume "db"']);
    const del = api.requests.find((r) => r.method === "DELETE")!;
    assert.equal(del.headers["x-nomad-csi-secrets"], "k=v");
    assert.ok(!del.url.includes("k=v"));
    const missing = io();
    assert.notEqual(await volumeOrphans.run(volumeOrphans.parse(["-adopt", "nope"]), missing), 0);
    assert.match(missing.err.join("\n"), /adopting orphaned volume/i);
  });
});
