/**
 * Nomad's list options as list_options.ts applies them: prefix, filter on the stub, per_page with
 * the next token of Nomad's tokenizers (ID, Namespace.ID, CreateIndex.ID), reverse; parameter
 * errors; and the blocking query's wait (Nomad's 5-minute cap and wait/16 jitter).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { BerthError } from "../../../src/structs/errors.js";
import { listOptions, pageOf, type TokenKind } from "../../../src/server/http/list_options.js";
import { blockingWaitMs } from "../../../src/server/http/respond.js";

interface Rec {
  ID: string;
  Namespace: string;
  CreateIndex: number;
  Status: string;
}
const recs: Rec[] = [
  { ID: "c3", Namespace: "default", CreateIndex: 5, Status: "running" },
  { ID: "a1", Namespace: "prod", CreateIndex: 9, Status: "dead" },
  { ID: "b2", Namespace: "default", CreateIndex: 7, Status: "running" },
  { ID: "a2", Namespace: "default", CreateIndex: 10, Status: "running" },
];
const stub = (r: Rec) => ({ ID: r.ID, Status: r.Status });
const page = (q: string, kind: TokenKind) => {
  const p = pageOf(recs, listOptions(new URLSearchParams(q)), kind, stub);
  return { ids: p.items.map((s) => s.ID), next: p.nextToken };
};

test("order and tokens per list kind", () => {
  assert.deepEqual(page("", "id"), { ids: ["a1", "a2", "b2", "c3"], next: "" });
  assert.deepEqual(page("", "namespace-id"), { ids: ["a2", "b2", "c3", "a1"], next: "" });
  assert.deepEqual(page("", "index-id"), { ids: ["c3", "b2", "a1", "a2"], next: "" });
  assert.deepEqual(page("per_page=2", "id"), { ids: ["a1", "a2"], next: "b2" });
  assert.deepEqual(page("per_page=2", "namespace-id"), { ids: ["a2", "b2"], next: "default.c3" });
  assert.deepEqual(page("per_page=2", "index-id"), { ids: ["c3", "b2"], next: "9.a1" });
});

test("next_token resumes at the token's item, forward and reversed, until the last page", () => {
  assert.deepEqual(page("per_page=2&next_token=9.a1", "index-id"), { ids: ["a1", "a2"], next: "" });
  assert.deepEqual(page("per_page=2&next_token=default.c3", "namespace-id"), { ids: ["c3", "a1"], next: "" });
  assert.deepEqual(page("reverse=true", "id"), { ids: ["c3", "b2", "a2", "a1"], next: "" });
  assert.deepEqual(page("reverse=true&per_page=3", "id"), { ids: ["c3", "b2", "a2"], next: "a1" });
  assert.deepEqual(page("reverse=true&per_page=3&next_token=a1", "id"), { ids: ["a1"], next: "" });
  // A token of an item that is gone still resumes at the next item in order (no lookup).
  assert.deepEqual(page("next_token=8.zz", "index-id"), { ids: ["a1", "a2"], next: "" });
  // Walking every page with per_page=1 visits every item once.
  const seen: string[] = [];
  let token = "";
  for (let i = 0; i < 10; i++) {
    const p = page(`per_page=1${token ? `&next_token=${token}` : ""}`, "index-id");
    seen.push(...p.ids);
    if (!p.next) break;
    token = p.next;
  }
  assert.deepEqual(seen, ["c3", "b2", "a1", "a2"]);
});

test("prefix narrows by ID, and allocs/evals switch to ID tokens with it (Nomad's ID index)", () => {
  assert.deepEqual(page("prefix=a", "namespace-id"), { ids: ["a2", "a1"], next: "" });
  assert.deepEqual(page("prefix=a&per_page=1", "index-id"), { ids: ["a1"], next: "a2" });
  assert.deepEqual(page("prefix=zz", "id"), { ids: [], next: "" });
});

test("filter runs on the stub, before paging", () => {
  assert.deepEqual(page('filter=Status == "running"&per_page=2', "id"), { ids: ["a2", "b2"], next: "c3" });
  assert.deepEqual(page('filter=Status == "dead" or ID == c3', "id"), { ids: ["a1", "c3"], next: "" });
});

test("bad options are 400s naming the parameter; a bad filter has Nomad's prefix", () => {
  const err = (q: string) => {
    try {
      page(q, "id");
    } catch (e) {
      assert.ok(e instanceof BerthError);
      assert.equal(e.code, "ERR_VALIDATION");
      return e;
    }
    assert.fail(`${q} must fail`);
  };
  assert.match(err("filter=Status ==").message, /^failed to read filter expression: column/);
  assert.equal(err("filter=Status ==").field, "filter");
  assert.match(err("filter=Nope == 1").message, /^failed to read filter expression: .*Nope/);
  assert.equal(err("per_page=-1").field, "per_page");
  assert.equal(err("per_page=1e3").field, "per_page");
  assert.equal(err("reverse=maybe").field, "reverse");
});

test("blocking wait: Nomad's default and cap of 5 minutes, zero means the default, plus up to wait/16", () => {
  const none = () => 0;
  const most = () => 0.999999;
  assert.equal(blockingWaitMs(null, none), 300_000);
  assert.equal(blockingWaitMs("0s", none), 300_000);
  assert.equal(blockingWaitMs("10m", none), 300_000, "capped at 5 minutes, not 10");
  assert.equal(blockingWaitMs("2s", none), 2_000);
  assert.equal(blockingWaitMs("0.4ms", none), 1, "a positive wait below a millisecond stays positive");
  assert.equal(blockingWaitMs("10m", most), 300_000 + Math.floor(0.999999 * 18_750));
  assert.equal(blockingWaitMs("16s", most), 16_000 + 999);
});
