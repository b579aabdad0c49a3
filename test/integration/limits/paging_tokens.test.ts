/**
 * A bad paging token is answered at once (issue 10, "Retry storms"): real `berth agent` processes
 * on loopback (a `-server` and one `-client` node A) with the real csi-hostpath controller under
 * raw_exec, through real HTTP. csi-hostpath answers ABORTED for a starting_token it did not issue,
 * as the CSI spec requires for ListVolumes/ListSnapshots; berth used to retry that as "operation
 * pending" for its whole 30 s retry deadline and then answer 409. Now: a 400 with
 * ERR_VALIDATION naming `next_token`, after exactly one plugin call (the call log counts them — no
 * timing is asserted). A token the plugin did issue still pages.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, test } from "node:test";
import type { CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { eventually, getJson, killProcessesUnder } from "../../helpers/agent_process.js";
import { HostpathCluster, volumeHcl } from "../lifecycle/hostpath_cluster.js";

const cluster = new HostpathCluster("berth-paging-", { callLog: true });
let completed = 0;

before(async () => {
  await cluster.start(["A"]);
  await cluster.runPluginJob("plugin.hcl", "hostpath", [
    cluster.pluginGroup("controller", "A", "controller"),
  ]);
  await eventually("the hostpath controller to be healthy", async () => {
    const p = await getJson<{ ControllersHealthy: number }>(cluster.addr, "/v1/plugin/csi/hostpath").catch(
      () => undefined,
    );
    return p && p.ControllersHealthy === 1 ? p : undefined;
  });
  for (const id of ["pa", "pb"]) {
    await cluster.cli(["volume", "create", cluster.writeFile(`${id}.hcl`, volumeHcl(id))]);
  }
});

after(() => cluster.teardown(completed >= 3));

function calls(method: string): number {
  if (!fs.existsSync(cluster.callLog)) return 0;
  return fs
    .readFileSync(cluster.callLog, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as CallRecord)
    .filter((c) => c.method === method).length;
}

async function get(route: string): Promise<{ status: number; code: string | null; text: string }> {
  const res = await fetch(cluster.addr + route);
  return { status: res.status, code: res.headers.get("x-berth-error-code"), text: await res.text() };
}

for (const [route, method, key] of [
  ["/v1/volumes/external", "ListVolumes", "Volumes"],
  ["/v1/volumes/snapshot", "ListSnapshots", "Snapshots"],
] as const) {
  test(`GET ${route} with a next_token the plugin never issued is a 400 naming next_token, not a retry storm`, async () => {
    const before = calls(method);
    const bad = await get(`${route}?plugin_id=hostpath&next_token=not-a-token`);
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.code, "ERR_VALIDATION");
    assert.match(bad.text, /^next_token: /);
    assert.match(bad.text, /not-a-token/);
    // One plugin call: the ABORTED answer was not retried on this or any other candidate.
    assert.equal(calls(method) - before, 1);

    // Paging itself still works: per_page=1 gives a token the plugin accepts.
    const first = await get(`${route}?plugin_id=hostpath&per_page=1`);
    assert.equal(first.status, 200, first.text);
    if (key === "Volumes") {
      const page = JSON.parse(first.text) as { Volumes: unknown[]; NextToken: string };
      assert.equal(page.Volumes.length, 1);
      assert.notEqual(page.NextToken, "");
      const second = await get(`${route}?plugin_id=hostpath&per_page=1&next_token=${page.NextToken}`);
      assert.equal(second.status, 200, second.text);
      assert.equal((JSON.parse(second.text) as { Volumes: unknown[] }).Volumes.length, 1);
    }
    completed++;
  });
}

test(
  "the agents stop cleanly: volumes deleted, nothing mounted, no process left",
  { timeout: 60_000 },
  async () => {
    for (const id of ["pa", "pb"]) await cluster.cli(["volume", "delete", id]);
    await cluster.cli(["job", "stop", "-purge", "hostpath"]);
    for (const c of cluster.clients.values()) assert.equal(await c.stop(30_000), 0, "client agent exit code");
    assert.equal(await cluster.server.stop(30_000), 0, "server agent exit code");
    assert.deepEqual(await mountsUnder(cluster.dir), [], "nothing mounted under the test dir");
    assert.deepEqual(killProcessesUnder(cluster.dir), [], "no process outlived the agents");
    completed++;
  },
);
