/**
 * Issue 8's CLI pieces: `volume status` shows pending releases and "unknown" for capacity 0;
 * `volume snapshot list` says when no plugin can list snapshots, branching on the server's error
 * code rather than the HTTP status; a broken stdout pipe ends the CLI quietly (a real pipe).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { volumeSnapshot } from "../../../src/cli/commands/volume_snapshot.js";
import { volumeStatus } from "../../../src/cli/commands/volume_status.js";
import { BROKEN_PIPE_EXIT_CODE } from "../../../src/cli/io.js";
import { BERTH_BIN, REPO_ROOT } from "../../helpers/agent_process.js";
import { startFakeApi, type FakeApi, type Reply } from "../../fakes/api.js";
import * as fx from "../../builders/api_records.js";
import { ALLOC_ID, NODE_ID, NOW } from "../../builders/api_records.js";
import { captureIO } from "../../fakes/command_io.js";

const CODE = "X-Berth-Error-Code";
/** What the fake server answers per plugin for a snapshot list, and which plugins it lists. */
let snapshotAnswers: Record<string, Reply> = {};
let plugins: { ID: string; ControllersHealthy: number }[] = [];

const stuck = {
  AllocationID: ALLOC_ID,
  NodeID: NODE_ID,
  ExternalNodeID: "n1",
  Mode: "write",
  AccessMode: "single-node-writer",
  AttachmentMode: "file-system",
  State: "taken",
  ReleaseStatus: {
    Step: "node-unpublish",
    LastError: "CSI NodeUnpublishVolume failed: INTERNAL: lsblk: not found",
    Attempts: 3,
    NextAttempt: (NOW + 30_000) * 1e6,
    UpdateTime: NOW * 1e6,
  },
};

let api: FakeApi;
before(async () => {
  api = await startFakeApi({
    "GET /v1/volumes": { json: [fx.volumeStub] },
    "GET /v1/volume/csi/demo": { json: { ...fx.volume, WriteClaims: { [ALLOC_ID]: stuck } } },
    "GET /v1/volume/csi/zero": {
      json: {
        ...fx.volume,
        ID: "zero",
        Capacity: 0,
        PastClaims: {
          other: { ...stuck, AllocationID: "other", State: "node-detached", ReleaseStatus: null },
        },
      },
    },
    "GET /v1/volume/csi/idle": { json: { ...fx.volume, ID: "idle" } },
    "GET /v1/plugins": () => ({ json: plugins }),
    "GET /v1/volumes/snapshot": (req) => {
      const id = new URL(req.url, "http://x").searchParams.get("plugin_id") ?? "";
      return snapshotAnswers[id] ?? { status: 404, text: "not found" };
    },
  });
});
after(() => api.close());

describe("volume status: releases and capacity", () => {
  it("shows a stuck release: alloc, node, step, attempts, next attempt, last error", async () => {
    const o = captureIO(api.address);
    assert.equal(await volumeStatus.run(volumeStatus.parse(["demo"]), o), 0);
    const i = o.out.indexOf("Releases");
    assert.ok(i > 0, o.out.join("\n"));
    assert.match(o.out[i + 1]!, /^Alloc ID\s+Node ID\s+State\s+Step\s+Attempts\s+Next Attempt\s+Last Error$/);
    assert.match(
      o.out[i + 2]!,
      /^a1b2c3d4\s+f00dfeed\s+taken\s+node-unpublish\s+3\s+2026-01-01T12:00:30Z \(in 30s\)\s+CSI NodeUnpublishVolume failed: INTERNAL: lsblk: not found$/,
    );
    assert.match(o.out.join("\n"), /^Capacity\s+= 10 MiB$/m);
  });

  it("capacity 0 is unknown; a releasing claim with nothing reported shows its pending step", async () => {
    const o = captureIO(api.address);
    assert.equal(await volumeStatus.run(volumeStatus.parse(["zero"]), o), 0);
    assert.match(o.out.join("\n"), /^Capacity\s+= unknown$/m);
    const row = o.out[o.out.indexOf("Releases") + 2]!;
    assert.match(row, /^other\s+f00dfeed\s+node-detached\s+controller-unpublish\s+0\s+<none>\s+<none>$/);
  });

  it("no Releases section when nothing is pending", async () => {
    const o = captureIO(api.address);
    assert.equal(await volumeStatus.run(volumeStatus.parse(["idle"]), o), 0);
    assert.ok(!o.out.includes("Releases"));
  });
});

