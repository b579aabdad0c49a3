/** `volume snapshot create|delete|list` and `volume detach`: parsing, requests sent, output. */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { startFakeApi, type FakeApi } from "../../fakes/api.js";
import { UsageError } from "../../../src/cli/flags.js";
import { volumeDetach } from "../../../src/cli/commands/volume_detach.js";
import { volumeSnapshot } from "../../../src/cli/commands/volume_snapshot.js";
import { NODE_ID } from "../../builders/api_records.js";
import { captureIO } from "../../fakes/command_io.js";

const usageError = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, `a UsageError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });

const snap = (id: string, ext: string) => ({
  ID: id,
  ExternalSourceVolumeID: ext,
  SizeBytes: 10 * 1024 * 1024,
  CreateTime: 1_767_268_800,
  IsReady: true,
  SourceVolumeID: "",
  PluginID: "hostpath",
  Name: "",
  Secrets: null,
  Parameters: null,
});

let api: FakeApi;
before(async () => {
  api = await startFakeApi({
    "PUT /v1/volumes/snapshot": { json: { Snapshots: [snap("snap-1", "hp-1")], Index: 3 } },
    "DELETE /v1/volumes/snapshot": { json: { Index: 4 } },
    "GET /v1/volumes/snapshot": (req) => {
      const q = new URL(req.url, "http://x").searchParams;
      if (q.get("plugin_id") === "nosnaps")
        return {
          status: 400,
          text: 'plugin "nosnaps" does not support ListSnapshots',
          headers: { "X-Berth-Error-Code": "ERR_CSI_NOT_SUPPORTED" },
        };
      if (q.get("plugin_id") === "broken") return { status: 400, text: "bad request" };
      return q.get("next_token") === "2"
        ? { json: { Snapshots: [snap("snap-3", "hp-2")], NextToken: "" } }
        : { json: { Snapshots: [snap("snap-1", "hp-1")], NextToken: "2" } };
    },
    "GET /v1/plugins": {
      json: [
        { ID: "hostpath", ControllersHealthy: 1 },
        { ID: "nosnaps", ControllersHealthy: 1 },
        { ID: "nodeonly", ControllersHealthy: 0 },
      ],
    },
    "GET /v1/node/f00d": {
      status: 404,
      text: "node not found",
      headers: { "X-Berth-Error-Code": "ERR_NOT_FOUND" },
    },
    "GET /v1/nodes": {
      json: [
        { ID: NODE_ID, Name: "web-1" },
        { ID: "aaaa0000-0000-4000-8000-000000000001", Name: "twin" },
        { ID: "bbbb0000-0000-4000-8000-000000000002", Name: "twin" },
      ],
    },
    [`GET /v1/node/${NODE_ID}`]: { json: { ID: NODE_ID } },
    "DELETE /v1/volume/csi/demo/detach": { json: { Index: 5 } },
    "DELETE /v1/volume/csi/busy/detach": {
      status: 409,
      text: 'volume "busy" is in use on node x by running allocation(s) a',
    },
  });
});
after(() => api.close());

const io = () => captureIO(api.address);
const requests = (method: string, path: string) =>
  api.requests.filter((r) => r.method === method && r.url.split("?")[0] === path);

describe("volume snapshot", () => {
  it("parses each verb's arguments and refuses the rest", () => {
    const p = volumeSnapshot.parse(["create", "demo", "nightly", "-secret", "k=v"]);
    assert.deepEqual([p.verb, p.args, p.secrets], ["create", ["demo", "nightly"], { k: "v" }]);
    assert.deepEqual(volumeSnapshot.parse(["list", "-plugin", "hostpath", "-json"]).plugin, "hostpath");
    usageError(() => volumeSnapshot.parse([]), /expected create, delete or list/);
    usageError(() => volumeSnapshot.parse(["make"]), /expected create, delete or list, got "make"/);
    usageError(() => volumeSnapshot.parse(["create"]), /<volume> \[<name>\]/);
    usageError(() => volumeSnapshot.parse(["delete", "hostpath"]), /<plugin> <snapshot>/);
    usageError(() => volumeSnapshot.parse(["create", "demo", "-plugin", "x"]), /-plugin is only for list/);
    assert.throws(
      () => volumeSnapshot.parse(["create", "demo", "-secret", "s3cr3t"]),
      (err: unknown) => err instanceof UsageError && !err.message.includes("s3cr3t"),
    );
  });

  it("create sends Nomad's body and prints the snapshot table", async () => {
    const o = io();
    assert.equal(
      await volumeSnapshot.run(volumeSnapshot.parse(["create", "demo", "nightly", "-secret", "k=v"]), o),
      0,
    );
    const sent = JSON.parse(requests("PUT", "/v1/volumes/snapshot").at(-1)!.body) as unknown;
    assert.deepEqual(sent, {
      Snapshots: [{ SourceVolumeID: "demo", Name: "nightly", Secrets: { k: "v" }, Parameters: {} }],
    });
    assert.deepEqual(o.out, [
      "Completed snapshot of volume demo with snapshot ID snap-1.",
      "Snapshot ID  Volume ID  Size    Create Time           Ready?",
      "snap-1       hp-1       10 MiB  2026-01-01T12:00:00Z  true",
    ]);
  });

  it("list follows NextToken and, without -plugin, skips plugins that cannot list snapshots", async () => {
    const o = io();
    assert.equal(await volumeSnapshot.run(volumeSnapshot.parse(["list", "-plugin", "hostpath"]), o), 0);
    assert.deepEqual(
      o.out.slice(1).map((l) => l.split(/\s+/)[0]),
      ["snap-1", "snap-3"],
    );
    const all = io();
    assert.equal(await volumeSnapshot.run(volumeSnapshot.parse(["list", "-json"]), all), 0);
    const listed = JSON.parse(all.out.join("\n")) as { ID: string }[];
    assert.deepEqual(
      listed.map((s) => s.ID),
      ["snap-1", "snap-3"],
    );
    const asked = requests("GET", "/v1/volumes/snapshot").map((r) =>
      new URL(r.url, "http://x").searchParams.get("plugin_id"),
    );
    assert.ok(!asked.includes("nodeonly"), "plugins without controllers are not asked");
    const failing = io();
    assert.equal(await volumeSnapshot.run(volumeSnapshot.parse(["list", "-plugin", "nosnaps"]), failing), 1);
    assert.match(failing.err[0]!, /^Error listing snapshots: Unexpected response code: 400/);
  });

  it("-parameter reaches CreateSnapshot; -per-page/-page-token show one page and the next command", async () => {
    const o = io();
    const args = ["create", "demo", "-parameter", "tier=cold", "-parameter=zone=a", "-verbose"];
    assert.equal(await volumeSnapshot.run(volumeSnapshot.parse(args), o), 0);
    const sent = JSON.parse(requests("PUT", "/v1/volumes/snapshot").at(-1)!.body) as {
      Snapshots: { Parameters: Record<string, string> }[];
    };
    assert.deepEqual(sent.Snapshots[0]!.Parameters, { tier: "cold", zone: "a" });
    usageError(() => volumeSnapshot.parse(["list", "-parameter", "a=b"]), /-parameter is only for create/);
    usageError(
      () => volumeSnapshot.parse(["list", "-per-page", "2"]),
      /-per-page and -page-token are for list -plugin/,
    );
    usageError(
      () => volumeSnapshot.parse(["list", "-plugin", "p", "-per-page", "0"]),
      /-per-page must be a positive integer/,
    );

    const page = io();
    assert.equal(
      await volumeSnapshot.run(volumeSnapshot.parse(["list", "-plugin", "hostpath", "-per-page", "1"]), page),
      0,
    );
    const asked = new URL(requests("GET", "/v1/volumes/snapshot").at(-1)!.url, "http://x").searchParams;
    assert.equal(asked.get("per_page"), "1");
    assert.deepEqual(
      page.out.slice(1, 2).map((l) => l.split(/\s+/)[0]),
      ["snap-1"],
    );
    assert.deepEqual(page.out.slice(-3), [
      "",
      "Results have been paginated. To get the next page run:",
      "berth volume snapshot list -plugin hostpath -per-page 1 -page-token 2",
    ]);
    const next = io();
    assert.equal(
      await volumeSnapshot.run(
        volumeSnapshot.parse(["list", "-plugin", "hostpath", "-per-page", "1", "-page-token", "2"]),
        next,
      ),
      0,
    );
    assert.deepEqual(
      next.out.slice(1).map((l) => l.split(/\s+/)[0]),
      ["snap-3"],
    );
  });

  it("delete passes secrets in the header, never the URL", async () => {
    const o = io();
    assert.equal(
      await volumeSnapshot.run(volumeSnapshot.parse(["delete", "hostpath", "snap-1", "-secret", "k=v"]), o),
      0,
    );
    const req = requests("DELETE", "/v1/volumes/snapshot").at(-1)!;
    assert.equal(req.url, "/v1/volumes/snapshot?plugin_id=hostpath&snapshot_id=snap-1");
    assert.equal(req.headers["x-nomad-csi-secrets"], "k=v");
    assert.deepEqual(o.out, ["Deleted snapshot snap-1."]);
  });
});

describe("volume detach", () => {
  it("takes a volume and a node (an ID prefix resolves), and reports the server's refusal", async () => {
    usageError(() => volumeDetach.parse(["demo"]), /<volume> <node>/);
    const o = io();
    assert.equal(await volumeDetach.run(volumeDetach.parse(["demo", "f00d"]), o), 0);
    assert.equal(
      requests("DELETE", "/v1/volume/csi/demo/detach").at(-1)!.url,
      `/v1/volume/csi/demo/detach?node=${NODE_ID}`,
    );
    assert.deepEqual(o.out, [`Successfully detached volume "demo" from node "${NODE_ID}"!`]);
    const busy = io();
    assert.equal(await volumeDetach.run(volumeDetach.parse(["busy", NODE_ID]), busy), 1);
    assert.match(
      busy.err[0]!,
      /^Error detaching volume: Unexpected response code: 409 \(.*running allocation/,
    );
  });

  it("takes a node's name too; a name or prefix matching several nodes is refused, naming them", async () => {
    const o = io();
    assert.equal(await volumeDetach.run(volumeDetach.parse(["demo", "web-1"]), o), 0);
    assert.equal(
      requests("DELETE", "/v1/volume/csi/demo/detach").at(-1)!.url,
      `/v1/volume/csi/demo/detach?node=${NODE_ID}`,
    );
    const twin = io();
    const sent = requests("DELETE", "/v1/volume/csi/demo/detach").length;
    assert.equal(await volumeDetach.run(volumeDetach.parse(["demo", "twin"]), twin), 1);
    assert.match(
      twin.err[0]!,
      /"twin" matches 2 nodes by ID prefix or name: aaaa0000.* \(twin\), bbbb0000.* \(twin\); give a node ID/,
    );
    assert.equal(requests("DELETE", "/v1/volume/csi/demo/detach").length, sent, "nothing detached");
    const none = io();
    assert.equal(await volumeDetach.run(volumeDetach.parse(["demo", "nobody"]), none), 1);
    assert.match(none.err[0]!, /404/);
  });
});
