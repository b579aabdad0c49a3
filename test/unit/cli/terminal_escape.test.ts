/**
 * Issue 10: "node names with terminal escape codes are printed raw by the CLI". Every string the
 * CLI prints passes through one escape (format.ts terminalSafe, applied by the table/kv layout and
 * by the line writer of io.ts), so a server-supplied name, event or error shows as visible text.
 * The last test runs the real `berth` program against a fake API and reads its output bytes.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Writable } from "node:stream";
import { test } from "node:test";
import { kv, table, terminalSafe, describeError } from "../../../src/cli/format.js";
import { lineWriter } from "../../../src/cli/io.js";
import { node, nodeStub, NODE_ID } from "../../builders/api_records.js";
import { startFakeApi } from "../../fakes/api.js";
import { BERTH_BIN, REPO_ROOT } from "../../helpers/agent_process.js";

const EVIL = "n1\x1b]0;pwned\x07\x1b[2J";
const SHOWN = "n1\\x1b]0;pwned\\a\\x1b[2J";

/** Anything a terminal would act on: C0 but \n, DEL, C1, bidi controls, line/paragraph separators. */
function actionable(s: string): string[] {
  return [...s].filter((c) => {
    const n = c.codePointAt(0)!;
    return (
      (n < 0x20 && c !== "\n") ||
      (n >= 0x7f && n <= 0x9f) ||
      [0x200e, 0x200f, 0x2028, 0x2029].includes(n) ||
      (n >= 0x202a && n <= 0x202e) ||
      (n >= 0x2066 && n <= 0x2069)
    );
  });
}

test("terminalSafe escapes control, C1 and bidi characters the way Go's %q shows them", () => {
  assert.equal(terminalSafe(EVIL), SHOWN);
  assert.equal(
    terminalSafe("a\rb\bc\x00d\x7fe\x9bf\u202eg\u2028h"),
    "a\\rb\\bc\\x00d\\u007fe\\u009bf\\u202eg\\u2028h",
  );
  assert.equal(terminalSafe("two\nlines\tand tab"), "two\\nlines\\tand tab");
  assert.equal(terminalSafe("two\nlines\tand tab", true), "two\nlines\tand tab");
  const plain = "node-1 ünïcödé 名前 ✓";
  assert.equal(terminalSafe(plain), plain);
});

test("table cells and Key = Value values are escaped and stay on one line", () => {
  const rows = table([
    ["ID", "Name"],
    ["abc", `${EVIL}\nfake-row  ready`],
  ]);
  assert.equal(rows.length, 2);
  assert.deepEqual(actionable(rows.join("\n")), []);
  assert.ok(rows[1]!.includes(SHOWN));
  const lines = kv([["Name", EVIL]]);
  assert.deepEqual(lines, [`Name = ${SHOWN}`]);
  assert.equal(describeError(new Error(`bad ${EVIL}`)), `bad ${SHOWN}`);
});

test("the line writer escapes whatever a command prints, keeping its own newlines", () => {
  let written = "";
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      written += chunk.toString();
      done();
    },
  });
  lineWriter(sink)(`Event: ${EVIL}\nsecond line`);
  assert.equal(written, `Event: ${SHOWN}\nsecond line\n`);
  // -json output stays valid JSON with the same values, and nothing in it drives the terminal.
  written = "";
  const value = { Name: `${EVIL}\x7f\x9b\u202e\u2028`, Events: ["\r\n"] };
  lineWriter(sink)(JSON.stringify(value, null, 2));
  assert.deepEqual(actionable(written), []);
  assert.deepEqual(JSON.parse(written), value);
});

test("berth node status prints a node name carrying escape codes as visible text", async () => {
  const evilNode = { ...node, Name: EVIL, StatusDescription: "\x1b[31mred\x1b[0m" };
  const api = await startFakeApi({
    "GET /v1/nodes": { json: [{ ...nodeStub, Name: EVIL }] },
    [`GET /v1/node/${NODE_ID}`]: { json: evilNode },
    "GET /v1/node/broken": {
      status: 500,
      text: `server says ${EVIL}`,
      headers: { "X-Berth-Error-Code": "ERR_INTERNAL" },
    },
  });
  try {
    for (const args of [
      ["node", "status"],
      ["node", "status", NODE_ID],
      ["node", "status", "broken"],
    ]) {
      const { stdout, stderr } = await runBerth(args, api.address);
      const all = stdout + stderr;
      assert.deepEqual(
        actionable(all),
        [],
        `berth ${args.join(" ")} printed raw control characters: ${JSON.stringify(all)}`,
      );
      assert.ok(all.includes(args[2] === "broken" ? `server says ${SHOWN}` : SHOWN), all);
    }
  } finally {
    await api.close();
  }
});

function runBerth(args: string[], address: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BERTH_BIN, ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, BERTH_ADDR: address },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", () => resolve({ stdout, stderr }));
  });
}
