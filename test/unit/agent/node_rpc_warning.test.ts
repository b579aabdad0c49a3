/** The start-up warning about node RPC without mTLS (agent/node_rpc_warning.ts) and the intro settings. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { nodeRpcWarning } from "../../../src/agent/node_rpc_warning.js";
import { parseAgentConfig } from "../../../src/agent/config_file.js";
import { parseAgentFlags } from "../../../src/agent/options.js";

test("warned outside -dev unless tls.rpc is on; the text says what is exposed and how to turn mTLS on", () => {
  assert.equal(nodeRpcWarning({ dev: true, https: false, mtls: false, enforcement: "warn" }), undefined);
  assert.equal(nodeRpcWarning({ dev: false, https: true, mtls: true, enforcement: "warn" }), undefined);
  const plain = nodeRpcWarning({ dev: false, https: false, mtls: false, enforcement: "warn" })!;
  assert.match(plain.message, /not under mutual TLS/);
  assert.match(plain.message, /secrets/);
  assert.match(plain.message, /clear text/);
  assert.match(plain.message, /rpc = true/);
  assert.match(plain.message, /berth tls ca create/);
  assert.match(plain.message, /enforcement = "strict"/);
  const https = nodeRpcWarning({ dev: false, https: true, mtls: false, enforcement: "strict" })!;
  assert.doesNotMatch(https.message, /clear text/);
  assert.match(https.message, /a token is no certificate/);
});

test("server { client_introduction } is read with Nomad's names; a bad enforcement is refused by name", async () => {
  const cfg = await parseAgentConfig(
    "a.hcl",
    'server {\n  client_introduction {\n    enforcement = "strict"\n    default_identity_ttl = "10m"\n    max_identity_ttl = "1h"\n  }\n}\n',
  );
  assert.deepEqual(cfg.clientIntroduction, {
    enforcement: "strict",
    defaultTtlMs: 600_000,
    maxTtlMs: 3_600_000,
  });
  await assert.rejects(
    parseAgentConfig("b.hcl", 'server {\n  client_introduction {\n    enforcement = "loose"\n  }\n}\n'),
    /enforcement must be "none", "warn" or "strict"/,
  );
  const flags = parseAgentFlags(["-client", "-client-intro-token=abc.def.ghi"]);
  assert.equal(flags.clientIntroToken, "abc.def.ghi");
});
