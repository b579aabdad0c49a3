/**
 * The README's secured setup with real processes: `berth agent -server -config acl.hcl` (the
 * config file's `acl { enabled = true }`), then the CLI: anonymous commands are refused with 403,
 * `berth acl bootstrap` prints the management token once, and with it as BERTH_TOKEN the same
 * commands work. The agent is stopped (and checked gone) even when an assertion fails.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { AgentProcess, eventually, freePort, runCli } from "../helpers/agent_process.js";

test("an agent with acl { enabled = true } refuses anonymous commands and serves the bootstrap token", async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-acl-e2e-"));
  const config = path.join(dir, "acl.hcl");
  fs.writeFileSync(config, "acl {\n  enabled = true\n}\n");
  const port = await freePort();
  const agent = new AgentProcess(
    ["-server", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`, "-config", config],
    path.join(dir, "agent.log"),
  );
  t.after(async () => {
    await agent.stop();
    assert.equal(agent.running, false);
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const env = { BERTH_ADDR: `http://127.0.0.1:${port}` };

  const anonymous = await eventually("the agent answering", async () => {
    const r = await runCli(["job", "status"], env);
    return r.stderr.includes("Unexpected response code") ? r : undefined;
  });
  assert.equal(anonymous.code, 1);
  assert.match(anonymous.stderr, /403 \(Permission denied\)/);

  const boot = await runCli(["acl", "bootstrap"], env);
  assert.equal(boot.code, 0, boot.stderr);
  const secret = /^Secret ID\s+=\s+(\S+)$/m.exec(boot.stdout)?.[1];
  assert.ok(secret, boot.stdout);

  const jobs = await runCli(["job", "status"], { ...env, BERTH_TOKEN: secret });
  assert.equal(jobs.code, 0, jobs.stderr);
  const self = await runCli(["acl", "token", "self"], { ...env, NOMAD_TOKEN: secret });
  assert.match(self.stdout, /^Type\s+=\s+management$/m);
  assert.doesNotMatch(self.stdout, new RegExp(secret));
});
