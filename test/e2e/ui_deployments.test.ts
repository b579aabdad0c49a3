/**
 * The web UI's deployments page (/ui/jobs/<id>@<ns>/deployments) in a real headless Chromium
 * against one in-process server with no nodes, so the job's deployment stays running: the page
 * lists it with its per-group counts, Pause and Resume act through the API after a confirmation,
 * and the page follows each change by itself (a blocking query; it is never reloaded). Fail ends
 * it and its buttons go. The job page links to it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { launchBrowser, waitText, type Browser } from "../helpers/browser.js";
import { startServer } from "../integration/server/fake_agent.js";

let base = "";
let browser: Browser | undefined;
const stops: (() => unknown)[] = [];

before(async () => {
  base = await startServer({ after: (fn) => stops.push(fn) });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  for (const stop of stops) await stop();
});

const JOB = {
  Job: {
    ID: "web",
    Type: "service",
    TaskGroups: [
      { Name: "g", Count: 2, Tasks: [{ Name: "t", Driver: "exec", Config: { command: "/bin/sleep" } }] },
    ],
  },
};

async function confirm(page: Browser["page"], scope: string, label: string, yes: string): Promise<void> {
  await page.locator(scope).getByRole("button", { name: label, exact: true }).first().click();
  await page.getByRole("dialog").getByRole("button", { name: yes, exact: true }).click();
}

test("deployments page: the job's deployment, pause, resume and fail through the API", async () => {
  assert.ok(browser);
  const page = browser.page;
  const res = await fetch(`${base}/v1/jobs`, { method: "PUT", body: JSON.stringify(JOB) });
  assert.equal(res.status, 200, await res.text());
  const [d] = (await (await fetch(`${base}/v1/job/web/deployments`)).json()) as { ID: string }[];
  assert.ok(d);
  const short = d.ID.slice(0, 8);
  const section = `section[aria-label="Deployment ${short}"]`;
  const groups = `table[aria-label="Task groups of deployment ${short}"]`;

  await page.goto(`${base}/ui/jobs/web@default`);
  await page.getByRole("link", { name: "Deployments", exact: true }).click();
  await waitText(page, `${section} .badge`, "running");
  assert.equal(new URL(page.url()).pathname, "/ui/jobs/web@default/deployments");
  await waitText(page, `${groups} tr[data-key="g"] td[data-col="Desired"]`, "2");
  await waitText(page, `${groups} tr[data-key="g"] td[data-col="Placed"]`, "0");

  await confirm(page, section, "Pause", "Yes, pause");
  await waitText(page, `${section} .badge`, "paused");
  await waitText(page, `${section} [role="status"]`, `Deployment ${short} paused.`);
  const stored = (await (await fetch(`${base}/v1/deployment/${d.ID}`)).json()) as { Status: string };
  assert.equal(stored.Status, "paused");

  await confirm(page, section, "Resume", "Yes, resume");
  await waitText(page, `${section} .badge`, "running");
  await confirm(page, section, "Fail", "Yes, fail deployment");
  await waitText(page, `${section} .badge`, "failed");
  assert.equal(await page.locator(section).getByRole("button", { name: "Pause" }).count(), 0);
  // Chrome logs each 4xx answer (the favicon's 404) as "Failed to load resource"; anything else (a
  // CSP violation, an exception) is a fault of the page.
  assert.deepEqual(
    browser.errors.filter((e) => !/Failed to load resource/.test(e)),
    [],
  );
});
