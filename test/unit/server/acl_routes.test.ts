/**
 * Every HTTP route names what an ACL token needs for it (the guard column of ROUTES in
 * server/http/api.ts), and the README's "Security: ACL" table is exactly that list: a route added
 * without a guard does not compile, one whose requirement is blank fails here, and a README that
 * drifts from the code fails here too.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { routeRequirements } from "../../../src/server/http/api.js";

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../README.md");

/** The table's rows as cells: methods, path in backticks, requirement (`|` escaped, as Markdown needs). */
function tableRows(): string[][] {
  return routeRequirements().map((r) => [
    r.methods.join(", "),
    `\`${r.path}\``,
    r.needs.replaceAll("|", "\\|"),
  ]);
}

/** A Markdown table row's cells, trimmed (Prettier pads them), split on unescaped `|`. */
function cells(line: string): string[] {
  return line
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim());
}

test("every route names what it requires of an ACL token", () => {
  const routes = routeRequirements();
  assert.ok(routes.length > 50);
  for (const r of routes) assert.notEqual(r.needs.trim(), "", `${r.methods.join(",")} ${r.path}`);
  const seen = new Set<string>();
  for (const r of routes) {
    for (const m of r.methods) {
      const key = `${m} ${r.path}`;
      assert.equal(seen.has(key), false, `${key} twice`);
      seen.add(key);
    }
  }
});

test("the README's route table is the router's", () => {
  const text = readFileSync(README, "utf8");
  const start = text.indexOf("<!-- acl-routes:start -->");
  const end = text.indexOf("<!-- acl-routes:end -->");
  assert.ok(start > 0 && end > start, "the README has the acl-routes markers");
  const rows = text
    .slice(start, end)
    .split("\n")
    .filter((l) => l.startsWith("|"))
    .map(cells)
    .filter((c) => c[0] !== "Method" && !/^-+$/.test(c[0] ?? ""));
  assert.deepEqual(rows, tableRows());
});
