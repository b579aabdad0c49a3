/**
 * Issue 33 item 1 with real processes: a `berth agent -server -client`, the csi-hostpath plugin as
 * an exec job (topology berth.io/hostname=<node id>), real bind mounts, the CLI.
 *
 * A job whose group volume has a `create { … }` block, per_alloc and count = 2: `job plan` lists
 * the two volumes it would create; on placement the leader creates `data[0]` and `data[1]` where
 * the allocs run (the node's topology), marked with their job; the tasks write to them; `job stop
 * -purge` deletes them (on_purge = "delete") once their claims are freed. A `retain` job's volume
 * outlives its purged job as an ordinary volume. The file ends asserting nothing is left mounted.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after } from "node:test";
import { mountsUnder } from "../../helpers/mounts.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { AgentProcess, eventually, freePort, runCli } from "../../helpers/agent_process.js";
import {
  Cli,
  claimCount,
  cleanUp,
  keepLogIfFailed,
  Steps,
  type VolumeView,
} from "../restart/restart_fixtures.js";

const SLEEP = 86_411;
const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-jobvol-")));
const dataDir = path.join(dir, "data");
const logFile = path.join(dir, "agent.log");
const steps = new Steps();
let agent: AgentProcess | null = null;
let cli: Cli;
let nodeId = "";

type Volume = VolumeView & {
  ID: string;
  Topologies: { Segments: Record<string, string> }[];
  CreatedBy?: { JobID: string; TaskGroup: string; Volume: string; OnPurge: string };
};
type AllocStub = { ID: string; ClientStatus: string; TaskStates?: unknown };

after(async () => {
  try {
    if (agent) await agent.stop(60_000);
  } finally {
    keepLogIfFailed(steps.failed, logFile, "berth-job-volumes.log");
    const left = await cleanUp([dir], SLEEP);
    assert.deepEqual(left.mounts, [], "nothing was left mounted after the agent stopped");
  }
});

function appJob(name: string, count: number, onPurge: string): string {
  const file = path.join(dir, `${name}.hcl`);
  fs.writeFileSync(
    file,
    `job "${name}" {
  group "db" {
    count = ${count}
    volume "data" {
      type            = "csi"
      source          = "${name}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
      per_alloc       = true
      create {
        plugin_id    = "hostpath"
        capacity_min = "1MiB"
        on_purge     = "${onPurge}"
      }
    }
    task "db" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo \${NOMAD_ALLOC_INDEX} > /data/index; exec sleep ${SLEEP}"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`,
  );
  return file;
}

async function running(job: string, count: number): Promise<AllocStub[]> {
  return eventually(
    `job ${job}'s ${count} allocs to run`,
    async () => {
      const allocs = (await cli.get<AllocStub[]>(`/v1/job/${job}/allocations`)) ?? [];
      const failed = allocs.find((a) => a.ClientStatus === "failed");
      if (failed) throw new Error(`an alloc of ${job} failed: ${JSON.stringify(failed.TaskStates)}`);
      const live = allocs.filter((a) => a.ClientStatus === "running");
      return live.length === count ? live : undefined;
    },
    120_000,
  );
}

const volume = (id: string) => cli.get<Volume>(`/v1/volume/csi/${encodeURIComponent(id)}?claims=true`);

steps.step("an agent and the hostpath plugin", async () => {
  const port = await freePort();
  cli = new Cli(`http://127.0.0.1:${port}`);
  agent = new AgentProcess(
    ["-server", "-client", "-data-dir", dataDir, "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  nodeId = await eventually("the node to be ready", async () => {
    const nodes = await cli.get<{ ID: string; Status: string }[]>("/v1/nodes");
    return nodes?.find((n) => n.Status === "ready")?.ID;
  });
  const plugin = path.join(dir, "plugin.hcl");
  fs.writeFileSync(
    plugin,
    hostpathPluginJob({ args: ["--node-id=${node.unique.id}", "--state-dir=/alloc/hostpath"] }),
  );
  await cli.run(["job", "run", plugin]);
  await eventually("plugin hostpath to be healthy", async () => {
    const p = await cli.get<{ NodesHealthy: number; ControllersHealthy: number }>("/v1/plugin/csi/hostpath");
    return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
  });
});

steps.step("job plan lists the volumes the job would create", async () => {
  const plan = await runCli(["job", "plan", appJob("db", 2, "delete")], cli.env);
  assert.equal(plan.code, 1, `allocations would be placed: ${plan.stderr}`);
  assert.match(
    plan.stdout,
    /- Volume "db\[0\]" \(plugin "hostpath", group "db", on purge: delete\) will be created/,
  );
  assert.match(plan.stdout, /- Volume "db\[1\]" \(plugin "hostpath"/);
  assert.equal(await volume("db[0]"), undefined, "a plan creates nothing");
});

steps.step("placement creates one volume per alloc where it runs, and the tasks write to them", async () => {
  await cli.run(["job", "run", "-detach", appJob("db", 2, "delete")]);
  await cli.run(["job", "run", "-detach", appJob("keep", 1, "retain")]);
  await running("db", 2);
  await running("keep", 1);
  for (const [id, job, onPurge] of [
    ["db[0]", "db", "delete"],
    ["db[1]", "db", "delete"],
    ["keep[0]", "keep", "retain"],
  ] as const) {
    const v = await volume(id);
    assert.ok(v, `volume ${id} was created`);
    assert.deepEqual(v.CreatedBy, { JobID: job, TaskGroup: "db", Volume: "data", OnPurge: onPurge });
    assert.deepEqual(
      v.Topologies,
      [{ Segments: { "berth.io/hostname": nodeId } }],
      "created where the alloc runs",
    );
    assert.equal(claimCount(v), 2, `${id} has one write claim (WriteAllocs + WriteClaims)`);
  }
  const written = await eventually("the tasks to write their index", async () => {
    const targets = (await mountsUnder(dataDir)).filter((p) => p.includes(`${path.sep}per-alloc${path.sep}`));
    const seen = targets.map((t) => {
      try {
        return fs.readFileSync(path.join(t, "index"), "utf8").trim();
      } catch {
        return "";
      }
    });
    return seen.filter((s) => s !== "").length === 3 ? seen.sort() : undefined;
  });
  assert.deepEqual(written, ["0", "0", "1"]);
});

steps.step("a purge deletes on_purge = delete volumes once freed, and keeps retain ones", async () => {
  await cli.run(["job", "stop", "-purge", "-detach", "keep"]);
  await eventually(
    "keep[0]'s claim to be freed",
    async () => {
      const v = await volume("keep[0]");
      return v && claimCount(v) === 0 ? v : undefined;
    },
    60_000,
  );
  await cli.run(["job", "stop", "-purge", "-detach", "db"]);
  await eventually(
    "db's volumes to be deleted",
    async () => {
      const vols = (await cli.get<{ ID: string }[]>("/v1/volumes?type=csi")) ?? [];
      return vols.some((v) => v.ID.startsWith("db[")) ? undefined : vols;
    },
    60_000,
  );
  // The loop that deleted db's volumes had passed over keep[0] (its job gone, unclaimed) before.
  const kept = await volume("keep[0]");
  assert.ok(kept, "a retain volume outlives its purged job");
  await cli.run(["volume", "delete", "keep[0]"]);
});

steps.step("the plugin job stops and leaves no mount behind", async () => {
  await cli.run(["job", "stop", "-purge", "plugin"]);
  await eventually("the plugin's directory to be unmounted", async () =>
    (await mountsUnder(dataDir)).length === 0 ? true : undefined,
  );
});
