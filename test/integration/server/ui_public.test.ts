/**
 * With ACLs on, the web UI's files stay public, as Nomad's (they hold no data), while the API they
 * call is not: a wrong or stale token in the browser never locks the user out of the page that lets
 * them replace it, and the UI's requests carry the token the user entered.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";

test("with ACLs on, /ui is public whatever token comes along; the API it calls is not", async (t) => {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    acl: { enabled: true },
  });
  await server.start();
  t.after(() => server.stop());
  const base = server.httpAddress;
  const root = (
    (await (await fetch(`${base}/v1/acl/bootstrap`, { method: "PUT" })).json()) as { SecretID: string }
  ).SecretID;
  const bogus = "00000000-0000-4000-8000-000000000000";

  const tokens: Record<string, string>[] = [{}, { "X-Nomad-Token": bogus }, { "X-Nomad-Token": root }];
  for (const headers of tokens) {
    for (const p of ["/ui/", "/ui/storage/volumes/csi/demo@default"]) {
      const res = await fetch(base + p, { headers });
      assert.equal(res.status, 200, `${p} with ${JSON.stringify(headers)}`);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/);
    }
    const redirect = await fetch(`${base}/`, { headers, redirect: "manual" });
    assert.equal(redirect.status, 307);
  }

  const anonymous = await fetch(`${base}/v1/volumes?type=csi`);
  assert.equal(anonymous.status, 403);
  const wrong = await fetch(`${base}/v1/volumes?type=csi`, { headers: { "X-Nomad-Token": bogus } });
  assert.equal(wrong.status, 403);
  assert.match(await wrong.text(), /ACL token not found/);
  const management = await fetch(`${base}/v1/volumes?type=csi`, { headers: { "X-Nomad-Token": root } });
  assert.equal(management.status, 200);
});
