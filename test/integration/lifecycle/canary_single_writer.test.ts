/**
 * Updates with real processes on loopback: a `-server` agent and one `-client` agent A running
 * csi-hostpath (controller and node plugin under raw_exec), real bind mounts, the HTTP API.
 *
 * 1. A canary on a single-node-writer volume (Nomad #13380, where it deadlocks): v1 runs and claims
 *    the volume; v2 is registered with `update { canary = 1, auto_promote = true,
 *    min_healthy_time = "1s" }`. The server stops v1 first, places the canary once v1's claim is
 *    released, the watcher marks it healthy and promotes it, and the deployment succeeds. The task
 *    writes "start"/"stop" lines into the volume: v1's stop comes before v2's start (never two
 *    writers), and the volume ends with exactly the canary's claim, nothing stuck in release.
 * 2. A rolling update with max_parallel = 1 over count = 2 with one canary and manual promotion:
 *    the deployment waits for `PUT /v1/deployment/promote/:id`, then replaces the other alloc.
 * 3. Issue 11's acceptance as an operator runs it: `berth job run` of an HCL jobspec with
 *    `update { canary = 1 }` on a single-node-writer volume, twice; the second run monitors the
 *    evaluation and the deployment and ends with "Deployment ... successful", exit 0.
 * The file ends with no task running and nothing mounted under its dir.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { eventually, findFiles, getJson, runCli } from "../../helpers/agent_process.js";
import { HostpathCluster, claimCount, volumeHcl, type ClaimsView } from "./hostpath_cluster.js";

const cluster = new HostpathCluster("berth-canary-");
let addr: string;
let completed = 0;
/** Mounts the running plugins hold (their own directories), before any volume is used. */
let baseline: string[];

const S = 1_000_000_000;

interface DeploymentView {
  ID: string;
  JobVersion: number;
  Status: string;
  StatusDescription: string;
  TaskGroups: Record<
    string,
    {
      Promoted: boolean;
      DesiredCanaries: number;
      PlacedCanaries: string[];
      HealthyAllocs: number;
      DesiredTotal: number;
    }
  >;
}
interface AllocView {
  ID: string;
  Name: string;
  JobVersion: number;
  ClientStatus: string;
  DesiredStatus: string;
  DesiredDescription: string;
  DeploymentStatus: { Healthy: boolean | null; Canary: boolean } | null;
}

