/**
 * Volume creates that fail or are cut short, with real parts: a `-server` agent and a `-client`
 * agent on loopback, csi-hostpath as a monolith plugin under raw_exec with --faults, real SQLite
 * state (issue 10, "Partial writes" and "Storage orphaned by a crash during create").
 * - A create of two volumes whose second CreateVolume fails records nothing and leaves no storage:
 *   the first volume's storage is deleted again through the plugin.
 * - The crash window: the plugin has made the storage but its answer is held back (fault
 *   `answerAfterMs`) when the server is killed with SIGKILL. After a restart the two interrupted
 *   creates are reported — in the server log, by GET /v1/volumes/orphans with the plugin's
 *   unrecorded storage, and by `berth volume orphans` —; one is adopted (recorded under its
 *   intended ID, on the storage the plugin made) and one deleted (its storage gone from the plugin).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { after, before, test } from "node:test";
import { volumeIdFor } from "../../../src/csi/hostpath/volumes.js";
import { hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, killProcessesUnder } from "../../helpers/agent_process.js";
import { HostpathCluster } from "../lifecycle/hostpath_cluster.js";

const cluster = new HostpathCluster("berth-orphans-");
let passed = false;

const faultsFile = () => path.join(cluster.dir, "faults.json");
function setFaults(faults: object): void {
  fs.writeFileSync(faultsFile() + ".tmp", JSON.stringify(faults));
  fs.renameSync(faultsFile() + ".tmp", faultsFile());
}
/** The hostpath volume IDs the plugin holds (its metadata files). */
function storageIds(): string[] {
  const meta = path.join(cluster.storage, "meta");
  if (!fs.existsSync(meta)) return [];
  return fs
    .readdirSync(meta)
    .filter((f) => f.endsWith(".json"))
    .map((f) => f.slice(0, -".json".length))
    .sort();
}

const spec = (id: string) => ({
  ID: id,
  Name: id,
  PluginID: "hostpath",
  RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
});

