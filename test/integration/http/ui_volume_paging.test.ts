/**
 * The UI's volumes page watches one page, not the whole list (issue 30): a real headless Chromium
 * against an in-process server whose store holds 120 volumes. Every volume list request the page
 * makes carries `per_page` (its blocking re-asks too); Next and Previous walk the pages with the
 * server's `next_token`; a filter is sent as Nomad's `filter` and applied by the server.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { launchBrowser, type Browser } from "../../helpers/browser.js";
import { makeVolume } from "../../builders/volume.js";
import { startScaleServer, type ScaleServer } from "../scale/scale_fixtures.js";

const COUNT = 120;
const pad = (i: number) => String(i).padStart(3, "0");

let srv: ScaleServer;
let browser: Browser;
const listRequests: URL[] = [];
/** Answers of 400 and above the page got (none may be the volume list's). */
const failed: string[] = [];

before(async () => {
  srv = await startScaleServer({
    seed: async (dir) => {
      const store = new SqliteStateStore(dir);
      await store.txn((tx) => {
        for (let i = 0; i < COUNT; i++) tx.putVolume(makeVolume(`vol-${pad(i)}`));
      });
      store.close();
    },
  });
  browser = await launchBrowser();
  browser.page.on("request", (r) => {
    const u = new URL(r.url());
    if (u.pathname === "/v1/volumes") listRequests.push(u);
  });
  browser.page.on("response", (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${new URL(r.url()).pathname}`);
  });
});

after(async () => {
  await browser?.close();
  await srv?.stop();
});

const rows = () => browser.page.locator('table[aria-label="CSI volumes"] tbody tr');

/** The row keys shown, once the first one is `first` (the page updates itself). */
async function shown(first: string): Promise<string[]> {
  await browser.page
    .locator(`table[aria-label="CSI volumes"] tbody tr:first-child[data-key="${first}"]`)
    .waitFor({
      timeout: 15_000,
    });
  return rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-key") ?? ""));
}

test("the volumes page asks for one page at a time and walks them with next_token", async () => {
  await browser.page.goto(`${srv.base}/ui/storage/volumes`);
  const first = await shown("default/vol-000");
  assert.equal(first.length, 50);
  assert.equal(first.at(-1), "default/vol-049");
  const next = browser.page.getByRole("button", { name: "Next", exact: true });
  const prev = browser.page.getByRole("button", { name: "Previous", exact: true });
  assert.equal(await prev.isDisabled(), true);
  await next.click();
  const second = await shown("default/vol-050");
  assert.equal(second.length, 50);
  await next.click();
  const third = await shown("default/vol-100");
  assert.equal(third.length, COUNT - 100);
  await browser.page.locator('button:has-text("Next")[disabled]').waitFor({ timeout: 15_000 });
  await prev.click();
  assert.equal((await shown("default/vol-050")).length, 50);
  // The page keeps watching (a blocking re-ask), still one page.
  await browser.page.waitForTimeout(200);
  assert.ok(listRequests.length >= 4);
  for (const u of listRequests) assert.equal(u.searchParams.get("per_page"), "50", u.search);
  assert.ok(
    listRequests.some((u) => u.searchParams.get("next_token") === "default.vol-050"),
    "the second page was asked from the server's token",
  );
});

test("a filter is applied by the server and starts from the first page", async () => {
  const input = browser.page.getByRole("searchbox", { name: "CSI volumes filter" });
  await input.fill('ID matches "^vol-00[0-4]$"');
  await input.press("Enter");
  const keys = await shown("default/vol-000");
  await browser.page.locator('table[aria-label="CSI volumes"] tbody tr').nth(4).waitFor({ timeout: 15_000 });
  assert.deepEqual(
    await rows().evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-key"))),
    ["default/vol-000", "default/vol-001", "default/vol-002", "default/vol-003", "default/vol-004"],
    `shown first: ${keys.join(" ")}`,
  );
  const filtered = listRequests.filter((u) => u.searchParams.has("filter"));
  assert.ok(filtered.length > 0);
  assert.equal(filtered.at(-1)!.searchParams.get("next_token"), null, "back to the first page");
  assert.deepEqual(
    failed.filter((f) => f.includes("/v1/volumes")),
    [],
  );
});
