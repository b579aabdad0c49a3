/**
 * Placement by volume, with real processes on loopback: one `-server` agent and `-client` agents A
 * and B. csi-hostpath runs under raw_exec as a controller on A and node plugins on A (topology
 * zone=a) and B (zone=b), sharing one state dir (emulated shared storage).
 * - per_alloc: volumes data[0] and data[1]; a count=2 per_alloc job → alloc N claims data[N] and its
 *   task sees data[N]'s files.
 * - topology: a volume created with `topology_request { required { zone = "b" } }` gets that
 *   topology from CreateVolume → a job using it runs on B only; a job forced onto A stays unplaced
 *   (the server logs why).
 * Each test ends with no claim and no mount left; the last one stops the agents and checks that no
 * process outlived them.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { eventually, getJson, killProcessesUnder } from "../../helpers/agent_process.js";
import { HostpathCluster, claimCount, userJob as csiJob, volumeHcl } from "./hostpath_cluster.js";

const cluster = new HostpathCluster("berth-pl-");
let addr: string;
let dir: string;
/** Mounts the running plugins hold (their own directories), before any volume is used. */
let baseline: string[];
/** Tests that ran to their end; the logs are printed when one did not. */
let completed = 0;

const storage = () => cluster.storage;
const cli = (args: string[]) => cluster.cli(args);
const writeFile = (name: string, text: string) => cluster.writeFile(name, text);

interface VolumeView {
  ID: string;
  ExternalID: string;
  Topologies: { Segments: Record<string, string> }[] | null;
  RequestedTopologies: { Required: { Segments: Record<string, string> }[] | null } | null;
  ReadAllocs: Record<string, unknown> | null;
  WriteAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}
interface AllocView {
  ID: string;
  Name: string;
  NodeName: string;
  ClientStatus: string;
  DesiredStatus: string;
}

before(async () => {
  await cluster.start(["A", "B"]);
  ({ addr, dir } = cluster);
  await cluster.runPluginJob("plugin.hcl", "hostpath", [
    cluster.pluginGroup("controller", "A", "controller"),
    cluster.pluginGroup("node-a", "A", "node", "a"),
    cluster.pluginGroup("node-b", "B", "node", "b"),
  ]);
  await eventually("the controller and both node plugins to be healthy", async () => {
    const p = await getJson<{ ControllersHealthy: number; NodesHealthy: number }>(
      addr,
      "/v1/plugin/csi/hostpath",
    ).catch(() => undefined);
    return p && p.ControllersHealthy === 1 && p.NodesHealthy === 2 ? p : undefined;
  });
  baseline = await mountsUnder(dir);
});

after(() => cluster.teardown(completed >= 3));

/** A service job of `count` allocs running `script` with `source` mounted at /data. */
function userJob(
  id: string,
  opts: { source: string; count?: number; perAlloc?: boolean; node?: string; script: string },
): string {
  return csiJob(id, {
    source: opts.source,
    script: opts.script,
    node: opts.node,
    count: opts.count ?? 1,
    perAlloc: opts.perAlloc ?? false,
  });
}

async function createVolume(id: string, extra = ""): Promise<VolumeView> {
  const file = writeFile(`volume-${id.replace(/\W/g, "_")}.hcl`, volumeHcl(id, extra));
  await cli(["volume", "create", file]);
  return volume(id);
}

const volume = (id: string) =>
  getJson<VolumeView>(addr, `/v1/volume/csi/${encodeURIComponent(id)}?claims=true`);
const allocsOf = (job: string) => getJson<AllocView[]>(addr, `/v1/job/${job}/allocations`);

async function running(job: string, count: number): Promise<AllocView[]> {
  return eventually(`${count} running allocs of ${job}`, async () => {
    const allocs = (await allocsOf(job)).filter((a) => a.DesiredStatus === "run");
    if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error(`${job}: ${JSON.stringify(allocs)}`);
    return allocs.length === count && allocs.every((a) => a.ClientStatus === "running") ? allocs : undefined;
  });
}

/** Stops and purges `job`, then waits for `volumes` to have no claim and the mounts to be back to the plugins' own. */
async function stopAndRelease(job: string, volumes: string[]): Promise<void> {
  await cli(["job", "stop", "-purge", job]);
  for (const id of volumes) {
    await eventually(`${id}'s claims to be released`, async () =>
      claimCount(await volume(id)) === 0 ? true : undefined,
    );
  }
  await eventually("only the plugins' own mounts to remain", async () => {
    const now = await mountsUnder(dir);
    return now.length === baseline.length ? now : undefined;
  });
  assert.deepEqual(await mountsUnder(dir), baseline, "nothing of the job is mounted");
}