async function put(route: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(cluster.addr + route, { method: "PUT", body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

async function volumeIds(): Promise<string[]> {
  return (await cluster.getJson<{ ID: string }[]>("/v1/volumes?type=csi")).map((v) => v.ID).sort();
}

interface Orphan {
  ID: string;
  Name: string;
  PluginID: string;
  UnrecordedStorage: string[] | null;
  ListError: string;
}

/** Waits for the plugin's controller to be healthy and reachable (its listing answers). */
async function controllerUp(): Promise<void> {
  await eventually(
    "the hostpath controller to be healthy",
    async () => {
      const p = await cluster.getJson<{ ControllersHealthy: number }>("/v1/plugin/csi/hostpath");
      return p.ControllersHealthy > 0 ? true : undefined;
    },
    60_000,
  );
}

before(async () => {
  await cluster.start(["A"]);
  fs.mkdirSync(cluster.storage, { recursive: true });
  setFaults({});
  const group = hostpathPluginGroup("plugin", {
    driver: "raw_exec",
    type: "monolith",
    node: "A",
    args: [`--state-dir=${cluster.storage}`, `--faults=${faultsFile()}`, "--node-id=${node.unique.name}"],
  });
  await cluster.runPluginJob("plugin.hcl", "plugin", [group]);
  await controllerUp();
});

after(() => cluster.teardown(passed));

test("a create whose second CreateVolume fails records nothing and leaves no storage", async () => {
  // INVALID_ARGUMENT: not retried, and the plugin says it made nothing.
  setFaults({ CreateVolume: { code: "INVALID_ARGUMENT", skip: 1 } });
  const res = await put("/v1/volume/csi/first/create", { Volumes: [spec("first"), spec("second")] });
  assert.equal(res.status, 400, res.text);
  assert.deepEqual(await volumeIds(), [], "no volume recorded");
  assert.deepEqual(storageIds(), [], "the first volume's storage was deleted again");
  assert.match(res.text, /^Volumes\[1\] \("second"\): .*INVALID_ARGUMENT/);
  assert.deepEqual(await cluster.getJson<Orphan[]>("/v1/volumes/orphans?type=csi"), [], "nothing orphaned");
});

test("storage made by a create the server crashed in is reported after a restart, then adopted or deleted", async () => {
  setFaults({ CreateVolume: { answerAfterMs: 600_000, times: 2 } });
  // Two creates in flight; the plugin makes each volume and holds its answer back.
  const inFlight = ["kept", "dropped"].map((id) =>
    put(`/v1/volume/csi/${id}/create`, { Volumes: [spec(id)] }).catch((err: unknown) => err),
  );
  const kept = volumeIdFor("kept");
  const dropped = volumeIdFor("dropped");
  await eventually(
    "the plugin to hold both volumes",
    async () => (storageIds().length === 2 ? true : undefined),
    60_000,
  );
  assert.deepEqual(storageIds(), [kept, dropped].sort());

  const port = new URL(cluster.addr).port;
  await crashAgent(cluster.server);
  await Promise.all(inFlight);
  setFaults({});
  cluster.server = new AgentProcess(
    ["-server", "-data-dir", path.join(cluster.dir, "server"), "-http-addr", `127.0.0.1:${port}`],
    path.join(cluster.dir, "server.log"),
  );
  await controllerUp();
  assert.deepEqual(await volumeIds(), [], "berth recorded neither volume");

  // Reported by the API, with the storage the plugin lists that no berth volume records.
  const orphans = await eventually(
    "both orphans with the plugin's listing",
    async () => {
      const list = await cluster.getJson<Orphan[]>("/v1/volumes/orphans?type=csi");
      return list.length === 2 && list.every((o) => o.UnrecordedStorage !== null) ? list : undefined;
    },
    60_000,
  );
  assert.deepEqual(
    orphans.map((o) => [o.ID, o.Name, o.PluginID, o.UnrecordedStorage]),
    [
      ["dropped", "dropped", "hostpath", [kept, dropped].sort()],
      ["kept", "kept", "hostpath", [kept, dropped].sort()],
    ],
  );
  // By the CLI, and in the server log (the reconciler's pass at start and its periodic passes).
  const listed = await cluster.cli(["volume", "orphans"]);
  assert.match(listed, /^ID\s+Namespace\s+Name\s+Plugin ID/);
  assert.match(listed, /\nkept\s+default\s+kept\s+hostpath\s/);
  assert.match(listed, /\ndropped\s+default\s+dropped\s+hostpath\s/);
  await eventually(
    "the orphans in the server log",
    async () => {
      const log = fs.readFileSync(path.join(cluster.dir, "server.log"), "utf8");
      const lines = log.split("\n").filter((l) => l.includes("orphaned volume storage"));
      return ["kept", "dropped"].every((id) => lines.some((l) => l.includes(` volume=${id} `)))
        ? true
        : undefined;
    },
    30_000,
  );

  // Adopt one: recorded under its intended ID, on the storage the interrupted create made.
  const adopted = await cluster.cli(["volume", "orphans", "-adopt", "kept"]);
  assert.match(adopted, new RegExp(`Adopted orphaned storage "${kept}" as volume "kept"`));
  const vol = await cluster.getJson<{ ID: string; ExternalID: string }>("/v1/volume/csi/kept?claims=true");
  assert.equal(vol.ExternalID, kept);
  // Delete the other: its storage is gone from the plugin; the adopted one stays.
  await cluster.cli(["volume", "orphans", "-delete", "dropped"]);
  assert.deepEqual(storageIds(), [kept]);
  assert.deepEqual(await volumeIds(), ["kept"]);
  assert.equal((await cluster.cli(["volume", "orphans"])).trim(), "No orphaned volumes");

  // Neither is an orphan any more: adopting or deleting again is a 404.
  const again = await put("/v1/volume/csi/dropped/adopt", {});
  assert.equal(again.status, 404, again.text);

  // The adopted volume is an ordinary one: deleted through the plugin like any other.
  await cluster.cli(["volume", "delete", "kept"]);
  assert.deepEqual(storageIds(), []);
  await cluster.cli(["job", "stop", "-purge", "plugin"]);
  for (const c of cluster.clients.values()) assert.equal(await c.stop(60_000), 0, "client agent exit code");
  assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
  assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing is mounted under the test dir");
  assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
  passed = true;
});
