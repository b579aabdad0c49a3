/**
 * The CLI tells server errors apart by their code (ApiError.code, from X-Berth-Error-Code) and
 * nothing else: a status or a message that looks right without the code changes nothing, and the
 * code decides even under an unexpected status. A source scan keeps it that way.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import { ApiError } from "../../../src/api/index.js";
import { getByIdOrPrefix } from "../../../src/cli/prefix.js";
import { listAcrossPlugins } from "../../../src/cli/commands/volume_snapshot.js";
import { startFakeApi, type FakeApi, type Reply } from "../../fakes/api.js";
import { captureIO } from "../../fakes/command_io.js";

describe("an ID that is not found is retried as a prefix", () => {
  const lookup = (err: ApiError) => {
    const listed: string[] = [];
    const run = getByIdOrPrefix(
      "abc",
      "node",
      (id) => (id === "abc" ? Promise.reject(err) : Promise.resolve({ ID: id })),
      (prefix) => {
        listed.push(prefix);
        return Promise.resolve([{ ID: "abcdef" }]);
      },
    );
    return { run, listed };
  };

  it("when the server's code says ERR_NOT_FOUND, whatever the status", async () => {
    for (const status of [404, 400]) {
      const l = lookup(new ApiError(status, "node not found", "ERR_NOT_FOUND"));
      assert.deepEqual(await l.run, { ID: "abcdef" });
      assert.deepEqual(l.listed, ["abc"]);
    }
  });

  it("not for a 404 without the code, nor for another code", async () => {
    for (const err of [new ApiError(404, "not found"), new ApiError(404, "not found", "ERR_INTERNAL")]) {
      const l = lookup(err);
      await assert.rejects(l.run, (e) => e === err);
      assert.deepEqual(l.listed, []);
    }
  });
});

describe("snapshot list across plugins skips a plugin by its code only", () => {
  let api: FakeApi;
  let answer: Reply;
  before(async () => {
    api = await startFakeApi({
      "GET /v1/plugins": { json: [{ ID: "p", ControllersHealthy: 1 }] },
      "GET /v1/volumes/snapshot": () => answer,
    });
  });
  after(() => api.close());

  it("a code that means 'cannot list' skips it even under an unusual status", async () => {
    answer = { status: 500, text: "no", headers: { "X-Berth-Error-Code": "ERR_CSI_UNIMPLEMENTED" } };
    const found = await listAcrossPlugins(captureIO(api.address), {});
    assert.deepEqual(found.skipped, ['plugin "p": no']);
  });

  it("a 400 with another code is a failure, whatever its text says", async () => {
    answer = {
      status: 400,
      text: "does not support ListSnapshots",
      headers: { "X-Berth-Error-Code": "ERR_VALIDATION" },
    };
    await assert.rejects(listAcrossPlugins(captureIO(api.address), {}), (e) => e instanceof ApiError);
  });
});

/**
 * Ways of telling errors apart that the CLI must not use: an error's status compared or switched
 * on, or its message tested for words. (Showing the status, as describeError does, is fine.)
 */
const FORBIDDEN: [RegExp, string][] = [
  [/\.status\s*(===|!==|==|!=|<=|>=|<|>)|(===|!==|==|!=|<=|>=|<|>)\s*[\w.]*\.status\b/, "compares a .status"],
  [/switch\s*\([^)]*\.status\s*\)/, "switches on a .status"],
  [/\.message\s*\.\s*(includes|startsWith|endsWith|match|search|indexOf)\s*\(/, "matches .message text"],
  [/\.(test|exec)\s*\([^)]*\.message\b/, "tests .message with a regexp"],
];

async function sources(dir: URL): Promise<URL[]> {
  const out: URL[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...(await sources(new URL(`${e.name}/`, dir))));
    else if (e.name.endsWith(".ts")) out.push(new URL(e.name, dir));
  }
  return out;
}

function violations(path: string, text: string): string[] {
  const found: string[] = [];
  text.split("\n").forEach((line, i) => {
    for (const [re, what] of FORBIDDEN)
      if (re.test(line)) found.push(`${path}:${i + 1} ${what}: ${line.trim()}`);
  });
  return found;
}

describe("src/cli/ tells errors apart by code only", () => {
  it("the scan catches each forbidden form", () => {
    for (const bad of [
      "if (err instanceof ApiError && err.status === 404) throw err;",
      "if (404 === e.status) return;",
      "switch (err.status) {",
      'if (err.message.includes("not found")) return;',
      "if (/not found/.test(err.message)) return;",
    ])
      assert.equal(violations("x.ts", bad).length, 1, bad);
    assert.deepEqual(
      violations("x.ts", "return `Unexpected response code: ${err.status} (${err.message})`;"),
      [],
    );
  });

  it("no file in src/cli/ branches on a status or on message text", async () => {
    const root = new URL("../../../../src/cli/", import.meta.url);
    const files = await sources(root);
    assert.ok(files.length > 10, "the scan finds the CLI's sources");
    const found: string[] = [];
    for (const f of files)
      found.push(...violations(f.pathname.slice(root.pathname.length), await readFile(f, "utf8")));
    assert.deepEqual(found, []);
  });
});
