/**
 * Issue 30 item 5: a server whose node RPC is not under mTLS says so at start, once, outside -dev
 * (what a node without TLS can do, how to turn mTLS on); one with `tls { rpc = true }` does not.
 * Real parts: `berth agent -server` processes on loopback, their logs, real certificates.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { AgentProcess, eventually, freePort } from "../../helpers/agent_process.js";
import { makeTestCerts } from "../../helpers/tls_certs.js";
import { tempDir } from "../../helpers/temp_dir.js";

/** Starts `berth agent -server` with `extra` args, waits for it to be up, stops it; answers its log. */
async function serverLog(
  t: { after(fn: () => unknown): void },
  dir: string,
  extra: string[],
): Promise<string> {
  const log = path.join(dir, "agent.log");
  const port = await freePort();
  const agent = new AgentProcess(
    ["-server", `-data-dir=${path.join(dir, "data")}`, `-http-addr=127.0.0.1:${port}`, ...extra],
    log,
  );
  t.after(() => agent.kill());
  await eventually(
    "the agent to start",
    async () => (fs.readFileSync(log, "utf8").includes("berth agent started") ? true : undefined),
    60_000,
  );
  await agent.stop();
  return fs.readFileSync(log, "utf8");
}

const WARNING = "node RPC is not under mutual TLS";

test("a server without tls.rpc warns once at start; one with mTLS does not", async (t) => {
  const plain = await serverLog(t, tempDir("berth-i30-warn-"), []);
  const lines = plain.split("\n").filter((l) => l.includes(WARNING));
  assert.equal(lines.length, 1, plain.slice(-3000));
  assert.match(lines[0]!, /\[WARN\]/);
  assert.match(lines[0]!, /volumes' secrets/);
  assert.match(lines[0]!, /clear text/);
  assert.match(lines[0]!, /rpc = true/);

  const dir = tempDir("berth-i30-mtls-");
  const certs = await makeTestCerts(dir);
  const config = path.join(dir, "tls.hcl");
  fs.writeFileSync(
    config,
    `tls {\n  http = true\n  rpc = true\n  ca_file = "${certs.ca}"\n  cert_file = "${certs.server.cert}"\n  key_file = "${certs.server.key}"\n}\n`,
  );
  const mtls = await serverLog(t, dir, [`-config=${config}`]);
  assert.ok(mtls.includes("berth agent started"), mtls.slice(-2000));
  assert.ok(!mtls.includes(WARNING), "no warning under mTLS");
});
