/**
 * The alloc page's "Resource use" panel (ui/src/pages/alloc_stats.tsx) in a real headless Chromium
 * against a real `berth agent -dev` running one raw_exec task with `cpu = 150, memory = 64`: the
 * panel shows the task's CPU in MHz against 150 MHz and in percent, its memory against 64 MiB and
 * its RSS, from the node's stats route; it refreshes by itself while open; when the stats route
 * fails (the node does not answer: the browser's request is answered 500 by the test) it says
 * "unavailable" and recovers when the node answers again; after leaving the page it asks no more.
 * Ends asserting nothing is left running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { launchBrowser, waitText, type Browser } from "../helpers/browser.js";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../helpers/agent_process.js";

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let browser: Browser | undefined;
let failed = true;
const shotsDone: string[] = [];

const JOB = `job "statsui" {
  group "g" {
    task "sleeper" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 150
        memory = 64
      }
    }
  }
}
`;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-uistats-")));
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  browser = await launchBrowser();
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  try {
    await browser?.close();
    await runCli(["job", "stop", "-purge", "statsui"], { BERTH_ADDR: addr });
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

const cell = (col: string) =>
  `table[aria-label="Task resource use"] tr[data-key="sleeper"] td[data-col="${col}"]`;

test("the alloc page shows a task's CPU and memory against its reservation, live", async () => {
  assert.ok(browser);
  const page = browser.page;
  const file = path.join(dir, "statsui.hcl");
  fs.writeFileSync(file, JOB);
  const r = await runCli(["job", "run", "-detach", file], { BERTH_ADDR: addr });
  assert.equal(r.code, 0, r.stderr);
  const allocId = await eventually("the task to run", async () => {
    const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(addr, "/v1/job/statsui/allocations");
    return allocs.find((a) => a.ClientStatus === "running")?.ID;
  });
  let asked = 0;
  page.on("request", (req) => {
    if (req.url().endsWith(`/v1/client/allocation/${allocId}/stats`)) asked++;
  });

  await page.goto(`${addr}/ui/allocations/${allocId}`);
  await waitText(page, cell("CPU"), /^\d+ MHz \/ 150 MHz$/);
  await waitText(page, cell("CPU %"), /^\d+\.\d%$/);
  await waitText(page, cell("Memory"), /^[\d.]+ (B|KiB|MiB) \/ 64 MiB$/);
  await waitText(page, cell("RSS"), /^[\d.]+ (KiB|MiB)$/);
  assert.equal(await page.locator(`${cell("CPU")} meter`).count(), 1, "a meter against the reservation");
  shotsDone.push(await browser.screenshot("alloc-stats"));

  // Refreshed while open: the panel asks again by itself.
  const seen = asked;
  await eventually("the panel to ask again", async () => (asked > seen ? true : undefined), 15_000, 100);

  // The node does not answer: "unavailable" with the API's text; back when it answers again.
  const route = `**/v1/client/allocation/${allocId}/stats`;
  await page.route(route, (req) => req.fulfill({ status: 500, body: "no path to node" }));
  await waitText(page, '[role="alert"]', /^Resource use unavailable: 500: no path to node$/, 15_000);
  assert.equal(await page.locator('table[aria-label="Task resource use"]').count(), 0, "no stale numbers");
  await page.unroute(route);
  await waitText(page, cell("CPU"), /MHz \/ 150 MHz$/, 15_000);

  // Leaving the page (in the app, no reload) stops the polling: no ask for over a poll interval.
  await page
    .locator('section[aria-label="Overview"]')
    .getByRole("link", { name: "statsui", exact: true })
    .click();
  await page.waitForURL(/\/ui\/jobs\/statsui@default$/);
  assert.equal(await page.locator('section[aria-label="Resource use"]').count(), 0);
  const left = asked;
  await new Promise((res) => setTimeout(res, 4_000));
  assert.equal(asked, left, "no stats request after leaving the alloc page");
  assert.deepEqual(
    browser.errors.filter((e) => !/Failed to load resource/.test(e)),
    [],
  );
  process.stdout.write(`# alloc stats screenshot: ${shotsDone.join(" ")}\n`);
  failed = false;
});
