/**
 * The web UI in a real headless Chromium (Debian's, driven by playwright-core) against a real
 * `berth agent -dev` running the README's quick start (ui_fixture.ts), one agent for every page:
 * the plugin page shows hostpath 1/1 healthy; the volumes page shows `demo` with its writer's claim
 * while the writer runs; the alloc page shows the task's log line; the job's "Stop job", a node's
 * eligibility and a volume's "Detach" act through the API with a confirmation, showing the API's
 * error text when refused; the claim's release step in flight shows while the node cannot unmount,
 * and after Detach the volume has no claims. Pages update by themselves (blocking queries): the
 * test never reloads a page to see a change. Each page's screenshot is written under the OS temp
 * dir (printed). The agent then stops cleanly with nothing left mounted or running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import { after, before, test } from "node:test";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import { launchBrowser, waitText, type Browser } from "../helpers/browser.js";
import { UiCluster, WRITER_LINE } from "./ui_fixture.js";

let cluster: UiCluster;
let browser: Browser | undefined;
const shots: string[] = [];
let allPassed = false;

before(async () => {
  cluster = new UiCluster();
  // The browser starts while the quick start runs; each is kept for after() whatever the other did.
  const [started, launched] = await Promise.allSettled([cluster.start(), launchBrowser()]);
  if (launched.status === "fulfilled") browser = launched.value;
  if (started.status === "rejected") throw started.reason;
  if (launched.status === "rejected") throw launched.reason;
});

after(async () => {
  await browser?.close();
  const leftovers = await cluster.cleanup();
  process.stdout.write(`# web UI screenshots: ${shots.join(" ")}\n`);
  if (!allPassed || leftovers.length > 0) process.stderr.write(`agent log:\n${cluster.logTail()}\n`);
  fs.rmSync(cluster.logFile, { force: true });
});

function b(): Browser {
  assert.ok(browser, "the browser started");
  return browser;
}

async function open(path: string): Promise<void> {
  await b().page.goto(`${cluster.addr}/ui${path}`);
}

async function shot(name: string): Promise<void> {
  shots.push(await b().screenshot(name));
}

/** The cell of column `col` in the row `key` of the table labelled `table`. */
function cell(table: string, key: string, col: string): string {
  return `table[aria-label="${table}"] tr[data-key="${key}"] td[data-col="${col}"]`;
}

/** Clicks `label` in the section `section`, then the confirmation's `confirm`. */
async function confirmAction(scope: string, label: string, confirm: string): Promise<void> {
  const page = b().page;
  await page.locator(scope).getByRole("button", { name: label, exact: true }).first().click();
  await page.getByRole("dialog").getByRole("button", { name: confirm, exact: true }).click();
}

test("the agent serves the UI: / redirects to it, deep links open their page, a CSP of self only", async () => {
  const root = await fetch(`${cluster.addr}/?region=global`, { redirect: "manual" });
  assert.equal(root.status, 307);
  assert.equal(root.headers.get("location"), "/ui/?region=global");
  const deep = await fetch(`${cluster.addr}/ui/storage/volumes/csi/demo@default`);
  assert.equal(deep.status, 200);
  assert.match(deep.headers.get("content-type") ?? "", /^text\/html/);
  assert.match(deep.headers.get("content-security-policy") ?? "", /default-src 'none'.*script-src 'self'/);

  await open("/");
  await waitText(
    b().page,
    'table[aria-label="Jobs"] tr[data-key="default/writer"] td[data-col="Name"]',
    "writer",
  );
  assert.match(b().page.url(), /\/ui\/jobs$/, "the index leads to the jobs page");
  await shot("jobs");
});

test("the plugin pages show hostpath 1/1 healthy and its capabilities", async () => {
  await open("/storage/plugins");
  const page = b().page;
  assert.equal(await waitText(page, cell("CSI plugins", "hostpath", "Nodes healthy"), "1/1"), "1/1");
  assert.equal(await waitText(page, cell("CSI plugins", "hostpath", "Controllers healthy"), "1/1"), "1/1");
  await shot("plugins");
  await page.getByRole("link", { name: "hostpath", exact: true }).click();
  const caps = await waitText(
    page,
    cell("Plugin instances", `controller/${cluster.nodeId}`, "Capabilities"),
    /create\/delete volume/,
  );
  assert.match(caps, /create\/delete snapshot/);
  await waitText(page, cell("Plugin instances", `node/${cluster.nodeId}`, "Healthy"), "healthy");
  await shot("plugin");
});

