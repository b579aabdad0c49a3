/**
 * docs/errors.md cannot drift from the code: its table has one row per error code, in the code
 * list's order, with the status from the one status map and the retry rule from structs/errors.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { ERROR_CODES, isClaimRetryable, isRetryable, type ErrorCode } from "../../../src/structs/errors.js";
import { statusOf } from "../../../src/server/wire/status_map.js";

interface Row {
  code: string;
  status: string;
  retried: string;
  meaning: string;
}

async function catalogue(): Promise<Row[]> {
  const text = await readFile(new URL("../../../../docs/errors.md", import.meta.url), "utf8");
  return text
    .split("\n")
    .filter((l) => /^\|\s*`ERR_/.test(l))
    .map((l) => {
      const [code, status, retried, meaning] = l
        .split("|")
        .slice(1, -1)
        .map((c) => c.trim());
      return { code: code!.replace(/`/g, ""), status: status!, retried: retried!, meaning: meaning! };
    });
}

function retried(code: ErrorCode): string {
  if (isRetryable(code)) return "yes";
  return isClaimRetryable(code) ? "claim" : "no";
}

test("docs/errors.md lists every code once, in order, with its status, retry rule and meaning", async () => {
  const rows = await catalogue();
  assert.deepEqual(
    rows.map((r) => r.code),
    [...ERROR_CODES],
    "one row per code in structs/errors.ts, same order",
  );
  for (const row of rows) {
    const code = row.code as ErrorCode;
    assert.equal(row.status, String(statusOf(code)), `${code}: HTTP status`);
    assert.equal(row.retried, retried(code), `${code}: retried`);
    assert.ok(row.meaning.length > 10, `${code}: a meaning`);
  }
});