async function put(route: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${addr}${route}`, { method: "PUT", body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: res.ok ? (JSON.parse(text) as unknown) : text };
}

/** The JSON job: `count` allocs of a shell loop, optionally on the csi volume `vol` at /data. */
function jobJson(
  id: string,
  opts: { version: string; count: number; update: Record<string, unknown>; vol?: string },
): unknown {
  // Appends "start <version>" on start and "stop <version>" on SIGTERM/SIGINT into /data/log.
  const script = opts.vol
    ? `echo "start $V" >> /data/log; trap 'echo "stop $V" >> /data/log; exit 0' TERM INT; while true; do sleep 0.2; done`
    : `trap 'exit 0' TERM INT; while true; do sleep 0.2; done`;
  return {
    Job: {
      ID: id,
      Type: "service",
      Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 1 * S, ...opts.update },
      TaskGroups: [
        {
          Name: "g",
          Count: opts.count,
          Volumes: opts.vol
            ? {
                data: {
                  Type: "csi",
                  Source: opts.vol,
                  AccessMode: "single-node-writer",
                  AttachmentMode: "file-system",
                },
              }
            : {},
          Tasks: [
            {
              Name: "t",
              Driver: "exec",
              Config: { command: "/bin/sh", args: ["-c", script] },
              Env: { V: opts.version },
              KillTimeout: 5 * S,
              VolumeMounts: opts.vol ? [{ Volume: "data", Destination: "/data" }] : [],
            },
          ],
        },
      ],
    },
  };
}

const allocs = (job: string) => getJson<AllocView[]>(addr, `/v1/job/${job}/allocations`);
const latest = (job: string) => getJson<DeploymentView | null>(addr, `/v1/job/${job}/deployment`);

async function deploymentDone(job: string, version: number): Promise<DeploymentView> {
  return eventually(
    `the deployment of ${job} version ${version} to succeed`,
    async () => {
      const d = await latest(job);
      if (d && d.JobVersion === version && d.Status === "failed") throw new Error(d.StatusDescription);
      return d && d.JobVersion === version && d.Status === "successful" ? d : undefined;
    },
    90_000,
  );
}

before(async () => {
  await cluster.start(["A"]);
  addr = cluster.addr;
  await cluster.runPluginJob("plugin.hcl", "hostpath", [
    cluster.pluginGroup("controller", "A", "controller"),
    cluster.pluginGroup("node-a", "A", "node"),
  ]);
  await eventually("the controller and node plugin to be healthy", async () => {
    const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
      addr,
      "/v1/plugin/csi/hostpath",
    ).catch(() => undefined);
    return p && p.ControllersHealthy === 1 && p.NodesHealthy === 1 ? p : undefined;
  });
  baseline = await mountsUnder(cluster.dir);
});

after(() => cluster.teardown(completed >= 4));

test("a canary on a single-node-writer volume claims after the old alloc released it, and is promoted", async () => {
  await cluster.cli(["volume", "create", cluster.writeFile("vol.hcl", volumeHcl("shared"))]);
  const update = { Canary: 1, AutoPromote: true };
  assert.equal(
    (await put("/v1/jobs", jobJson("web", { version: "1", count: 1, update, vol: "shared" }))).status,
    200,
  );
  const first = await deploymentDone("web", 0);
  assert.equal(first.TaskGroups.g?.HealthyAllocs, 1);
  const [v1] = await allocs("web");
  assert.ok(v1);

  // Watch the claims while v2 rolls out: never more than one writer.
  let maxWriters = 0;
  let watching = true;
  const watcher = (async () => {
    while (watching) {
      const v = await getJson<ClaimsView>(addr, "/v1/volume/csi/shared?claims=true").catch(() => undefined);
      if (v) maxWriters = Math.max(maxWriters, Object.keys(v.WriteAllocs ?? {}).length);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  try {
    const reg = await put("/v1/jobs", jobJson("web", { version: "2", count: 1, update, vol: "shared" }));
    assert.equal(reg.status, 200);
    const d = await deploymentDone("web", 1);
    assert.equal(d.TaskGroups.g?.DesiredCanaries, 1);
    assert.equal(d.TaskGroups.g?.Promoted, true, "auto-promoted");
    assert.equal(d.TaskGroups.g?.PlacedCanaries.length, 1);
    assert.equal(d.StatusDescription, "Deployment completed successfully");
  } finally {
    watching = false;
    await watcher;
  }
  assert.equal(maxWriters, 1, "one writer at any time");
  const after = await allocs("web");
  const old = after.find((a) => a.ID === v1.ID)!;
  assert.equal(old.DesiredStatus, "stop");
  assert.match(old.DesiredDescription, /single-writer volume must be released/);
  assert.equal(old.ClientStatus, "complete");
  const running = after.filter((a) => a.ClientStatus === "running");
  assert.equal(running.length, 1);
  assert.deepEqual(
    [running[0]!.JobVersion, running[0]!.DeploymentStatus?.Canary, running[0]!.DeploymentStatus?.Healthy],
    [1, true, true],
  );
  const vol = await getJson<ClaimsView>(addr, "/v1/volume/csi/shared?claims=true");
  assert.deepEqual(Object.keys(vol.WriteAllocs ?? {}), [running[0]!.ID], "only the canary's claim");
  assert.deepEqual(Object.keys(vol.PastClaims ?? {}), [], "no claim stuck in release");
  const versions = await getJson<{ Versions: { Version: number; Stable: boolean }[] }>(
    addr,
    "/v1/job/web/versions",
  );
  assert.deepEqual(
    versions.Versions.map((v) => [v.Version, v.Stable]),
    [
      [1, true],
      [0, true],
    ],
  );
  // The task's own record in the volume: v1 stopped before v2 started.
  const log = await eventually("v2's start line", async () => {
    const [file] = findFiles(cluster.storage, "log");
    const text = file ? fs.readFileSync(file, "utf8") : "";
    return text.includes("start 2") ? text : undefined;
  });
  assert.deepEqual(log.trim().split("\n"), ["start 1", "stop 1", "start 2"]);
  completed++;
});

test("a rolling update with max_parallel = 1 over count = 2 waits for promotion by the API", async () => {
  const update = { Canary: 1 };
  assert.equal((await put("/v1/jobs", jobJson("roll", { version: "1", count: 2, update }))).status, 200);
  await deploymentDone("roll", 0);
  assert.equal((await put("/v1/jobs", jobJson("roll", { version: "2", count: 2, update }))).status, 200);
  const waiting = await eventually("the canary to be healthy", async () => {
    const d = await latest("roll");
    return d && d.JobVersion === 1 && d.TaskGroups.g?.HealthyAllocs === 1 ? d : undefined;
  });
  assert.equal(waiting.Status, "running");
  assert.equal(waiting.StatusDescription, "Deployment is running but requires manual promotion");
  const live = (await allocs("roll")).filter((a) => a.DesiredStatus === "run");
  assert.deepEqual(live.map((a) => a.JobVersion).sort(), [0, 0, 1], "both old allocs stay beside the canary");
  const bad = await put(`/v1/deployment/promote/${waiting.ID}`, {
    DeploymentID: waiting.ID,
    Groups: ["nope"],
  });
  assert.equal(bad.status, 400);
  const promoted = await put(`/v1/deployment/promote/${waiting.ID}`, { DeploymentID: waiting.ID, All: true });
  assert.equal(promoted.status, 200, String(promoted.json));
  await deploymentDone("roll", 1);
  const end = (await allocs("roll")).filter((a) => a.DesiredStatus === "run");
  assert.deepEqual(
    end.map((a) => a.JobVersion),
    [1, 1],
  );
  const again = await put(`/v1/deployment/promote/${waiting.ID}`, { All: true });
  assert.equal(again.status, 409, "a finished deployment cannot be promoted");
  completed++;
});

/** The HCL jobspec an operator writes for test 3: a canary update on a single-writer volume. */
function cliJobHcl(version: string): string {
  const script = `echo "start $V" >> /data/log; trap 'exit 0' TERM INT; while true; do sleep 0.2; done`;
  return `job "cli" {
  update {
    canary           = 1
    auto_promote     = true
    min_healthy_time = "1s"
  }
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "clivol"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      env {
        V = "${version}"
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;
}

test("berth job run of a canary update on a single-node-writer volume completes, monitored", async () => {
  await cluster.cli(["volume", "create", cluster.writeFile("clivol.hcl", volumeHcl("clivol"))]);
  const run = async (file: string) => {
    const r = await runCli(["job", "run", file], { BERTH_ADDR: addr }, 120_000, { monitor: true });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    return r.stdout;
  };
  const first = await run(cluster.writeFile("cli1.hcl", cliJobHcl("1")));
  assert.match(first, /Deployment "[0-9a-f]{8}" successful/);
  const second = await run(cluster.writeFile("cli2.hcl", cliJobHcl("2")));
  assert.match(second, /Evaluation within deployment: "[0-9a-f]{8}"/);
  assert.match(second, /==> .*Deployment "[0-9a-f]{8}" successful/);
  assert.match(
    second,
    /Task Group\s+Promoted\s+Desired\s+Canaries\s+Placed\s+Healthy\s+Unhealthy\n\s+g\s+true\s+1\s+1\s+\d+\s+\d+\s+0/,
  );
  const running = (await allocs("cli")).filter((a) => a.ClientStatus === "running");
  assert.deepEqual(
    running.map((a) => a.JobVersion),
    [1],
  );
  const vol = await getJson<ClaimsView>(addr, "/v1/volume/csi/clivol?claims=true");
  assert.deepEqual(Object.keys(vol.WriteAllocs ?? {}), [running[0]!.ID], "only the canary's claim");
  completed++;
});

test("purged, the jobs leave no task, no claim and no mount behind", async () => {
  for (const job of ["web", "roll", "cli"]) {
    const res = await fetch(`${addr}/v1/job/${job}?purge=true`, { method: "DELETE" });
    assert.equal(res.status, 200);
  }
  await eventually("every alloc to be done and the volume free", async () => {
    const v = await getJson<ClaimsView>(addr, "/v1/volume/csi/shared?claims=true");
    const cli = await getJson<ClaimsView>(addr, "/v1/volume/csi/clivol?claims=true");
    const all = (await getJson<(AllocView & { JobID: string })[]>(addr, "/v1/allocations")).filter(
      (a) => a.JobID === "web" || a.JobID === "roll" || a.JobID === "cli",
    );
    const busy = all.some((a) => a.ClientStatus === "running" || a.ClientStatus === "pending");
    return !busy && claimCount(v) === 0 && claimCount(cli) === 0 ? true : undefined;
  });
  assert.deepEqual(await mountsUnder(cluster.dir), baseline, "only the plugins' own mounts are left");
  completed++;
});