test("the volumes page shows demo with the writer's claim while the writer runs", async () => {
  await open("/storage/volumes");
  const page = b().page;
  assert.equal(await waitText(page, cell("CSI volumes", "default/demo", "Claims"), "1 writer"), "1 writer");
  await shot("volumes-claimed");
  await page.getByRole("link", { name: "demo", exact: true }).click();
  assert.match(page.url(), /\/ui\/storage\/volumes\/csi\/demo@default$/);
  const row = cluster.writerAlloc;
  await waitText(page, cell("Claims", row, "State"), "taken");
  assert.equal(await waitText(page, cell("Claims", row, "Mode"), "write"), "write");
  await shot("volume-claimed");

  // A snapshot through the volume's controller plugin, named in the confirmation.
  await page.getByRole("button", { name: "Snapshot", exact: true }).click();
  await page.getByRole("dialog").locator("input").fill("ui-snap");
  await page.getByRole("dialog").getByRole("button", { name: "Yes, snapshot", exact: true }).click();
  await waitText(page, '[role="status"]', /^Snapshot ui-snap created/);
});

test("a volume's usage and health show when the server answers them (?usage=true)", async () => {
  // The node reports `Usage` once a minute and the controller's condition comes as often, so the
  // test puts known figures into the real answer on its way to the page (the rendering is the
  // subject, not the polling, which the usage and controller-condition tests cover).
  const page = b().page;
  const usage = {
    NodeID: cluster.nodeId,
    BytesUsed: 5 * 1024 * 1024,
    BytesAvailable: 5 * 1024 * 1024,
    BytesTotal: 10 * 1024 * 1024,
    InodesUsed: 3,
    InodesAvailable: 997,
    InodesTotal: 1000,
    Abnormal: true,
    Message: "volume directory is missing",
    UpdateTime: Date.now() * 1e6,
  };
  await page.route(/\/v1\/volume\/csi\/demo\?/, async (route) => {
    assert.match(route.request().url(), /[?&]usage=true(&|$)/, "the page asks for usage");
    const res = await route.fetch();
    const controller = { Abnormal: true, Message: "volume directory is gone", UpdateTime: Date.now() * 1e6 };
    const body = { ...((await res.json()) as object), Usage: usage, ControllerCondition: controller };
    await route.fulfill({ response: res, json: body });
  });
  try {
    await open("/storage/volumes/csi/demo@default");
    const item = (k: string) => `[aria-label="Usage"] .kv-item:has(dt:text-is('${k}')) dd`;
    assert.equal(await waitText(page, item("Used"), "5.0 MiB (50%)"), "5.0 MiB (50%)");
    assert.equal(await waitText(page, item("Total"), "10 MiB"), "10 MiB");
    assert.equal(await waitText(page, item("Condition"), "abnormal"), "abnormal");
    assert.equal(
      await waitText(page, item("Message"), "volume directory is missing"),
      "volume directory is missing",
    );
    const ctrl = (k: string) => `[aria-label="Controller condition"] .kv-item:has(dt:text-is('${k}')) dd`;
    assert.equal(await waitText(page, ctrl("Condition"), "abnormal"), "abnormal");
    assert.equal(
      await waitText(page, ctrl("Message"), "volume directory is gone"),
      "volume directory is gone",
    );
    await shot("volume-usage");
  } finally {
    await page.unrouteAll({ behavior: "ignoreErrors" });
  }
});

test("the alloc page shows the task's events and its log", async () => {
  await open(`/allocations/${cluster.writerAlloc}`);
  const page = b().page;
  await waitText(page, 'pre[aria-label="writer stdout"]', new RegExp(WRITER_LINE));
  await waitText(page, 'table[aria-label="Task writer events"]', /Started/);
  await shot("alloc");
});

test("clients and evaluations pages; eligibility toggles with a confirmation, live", async () => {
  await open("/clients");
  const page = b().page;
  await waitText(page, cell("Clients", cluster.nodeId, "Status"), "ready");
  await shot("clients");
  await open(`/clients/${cluster.nodeId}`);
  await waitText(page, cell("CSI plugins", "node/hostpath", "Healthy"), "healthy");
  await confirmAction('[aria-label="Overview"]', "Mark ineligible", "Yes, mark ineligible");
  await waitText(page, '[role="status"]', /is ineligible/);
  await waitText(page, ".kv-item:has(dt:text-is('Eligibility')) dd", "ineligible");
  await shot("client-ineligible");
  await confirmAction('[aria-label="Overview"]', "Mark eligible", "Yes, mark eligible");
  await waitText(page, ".kv-item:has(dt:text-is('Eligibility')) dd", "eligible");

  await open("/evaluations");
  await waitText(page, 'table[aria-label="Evaluations"] td[data-col="Job"]', /writer|plugin/);
  await shot("evaluations");
});

