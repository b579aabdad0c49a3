/**
 * Nomad's fuzzy matching (structs/fuzzy_search.ts): substring without case, the contexts a job
 * expands into with their scopes, the order (position, then length, then name), and the limits
 * (only the first 20 records are looked at; a context keeps at most 100 matches).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  collectFuzzy,
  FUZZY_LIMIT_QUERY,
  FUZZY_LIMIT_RESULTS,
  jobHits,
  singleHit,
} from "../../../src/structs/fuzzy_search.js";

const job = {
  ID: "web-app",
  Name: "Web-App",
  Namespace: "prod",
  TaskGroups: [
    {
      Name: "frontend",
      Services: [{ Name: "web-svc" }],
      Tasks: [
        { Name: "nginx", Driver: "docker", Config: { image: "nginx:1.27-web" } },
        { Name: "webhook", Driver: "raw_exec", Config: { command: "/usr/bin/web-hook" } },
        { Name: "other", Driver: "exec", Config: { command: 42 } },
      ],
    },
  ],
};

test("a job expands into its contexts, each scoped by its parents", () => {
  const { matches, truncations } = collectFuzzy([job], (j) => jobHits(j, "web"));
  assert.deepEqual(matches, {
    jobs: [{ ID: "Web-App", Scope: ["prod"] }],
    services: [{ ID: "web-svc", Scope: ["prod", "web-app", "frontend"] }],
    tasks: [{ ID: "webhook", Scope: ["prod", "web-app", "frontend"] }],
    images: [{ ID: "nginx:1.27-web", Scope: ["prod", "web-app", "frontend", "nginx"] }],
    commands: [{ ID: "/usr/bin/web-hook", Scope: ["prod", "web-app", "frontend", "webhook"] }],
  });
  assert.deepEqual(truncations, {});
  assert.deepEqual(collectFuzzy([job], (j) => jobHits(j, "FRONT".toLowerCase())).matches, {
    groups: [{ ID: "frontend", Scope: ["prod", "web-app"] }],
  });
});

test("matches sort by position, then the shorter name, then by name; no scope is left out", () => {
  const names = ["xxab", "ab", "abz", "zab", "aab", "abcd"];
  const { matches } = collectFuzzy(names, (n) => singleHit("plugins", n, [], "ab"));
  assert.deepEqual(
    matches.plugins!.map((m) => m.ID),
    ["ab", "abz", "abcd", "aab", "zab", "xxab"],
  );
  assert.equal("Scope" in matches.plugins![0]!, false);
});

test("only the first 20 records are looked at; a match in the 20th with more behind is a truncation", () => {
  const nodes = Array.from({ length: 30 }, (_, i) => `node-${String(i).padStart(2, "0")}`);
  const r = collectFuzzy(nodes, (n) => singleHit("nodes", n, ["id-" + n], "node"));
  assert.equal(r.matches.nodes!.length, FUZZY_LIMIT_QUERY);
  assert.equal(r.truncations.nodes, true);
  const exact = collectFuzzy(nodes.slice(0, 20), (n) => singleHit("nodes", n, [], "node"));
  assert.equal(exact.truncations.nodes, undefined, "exactly 20 records: nothing cut");
  const noMatchAtEnd = collectFuzzy(nodes, (n) => singleHit("nodes", n, [], "node-0"));
  assert.equal(noMatchAtEnd.truncations.nodes, undefined, "Nomad marks a cut only on a match");
});

test("a context keeps at most 100 matches", () => {
  const many = {
    ...job,
    TaskGroups: Array.from({ length: 120 }, (_, i) => ({ Name: `g${i}`, Tasks: [] })),
  };
  const r = collectFuzzy([many], (j) => jobHits(j, "g"));
  assert.equal(r.matches.groups!.length, FUZZY_LIMIT_RESULTS);
  assert.equal(r.truncations.groups, true);
});
