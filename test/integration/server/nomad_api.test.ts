/**
 * Nomad's Go API client against a real `berth agent -dev` with the csi-hostpath plugin job: every
 * request is shaped as the Go client marshals it (all fields, Go zero values, `"Namespace": ""`,
 * `FSType`, X-Nomad-Token) and every answer is decoded strictly into the Go structs of Nomad's
 * `api` package (test/nomadapi): an unknown field, a number where Go has a time.Time, or null where
 * Go has a string fails with the JSON path. Also Nomad's list options (prefix, filter, per_page +
 * X-Nomad-NextToken, reverse, node_id/plugin_id, ?type) and write semantics (405s, 404 on deleting
 * an unknown volume, immutable Name on re-register).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { GoApiClient, goStruct, GO_ZERO_TIME } from "../../nomadapi/go_client.js";
import { NOMAD_SERVER_FIELDS } from "../../nomadapi/extra_fields.js";

const MiB = 1 << 20;
let dir: string;
let agent: AgentProcess | undefined;
let addr: string;
let logFile: string;
let go: GoApiClient;
let passed = 0;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-goapi-"));
  logFile = path.join(dir, "agent.log");
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  go = new GoApiClient(addr, {
    token: "not-checked-by-berth",
    extra: NOMAD_SERVER_FIELDS,
  });
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually(
    "the dev node to be ready",
    async () =>
      (await getJson<{ Status: string }[]>(addr, "/v1/nodes")).some((n) => n.Status === "ready")
        ? true
        : undefined,
    30_000,
  );
  const job = path.join(dir, "plugin.hcl");
  const args = ["--node-id=${node.unique.id}", `--state-dir=${path.join(dir, "storage")}`];
  fs.writeFileSync(job, hostpathPluginJob({ job: "hostpath", driver: "raw_exec", args }));
  const r = await runCli(["job", "run", job], { BERTH_ADDR: addr });
  assert.equal(r.code, 0, r.stderr);
  await eventually("the plugin to be healthy", async () => {
    const p = await getJson<{ NodesHealthy: number }>(addr, "/v1/plugin/csi/hostpath").catch(() => undefined);
    return p && p.NodesHealthy === 1 ? p : undefined;
  });
});

after(async () => {
  try {
    if (agent?.running) {
      for (const id of ["vol-c", "vol-r", "vol-r2"])
        await go.send("DELETE", `/v1/volume/csi/${id}`, undefined, {}).catch(() => undefined);
      await runCli(["job", "stop", "-purge", "hostpath"], { BERTH_ADDR: addr }).catch(() => undefined);
    }
  } finally {
    await agent?.stop();
    const leftovers = killProcessesUnder(dir);
    if (passed < 3 || leftovers.length > 0)
      process.stderr.write(`--- agent log (tail) ---\n${logTail(logFile)}\n`);
    const mounts = await mountsUnder(dir);
    for (const m of [...mounts].reverse()) {
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], "no process left running");
    assert.deepEqual(mounts, [], "nothing left mounted");
  }
});

function volumeSpec(id: string, set: Record<string, unknown>) {
  return goStruct("CSIVolume", {
    ID: id,
    Name: id,
    PluginID: "hostpath",
    RequestedCapabilities: [
      goStruct("CSIVolumeCapability", { AccessMode: "single-node-writer", AttachmentMode: "file-system" }),
    ],
    MountOptions: goStruct("CSIMountOptions", { FSType: "ext4", MountFlags: ["noatime"] }),
    ...set,
  });
}

test(
  "the Go client registers and creates volumes and reads every answer strictly",
  { timeout: 120_000 },
  async () => {
    const created = await go.put<{
      Volumes: { ID: string; Namespace: string; ExternalID: string; MountOptions: { FSType: string } }[];
    }>(
      "/v1/volume/csi/vol-c/create",
      goStruct("CSIVolumeCreateRequest", { Volumes: [volumeSpec("vol-c", { RequestedCapacityMin: MiB })] }),
      "CSIVolumeCreateResponse",
    );
    assert.equal(created.body.Volumes.length, 1);
    assert.equal(
      created.body.Volumes[0]!.Namespace,
      "default",
      '"Namespace": "" is the request\'s namespace',
    );
    assert.equal(created.body.Volumes[0]!.MountOptions.FSType, "ext4");

    const registered = await go.put<{ Volumes: { ID: string; Namespace: string; CreateTime: number }[] }>(
      "/v1/volume/csi/vol-r",
      goStruct("CSIVolumeRegisterRequest", { Volumes: [volumeSpec("vol-r", { ExternalID: "ext-r" })] }),
      "CSIVolumeRegisterResponse",
    );
    assert.equal(registered.body.Volumes[0]!.Namespace, "default");
    assert.ok(registered.body.Volumes[0]!.CreateTime > 0, "CreateTime is stamped (Unix ns)");
    // PUT /v1/volumes registers too, as Nomad's CSIVolumesRequest does.
    await go.put(
      "/v1/volumes",
      goStruct("CSIVolumeRegisterRequest", { Volumes: [volumeSpec("vol-r2", { ExternalID: "ext-r2" })] }),
      "CSIVolumeRegisterResponse",
    );

    const vol = await go.get<{ ResourceExhausted: string; MountOptions: { FSType: string } }>(
      "/v1/volume/csi/vol-c",
      "CSIVolume",
    );
    assert.equal(vol.body.ResourceExhausted, GO_ZERO_TIME);
    const list = await go.get<{ ID: string }[]>("/v1/volumes", "[]*CSIVolumeListStub", { type: "csi" });
    assert.deepEqual(
      list.body.map((v) => v.ID),
      ["vol-c", "vol-r", "vol-r2"],
    );

    const plugins = await go.get<{ ID: string }[]>("/v1/plugins", "[]*CSIPluginListStub", { type: "csi" });
    assert.deepEqual(
      plugins.body.map((p) => p.ID),
      ["hostpath"],
    );
    const plugin = await go.get<{
      Nodes: Record<string, { UpdateTime: string }>;
      CreateTime: number;
      ModifyTime: number;
    }>("/v1/plugin/csi/hostpath", "CSIPlugin");
    const info = Object.values(plugin.body.Nodes)[0]!;
    assert.ok(
      Date.parse(info.UpdateTime) > Date.parse("2020-01-01T00:00:00Z"),
      "UpdateTime is an RFC 3339 time",
    );
    const nowNs = Date.now() * 1e6;
    const { CreateTime, ModifyTime } = plugin.body;
    assert.ok(
      CreateTime > nowNs - 3600e9 && CreateTime <= ModifyTime && ModifyTime <= nowNs + 1e9,
      `plugin CreateTime/ModifyTime are Unix ns: ${CreateTime} ${ModifyTime}`,
    );

    const nodes = await go.get<{ ID: string }[]>("/v1/nodes", "[]*NodeListStub");
    const node = await go.get<{ StatusUpdatedAt: number }>(`/v1/node/${nodes.body[0]!.ID}`, "Node");
    const nowS = Date.now() / 1000;
    assert.ok(
      Math.abs(node.body.StatusUpdatedAt - nowS) < 3600,
      `StatusUpdatedAt is Unix seconds: ${node.body.StatusUpdatedAt}`,
    );

    const jobs = await go.get<{ ID: string }[]>("/v1/jobs", "[]*JobListStub");
    assert.deepEqual(
      jobs.body.map((j) => j.ID),
      ["hostpath"],
    );
    await go.get("/v1/job/hostpath", "Job");
    const allocs = await go.get<{ ID: string }[]>("/v1/allocations", "[]*AllocationListStub");
    await go.get(`/v1/allocation/${allocs.body[0]!.ID}`, "Allocation");
    const evals = await go.get<{ ID: string }[]>("/v1/evaluations", "[]*Evaluation");
    await go.get(`/v1/evaluation/${evals.body[0]!.ID}`, "Evaluation");
    passed++;
  },
);

test(
  "list options: prefix, filter, per_page with X-Nomad-NextToken, reverse, ?type",
  { timeout: 60_000 },
  async () => {
    const ids = async (query: Record<string, string>) =>
      (
        await go.get<{ ID: string }[]>("/v1/volumes", "[]*CSIVolumeListStub", { type: "csi", ...query })
      ).body.map((v) => v.ID);
    assert.deepEqual(await ids({ prefix: "vol-r" }), ["vol-r", "vol-r2"]);
    assert.deepEqual(await ids({ filter: 'ExternalID == "ext-r2"' }), ["vol-r2"]);
    assert.deepEqual(await ids({ filter: 'ExternalID matches "^ext-" and not (ID == "vol-r")' }), ["vol-r2"]);
    assert.deepEqual(await ids({ reverse: "true" }), ["vol-r2", "vol-r", "vol-c"]);

    const first = await go.get<{ ID: string }[]>("/v1/volumes", "[]*CSIVolumeListStub", {
      type: "csi",
      per_page: "2",
    });
    assert.deepEqual(
      first.body.map((v) => v.ID),
      ["vol-c", "vol-r"],
    );
    assert.equal(first.headers.get("X-Nomad-NextToken"), "default.vol-r2", "Nomad's Namespace.ID token");
    const second = await go.get<{ ID: string }[]>("/v1/volumes", "[]*CSIVolumeListStub", {
      type: "csi",
      per_page: "2",
      next_token: first.headers.get("X-Nomad-NextToken")!,
    });
    assert.deepEqual(
      second.body.map((v) => v.ID),
      ["vol-r2"],
    );
    assert.equal(second.headers.get("X-Nomad-NextToken"), null, "no token on the last page");

    const bad = await go.send("GET", "/v1/volumes", undefined, { type: "csi", filter: "ID ==" });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /^failed to read filter expression: /);
    const unknownField = await go.send("GET", "/v1/nodes", undefined, { filter: 'Nmae == "x"' });
    assert.equal(unknownField.status, 400);
    assert.match(await unknownField.text(), /Nmae/);

    const none = await go.send("GET", "/v1/volumes", undefined, {});
    assert.equal(none.status, 200);
    assert.deepEqual(await none.json(), [], "no ?type answers [] as Nomad's");
    const other = await go.send("GET", "/v1/volumes", undefined, { type: "nfs" });
    assert.equal(other.status, 404);
    await go.get("/v1/volumes", "[]*HostVolumeStub", { type: "host" });

    const nodes = await go.get<{ ID: string }[]>("/v1/nodes", "[]*NodeListStub");
    const prefixed = await go.get<{ ID: string }[]>("/v1/nodes", "[]*NodeListStub", {
      prefix: nodes.body[0]!.ID.slice(0, 4),
    });
    assert.equal(prefixed.body.length, 1);
    assert.deepEqual((await go.get<unknown[]>("/v1/nodes", "[]*NodeListStub", { prefix: "zzzz" })).body, []);
    const running = await go.get<{ ID: string }[]>("/v1/allocations", "[]*AllocationListStub", {
      filter: 'ClientStatus == "running"',
    });
    assert.equal(running.body.length, 1);
    const jobs = await go.get<unknown[]>("/v1/jobs", "[]*JobListStub", { filter: 'Type == "batch"' });
    assert.deepEqual(jobs.body, []);
    passed++;
  },
);

test(
  "write semantics: 405 as Nomad's, 404 for an unknown volume, an immutable name",
  { timeout: 60_000 },
  async () => {
    const post = await go.send("POST", "/v1/volume/csi/vol-r", { Volumes: [] }, {});
    assert.equal(post.status, 405, "Nomad registers on PUT only at /v1/volume/csi/:id");
    const postCreate = await go.send("POST", "/v1/volume/csi/vol-x/create", { Volumes: [] }, {});
    assert.equal(postCreate.status, 405);

    const gone = await go.send("DELETE", "/v1/volume/csi/no-such-volume", undefined, {});
    assert.equal(gone.status, 404);
    assert.equal((await gone.text()).trim(), "volume not found: no-such-volume");
    const del = await runCli(["volume", "delete", "no-such-volume"], { BERTH_ADDR: addr });
    assert.notEqual(del.code, 0);
    assert.doesNotMatch(del.stdout, /Successfully/);

    const before = await getJson<{ Name: string; ModifyIndex: number }>(addr, "/v1/volume/csi/vol-r");
    const rename = await go.send(
      "PUT",
      "/v1/volume/csi/vol-r",
      goStruct("CSIVolumeRegisterRequest", {
        Volumes: [volumeSpec("vol-r", { ExternalID: "ext-r", Name: "renamed" })],
      }),
      {},
    );
    assert.equal(rename.status, 409);
    assert.match(await rename.text(), /unable to update volume: volume name cannot be updated/);
    const afterRename = await getJson<{ Name: string; ModifyIndex: number }>(addr, "/v1/volume/csi/vol-r");
    assert.deepEqual(
      afterRename,
      { ...afterRename, Name: before.Name, ModifyIndex: before.ModifyIndex },
      "nothing changed",
    );
    passed++;
  },
);