test("per_alloc: alloc N claims data[N] and its task sees that volume", { timeout: 60_000 }, async () => {
  const ext: string[] = [];
  for (const i of [0, 1]) {
    const v = await createVolume(`data[${i}]`);
    ext.push(v.ExternalID);
    fs.writeFileSync(path.join(storage(), "volumes", v.ExternalID, "name.txt"), `data[${i}]\n`);
  }
  await cli([
    "job",
    "run",
    writeFile(
      "per_alloc.hcl",
      userJob("pa", {
        source: "data",
        count: 2,
        perAlloc: true,
        script:
          'test "$(cat /data/name.txt)" = "data[$NOMAD_ALLOC_INDEX]" && echo "$NOMAD_ALLOC_ID" > /data/seen.txt && exec sleep 600',
      }),
    ),
  ]);
  const allocs = await running("pa", 2);
  for (const i of [0, 1]) {
    const alloc = allocs.find((a) => a.Name === `pa.g[${i}]`);
    assert.ok(alloc, `alloc index ${i} exists`);
    assert.deepEqual(
      Object.keys((await volume(`data[${i}]`)).WriteAllocs ?? {}),
      [alloc.ID],
      `data[${i}] is claimed by index ${i}`,
    );
    const seen = path.join(storage(), "volumes", ext[i]!, "seen.txt");
    await eventually(`index ${i}'s task to write into data[${i}]`, async () =>
      fs.existsSync(seen) ? true : undefined,
    );
    assert.equal(fs.readFileSync(seen, "utf8").trim(), alloc.ID, `the task of index ${i} saw data[${i}]`);
  }
  await stopAndRelease("pa", ["data[0]", "data[1]"]);
  await cli(["volume", "delete", "data[0]"]);
  await cli(["volume", "delete", "data[1]"]);
  completed++;
});

test(
  "topology: a volume required in zone b is created there and used on B only",
  { timeout: 60_000 },
  async () => {
    const vol = await createVolume(
      "zoned",
      `topology_request {\n  required {\n    topology {\n      segments {\n        zone = "b"\n      }\n    }\n  }\n}\n`,
    );
    assert.deepEqual(
      vol.RequestedTopologies?.Required,
      [{ Segments: { zone: "b" } }],
      "the request reached the server",
    );
    assert.deepEqual(
      vol.Topologies,
      [{ Segments: { zone: "b" } }],
      "CreateVolume answered the requested topology",
    );
    const meta = JSON.parse(
      fs.readFileSync(path.join(storage(), "meta", `${vol.ExternalID}.json`), "utf8"),
    ) as {
      accessibleTopology?: unknown;
    };
    assert.deepEqual(meta.accessibleTopology, [{ zone: "b" }], "csi-hostpath recorded it");

    await cli([
      "job",
      "run",
      writeFile(
        "zb.hcl",
        userJob("zb", { source: "zoned", script: "echo on-b > /data/where.txt && exec sleep 600" }),
      ),
    ]);
    const [onB] = await running("zb", 1);
    assert.equal(onB!.NodeName, "B", "the only node in zone b");
    await stopAndRelease("zb", ["zoned"]);

    // Forced onto A (zone a): never placed, and `job status` says why (its blocked evaluation).
    await cli([
      "job",
      "run",
      writeFile("za.hcl", userJob("za", { source: "zoned", node: "A", script: "exec sleep 600" })),
    ]);
    const status = await eventually("job status to show why za is unplaced", async () => {
      const out = await cli(["job", "status", "za"]);
      return out.includes("Placement Failure") ? out : undefined;
    });
    assert.match(status, /Constraint "did not meet topology requirement": 1 nodes excluded by filter/);
    assert.deepEqual(await allocsOf("za"), [], "no alloc on A");
    assert.equal(claimCount(await volume("zoned")), 0);
    await cli(["job", "stop", "-purge", "za"]);
    await cli(["volume", "delete", "zoned"]);
    completed++;
  },
);

test("the agents stop cleanly: nothing mounted, no process left", { timeout: 60_000 }, async () => {
  await cli(["job", "stop", "-purge", "hostpath"]);
  for (const c of cluster.clients.values()) assert.equal(await c.stop(30_000), 0, "client agent exit code");
  assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
  assert.deepEqual(await mountsUnder(dir), [], "nothing is mounted under the test dir");
  assert.deepEqual(killProcessesUnder(dir), [], "no process outlived the agents");
  completed++;
});
