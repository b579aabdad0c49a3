/**
 * A real headless Chromium for the web UI's tests: Debian's /usr/bin/chromium (never a downloaded
 * browser) driven by playwright-core, with a fresh profile in a temp dir that close() removes.
 * Screenshots go under the OS temp dir (never into the repository) and their paths are returned to
 * be printed. Everything the page logs as an error (a CSP violation, an exception, a failed load)
 * is collected, so a test can require a clean console.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors and page exceptions seen so far (cleared by the caller as it likes). */
  errors: string[];
  /** Where screenshots are written (a temp dir kept after the test for a human to look at). */
  shotDir: string;
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "berth-chromium-"));
  const shotDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-ui-shots-"));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: ARGS,
      viewport: { width: 1280, height: 900 },
    });
  } catch (err) {
    fs.rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`exception: ${e.message}`));
  return {
    context,
    page,
    errors,
    shotDir,
    async screenshot(name) {
      const file = path.join(shotDir, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    async close() {
      try {
        await context.close();
      } finally {
        fs.rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Waits until the text of the first element `selector` matches `want` (the page updates
 * itself: live queries); throws with the last text seen.
 */
export async function waitText(
  page: Page,
  selector: string,
  want: string | RegExp,
  timeoutMs = 30_000,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  let last = "(no element)";
  for (;;) {
    const el = page.locator(selector).first();
    if ((await el.count()) > 0) {
      last = ((await el.textContent()) ?? "").trim();
      if (typeof want === "string" ? last === want : want.test(last)) return last;
    }
    if (Date.now() > deadline) {
      throw new Error(`${selector}: waited for ${String(want)}, last text ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