describe("volume snapshot list: when no plugin can list", () => {
  const list = async (...args: string[]) => {
    const o = captureIO(api.address);
    const code = await volumeSnapshot.run(volumeSnapshot.parse(["list", ...args]), o);
    return { code, out: o.out, err: o.err };
  };

  it("says so, with each plugin's reason, instead of 'No snapshots found'", async () => {
    plugins = [
      { ID: "nosnaps", ControllersHealthy: 1 },
      { ID: "nodeonly", ControllersHealthy: 0 },
    ];
    snapshotAnswers = {
      nosnaps: {
        status: 400,
        text: 'plugin "nosnaps" does not support ListSnapshots',
        headers: { [CODE]: "ERR_CSI_NOT_SUPPORTED" },
      },
    };
    const r = await list();
    assert.equal(r.code, 1);
    assert.deepEqual(r.out, []);
    assert.match(r.err[0]!, /^Error listing snapshots: no CSI plugin can list snapshots/);
    assert.match(r.err[0]!, /plugin "nosnaps": plugin "nosnaps" does not support ListSnapshots/);
    assert.match(r.err[0]!, /plugin "nodeonly": no healthy controller/);
  });

  it("no plugins at all is said too", async () => {
    plugins = [];
    const r = await list("-json");
    assert.equal(r.code, 1);
    assert.match(r.err[0]!, /no CSI plugin can list snapshots.*\(no CSI plugins\)/);
  });

  it("a plugin whose controller is unavailable is skipped; one that lists answers 'No snapshots found'", async () => {
    plugins = [
      { ID: "away", ControllersHealthy: 1 },
      { ID: "hostpath", ControllersHealthy: 1 },
    ];
    snapshotAnswers = {
      away: { status: 503, text: "no healthy controller", headers: { [CODE]: "ERR_CSI_PLUGIN_UNAVAILABLE" } },
      hostpath: { json: { Snapshots: [], NextToken: "" } },
    };
    const r = await list();
    assert.deepEqual([r.code, r.out], [0, ["No snapshots found"]]);
  });

  it("branches on the error code, not the status: an uncoded 400 is a real failure", async () => {
    plugins = [{ ID: "broken", ControllersHealthy: 1 }];
    snapshotAnswers = { broken: { status: 400, text: "bad request" } };
    const r = await list();
    assert.equal(r.code, 1);
    assert.match(r.err[0]!, /^Error listing snapshots: Unexpected response code: 400 \(bad request\)/);
  });
});

describe("a broken stdout pipe", () => {
  /** Runs `berth args` with stdout a real pipe whose reader is closed before the CLI writes. */
  const withClosedReader = (args: string[]) =>
    new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BERTH_BIN, ...args], {
        cwd: REPO_ROOT,
        stdio: ["ignore", "pipe", "pipe"],
      });
      child.stdout.destroy();
      let stderr = "";
      child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      child.on("error", reject);
      child.on("close", (code, signal) => resolve({ code, signal, stderr }));
    });

  it("ends the command quietly with SIGPIPE's status, no stack trace", async () => {
    const r = await withClosedReader(["help"]);
    assert.equal(r.stderr, "", "nothing on stderr");
    assert.deepEqual([r.code, r.signal], [BROKEN_PIPE_EXIT_CODE, null]);
  });
});
