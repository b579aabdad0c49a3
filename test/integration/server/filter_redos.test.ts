/**
 * `?filter=` over HTTP cannot freeze the server (issue 30): a `matches` pattern that backtracks
 * exponentially on V8's RegExp answers at once under RE2, and a call made meanwhile is answered.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { makeNode } from "../../builders/node.js";
import { connectAgent, http, startServer } from "./fake_agent.js";

test(
  "a ReDoS filter on /v1/nodes answers at once, and other calls are answered meanwhile",
  { timeout: 15_000 },
  async (t) => {
    const base = await startServer(t);
    const peer = await connectAgent(base);
    t.after(() => peer.close());
    await peer.call("Node.Register", { Node: makeNode("1e1eaca1-2b3c-4d5e-8f90-a1b2c3d4e5f6") });
    const evil = encodeURIComponent('ID matches "^.{6}([0-9a-f-]+)+#"');
    const [filtered, other] = await Promise.all([
      http(base, "GET", `/v1/nodes?filter=${evil}`),
      http(base, "GET", "/v1/jobs"),
    ]);
    assert.equal(filtered.status, 200, filtered.text);
    assert.deepEqual(filtered.json, []);
    assert.equal(other.status, 200);
    const bad = await http(base, "GET", `/v1/nodes?filter=${encodeURIComponent('ID matches "(?=1)"')}`);
    assert.equal(bad.status, 400, "a pattern RE2 refuses is a 400 naming it");
    assert.match(bad.text, /invalid regular expression/);
  },
);