test("the token is kept in the tab and sent as X-Nomad-Token", async () => {
  const page = b().page;
  await open("/settings/tokens");
  await page.locator('input[name="secret"]').fill("4a0ce2a6-0000-4000-8000-00000000beef");
  await page.getByRole("button", { name: "Set token" }).click();
  await waitText(page, '[role="alert"]', /ACLs are disabled/);
  const sent = page.waitForRequest((r) => r.url().includes("/v1/jobs"));
  await open("/jobs");
  assert.equal((await sent).headers()["x-nomad-token"], "4a0ce2a6-0000-4000-8000-00000000beef");
  await open("/settings/tokens");
  await page.getByRole("button", { name: "Clear" }).click();
  const anon = page.waitForRequest((r) => r.url().includes("/v1/jobs"));
  await open("/jobs");
  assert.equal((await anon).headers()["x-nomad-token"], undefined);
});

test("Detach is refused while the writer runs, shows the release stuck after Stop job, then detaches", async () => {
  const page = b().page;
  const volume = "/storage/volumes/csi/demo@default";
  await open(volume);
  const row = cluster.writerAlloc;
  await waitText(page, cell("Claims", row, "State"), "taken");
  await confirmAction(`tr[data-key="${row}"]`, "Detach", "Yes, detach");
  await waitText(page, '[role="alert"]', /^409: .*running allocation.*stop them first/);

  // Stop the writer from its job page while a process of the test pins its mount.
  await cluster.squat();
  await open("/jobs/writer@default");
  await confirmAction('[aria-label="Overview"]', "Stop job", "Yes, stop job");
  await waitText(page, '[role="status"]', /Job writer stopped/);
  await cluster.writerWith(/complete|failed/);

  await open(volume);
  // The node cannot unmount: the claim stays, with the step it is stuck in, its attempts and error.
  // Its retries back off (1s, 2s, 4s, 8s, … ±20%): from the fourth attempt on, the test has
  // several seconds to end the squatter and click Detach before the node's own next try, so it is
  // the click that releases the claim.
  const release = await waitText(
    page,
    cell("Claims", row, "Release"),
    /node-unpublish · [4-9] attempts/,
    60_000,
  );
  assert.match(release, /busy/i, "the unmount's error is shown");
  await shot("volume-release-stuck");

  await cluster.unsquat();
  const detached = page.waitForResponse((r) => r.url().includes("/v1/volume/csi/demo/detach"));
  await confirmAction(`tr[data-key="${row}"]`, "Detach", "Yes, detach");
  const res = await detached;
  assert.equal(res.status(), 200, await res.text());
  assert.match(res.url(), new RegExp(`node=${cluster.nodeId}`));
  await waitText(page, '[role="status"]', /Volume demo detached from node/);
  await waitText(page, '[aria-label="Claims"] .empty', "No claims.");
  assert.equal(await cluster.claimCount(), 0);
  await shot("volume-detached");

  await open("/storage/volumes");
  assert.equal(await waitText(page, cell("CSI volumes", "default/demo", "Claims"), "none"), "none");
  await shot("volumes-released");
  // Chrome logs each 4xx answer (the 409 above, the token check's 400) as "Failed to load
  // resource"; anything else (a CSP violation, an exception) is a fault of the UI.
  const faults = b().errors.filter((e) => !/Failed to load resource/.test(e));
  assert.deepEqual(faults, [], "no CSP violation or exception on any page");
});

test("a node is drained from its page, with a confirmation", async () => {
  const page = b().page;
  await open(`/clients/${cluster.nodeId}`);
  const drain = ".kv-item:has(dt:text-is('Drain')) dd";
  await waitText(page, drain, /^(no|last: .*)$/);
  await confirmAction('[aria-label="Overview"]', "Drain", "Yes, drain");
  await waitText(page, '[role="status"]', /is draining/);
  // A one-node drain may finish at once (its allocs have nowhere to go but stopped): either way
  // the node is draining or drained, and no longer takes work.
  await waitText(page, drain, /^(draining since|last: (draining|complete))/);
  await waitText(page, ".kv-item:has(dt:text-is('Eligibility')) dd", "ineligible");
  await shot("client-drained");
});

test("the agent stops cleanly: nothing mounted or running is left", async () => {
  // A failure above may have left the squatter pinning the writer's mount: not this test's subject.
  await cluster.unsquat();
  await browser?.close();
  browser = undefined;
  const code = await cluster.agent?.stop(90_000);
  assert.equal(code, 0, "agent exit code");
  assert.deepEqual(await mountsUnder(cluster.dataDir), [], "nothing mounted under the data dir");
  assert.deepEqual(cluster.processesInDataDir(), [], "no task or plugin process outlived the agent");
  allPassed = true;
});
