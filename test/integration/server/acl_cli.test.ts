/**
 * The ACL commands through the real CLI dispatcher and API client against a real server with ACLs
 * on (in-process, real HTTP on loopback): `acl bootstrap` prints the management token once, `acl
 * policy apply` reads a policy file, `acl token create` prints a client token whose secret then
 * works (BERTH_TOKEN) within its policy, `acl token info` no longer shows the secret, and bad
 * input is refused with Nomad's texts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ApiClient } from "../../../src/api/index.js";
import { runCli } from "../../../src/cli/dispatch.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";

async function cli(base: string, env: Record<string, string>, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    env: { BERTH_ADDR: base, ...env },
    io: (connection) => ({
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      api: new ApiClient(connection),
      readFile: (p) => readFile(p, "utf8"),
      now: () => Date.now(),
    }),
  });
  return { code, out, err };
}

/** The value of `Key = value` in the CLI's key/value output. */
function value(lines: string[], key: string): string {
  const line = lines.find((l) => l.startsWith(key + " ") || l.startsWith(key + "="));
  assert.ok(line, `${key} in ${lines.join("\n")}`);
  return line.slice(line.indexOf("=") + 1).trim();
}

test("acl bootstrap, policy apply, token create/info/self/list through the CLI", async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-aclcli-"));
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    acl: { enabled: true },
  });
  await server.start();
  t.after(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const base = server.httpAddress;

  // The bootstrap secret may be given in a file, as Nomad's `acl bootstrap <path>`.
  const chosen = "6c9f1a2b-3d4e-4f50-8a61-7b8c9d0e1f23";
  writeFileSync(path.join(dir, "secret"), chosen + "\n");
  const boot = await cli(base, {}, "acl", "bootstrap", path.join(dir, "secret"));
  assert.equal(boot.code, 0, boot.err.join("\n"));
  assert.equal(value(boot.out, "Secret ID"), chosen);
  assert.equal(value(boot.out, "Type"), "management");
  assert.equal(value(boot.out, "Policies"), "n/a");
  const root = { BERTH_TOKEN: value(boot.out, "Secret ID") };
  const again = await cli(base, {}, "acl", "bootstrap");
  assert.equal(again.code, 1);
  assert.match(again.err.join("\n"), /Error bootstrapping: .*ACL bootstrap already done/);

  const file = path.join(dir, "nodes.hcl");
  writeFileSync(file, 'node { policy = "read" }\n');
  const applied = await cli(
    base,
    root,
    "acl",
    "policy",
    "apply",
    "-description",
    "read nodes",
    "nodes",
    file,
  );
  assert.equal(applied.code, 0, applied.err.join("\n"));
  assert.deepEqual(applied.out, ['Successfully wrote "nodes" ACL policy!']);
  writeFileSync(file, 'node { policy = "list" }\n');
  const bad = await cli(base, root, "acl", "policy", "apply", "bad", file);
  assert.equal(bad.code, 1);
  assert.match(bad.err.join("\n"), /Invalid node policy: &acl.NodePolicy\{Policy:"list"\}/);

  const list = await cli(base, root, "acl", "policy", "list");
  assert.deepEqual(list.out, ["Name   Description", "nodes  read nodes"]);

  const created = await cli(base, root, "acl", "token", "create", "-name", "ops", "-policy", "nodes");
  assert.equal(created.code, 0, created.err.join("\n"));
  const opsSecret = value(created.out, "Secret ID");
  const accessor = value(created.out, "Accessor ID");
  assert.equal(value(created.out, "Policies"), "[nodes]");

  // The new token works within its policy, and is refused outside it.
  const ops = { BERTH_TOKEN: opsSecret };
  assert.equal((await cli(base, ops, "node", "status")).code, 0);
  const denied = await cli(base, ops, "job", "status");
  assert.equal(denied.code, 1);
  assert.match(denied.err.join("\n"), /403 \(Permission denied\)/);
  const self = await cli(base, ops, "acl", "token", "self");
  assert.equal(value(self.out, "Accessor ID"), accessor);
  assert.equal(value(self.out, "Secret ID"), "<hidden>");

  const info = await cli(base, root, "acl", "token", "info", accessor);
  assert.equal(value(info.out, "Name"), "ops");
  assert.equal(info.out.join("\n").includes(opsSecret), false, "info never shows the secret");
  const tokens = await cli(base, root, "acl", "token", "list");
  assert.equal(tokens.out[0]!.split(/\s+/).join(" "), "Name Type Global Accessor ID Expired");
  assert.equal(tokens.out.length, 3);

  const updated = await cli(base, root, "acl", "token", "update", "-name", "ops2", accessor);
  assert.equal(value(updated.out, "Name"), "ops2");
  assert.equal((await cli(base, ops, "node", "status")).code, 0, "the secret survives an update");

  const gone = await cli(base, root, "acl", "token", "delete", accessor);
  assert.deepEqual(gone.out, [`Token ${accessor} successfully deleted`]);
  const after = await cli(base, ops, "node", "status");
  assert.match(after.err.join("\n"), /ACL token not found/);
});
