/**
 * `berth operator snapshot save|inspect|restore` and /v1/operator/snapshot against real servers
 * (in-process, SQLite files, ACLs on, real HTTP on loopback, the real CLI dispatcher):
 * - A's state (a namespace, jobs, a volume with secrets, an ACL policy and token) is saved with a
 *   management token; a client token is refused (403) for save and restore; `inspect` reads the
 *   file offline; the volume's secrets are not in the file in the clear.
 * - Into a fresh server B: a corrupt, truncated or foreign file and a keyring that cannot open the
 *   snapshot's secrets are refused with 400 naming the problem, B unchanged; once A's key file is
 *   in B's keystore the restore brings back every record with its indexes, B's index is above the
 *   snapshot's, a blocking query waiting on B wakes, A's tokens work on B (B's own bootstrap
 *   token is gone with B's old state), and the volume's secrets open on B.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ApiClient } from "../../../src/api/index.js";
import { runCli } from "../../../src/cli/dispatch.js";
import { nullLogger } from "../../../src/internal/log.js";
import { NodeSim } from "../../../src/nodesim/nodesim.js";
import { Server } from "../../../src/server/server.js";

async function cli(base: string, token: string, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    env: { BERTH_ADDR: base, BERTH_TOKEN: token },
    io: (connection) => ({
      stdout: (l) => out.push(l),
      stderr: (l) => err.push(l),
      api: new ApiClient(connection),
      readFile: (p) => readFile(p, "utf8"),
      now: () => Date.now(),
    }),
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

async function put(base: string, token: string, file: Buffer): Promise<{ status: number; text: string }> {
  const res = await fetch(`${base}/v1/operator/snapshot`, {
    method: "PUT",
    headers: { "X-Nomad-Token": token },
    body: new Uint8Array(file),
  });
  return { status: res.status, text: await res.text() };
}

const SECRET = "hunter2-do-not-leak";

test("snapshot save, inspect and restore into a fresh server", async (t) => {
  const dir = fs.mkdtempSync(path.join(tmpdir(), "berth-snap-"));
  const start = async (name: string) => {
    const s = new Server({
      dataDir: path.join(dir, name),
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
      acl: { enabled: true },
    });
    await s.start();
    return s;
  };
  const started: Server[] = [];
  const a = await start("a");
  started.push(a);
  // One simulated node running a CSI plugin "hostpath", so A can register a volume of it.
  const sim = new NodeSim({
    count: 1,
    servers: [a.httpAddress],
    pluginId: "hostpath",
    csi: { nodeLatencyMs: 0, controllerLatencyMs: 0, errorRate: 0, maxVolumesPerNode: 0 },
    namePrefix: "snap",
    dataDir: null,
    log: nullLogger,
  });
  t.after(async () => {
    await sim.stop();
    for (const s of started) await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const rootA = (await new ApiClient({ address: a.httpAddress }).acl.bootstrap()).SecretID;
  const apiA = new ApiClient({ address: a.httpAddress, token: rootA });
  await sim.start();
  for (let i = 0; i < 200 && !(await apiA.plugins.list()).some((p) => p.NodesHealthy > 0); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await apiA.namespaces.register({ Name: "prod", Description: "production" });
  await apiA.acl.upsertPolicy({
    Name: "readers",
    Description: "",
    Rules: 'namespace "*" { policy = "read" }',
  });
  const reader = await apiA.acl.createToken({ Name: "r", Type: "client", Policies: ["readers"] });
  const jobFile = path.join(dir, "web.hcl");
  fs.writeFileSync(
    jobFile,
    'job "web" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config { command = "/bin/true" }\n    }\n  }\n}\n',
  );
  assert.equal((await cli(a.httpAddress, rootA, "job", "run", "-detach", jobFile)).code, 0);
  assert.equal(
    (await cli(a.httpAddress, rootA, "job", "run", "-detach", "-namespace", "prod", jobFile)).code,
    0,
  );
  const volFile = path.join(dir, "vol.hcl");
  fs.writeFileSync(
    volFile,
    `id = "vol"\nname = "vol"\ntype = "csi"\nplugin_id = "hostpath"\nexternal_id = "ext-1"\nsecrets { password = "${SECRET}" }\ncapability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n`,
  );
  const reg = await cli(a.httpAddress, rootA, "volume", "register", volFile);
  assert.equal(reg.code, 0, reg.err);

  // Save: management only; the file's header and `inspect` agree with A.
  const file = path.join(dir, "backup.snap");
  const denied = await cli(a.httpAddress, reader.SecretID, "operator", "snapshot", "save", file);
  assert.equal(denied.code, 1);
  assert.match(denied.err, /403/);
  const saved = await cli(a.httpAddress, rootA, "operator", "snapshot", "save", file);
  assert.equal(saved.code, 0, saved.err);
  assert.equal(saved.out, `State file written to ${file}`);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.deepEqual(
    fs.readdirSync(path.join(dir, "a")).filter((f) => f.startsWith("snapshot-")),
    [],
    "the backup's temp file is gone",
  );
  const bytes = fs.readFileSync(file);
  const inspect = await cli("http://127.0.0.1:1", "", "operator", "snapshot", "inspect", file);
  assert.equal(inspect.code, 0, inspect.err);
  const indexA = Number(/Index\s+= (\d+)/.exec(inspect.out)?.[1]);
  assert.ok(indexA > 0, inspect.out);
  assert.match(inspect.out, /^Job\s+2\s/m);
  assert.match(inspect.out, /^CSIVolume\s+1\s/m);
  assert.match(inspect.out, /^Namespace\s+2\s/m);
  assert.match(inspect.out, /^ACLToken\s+2\s/m);
  assert.match(inspect.out, /Sealed With\s+= [0-9a-f-]{36}/);
  assert.ok(!bytes.includes(SECRET), "the secret is not in the snapshot in the clear");
  const { gunzipSync } = await import("node:zlib");
  assert.ok(!gunzipSync(bytes.subarray(bytes.indexOf(0x0a, 15) + 1)).includes(SECRET));

  const b = await start("b");
  started.push(b);
  const rootB = (await new ApiClient({ address: b.httpAddress }).acl.bootstrap()).SecretID;
  const apiB = new ApiClient({ address: b.httpAddress, token: rootB });
  const before = await apiB.jobs.list();
  const indexB0 = Number(
    (await fetch(`${b.httpAddress}/v1/jobs`, { headers: { "X-Nomad-Token": rootB } })).headers.get(
      "X-Nomad-Index",
    ),
  );

  // Refusals change nothing.
  assert.equal(
    (await put(b.httpAddress, reader.SecretID, bytes)).status,
    403,
    "A's tokens mean nothing on B yet",
  );
  const headerEnd = bytes.indexOf(0x0a, 15);
  const corrupt = Buffer.from(bytes);
  corrupt[headerEnd + 40]! ^= 0xff;
  for (const [bad, re] of [
    [corrupt, /SHA-256 does not match/],
    [bytes.subarray(0, bytes.length - 100), /truncated/],
    [Buffer.from("SQLite format 3\0 not ours"), /not a berth snapshot file/],
  ] as const) {
    const r = await put(b.httpAddress, rootB, bad);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, re);
  }
  const wrongKey = await put(b.httpAddress, rootB, bytes);
  assert.equal(wrongKey.status, 400, wrongKey.text);
  assert.match(
    wrongKey.text,
    /volume default\/vol: its secrets are sealed with key [0-9a-f-]+, which the keystore .* does not hold/,
  );
  assert.ok(!wrongKey.text.includes(SECRET));
  assert.deepEqual(await apiB.jobs.list(), before, "nothing changed on B");
  assert.equal((await apiB.volumes.list()).length, 0);

  // The operator carries the keyring: A's key file into B's keystore, then the restore.
  for (const f of fs.readdirSync(path.join(dir, "a", "keystore"))) {
    fs.copyFileSync(path.join(dir, "a", "keystore", f), path.join(dir, "b", "keystore", f));
  }
  const asked = Date.now();
  const waiting = fetch(`${b.httpAddress}/v1/jobs?index=${indexB0}&wait=300s`, {
    headers: { "X-Nomad-Token": rootB },
  });
  const restored = await cli(b.httpAddress, rootB, "operator", "snapshot", "restore", file);
  assert.equal(restored.code, 0, restored.err);
  assert.equal(restored.out, "Snapshot Restored");
  const woke = await waiting;
  // Woken by the restore, not by the end of its 300 s wait (a bound no run comes near).
  assert.ok(Date.now() - asked < 120_000, "the blocking query woke");
  const indexB = Number(woke.headers.get("X-Nomad-Index"));
  assert.ok(indexB > indexA, `B's index ${indexB} is above the snapshot's ${indexA}`);

  // B's old token is gone; A's work, with A's records and their indexes.
  assert.equal(
    (await fetch(`${b.httpAddress}/v1/jobs`, { headers: { "X-Nomad-Token": rootB } })).status,
    403,
  );
  const onB = new ApiClient({ address: b.httpAddress, token: rootA });
  const strip = (jobs: { ID: string; Namespace: string; CreateIndex: number; ModifyIndex: number }[]) =>
    jobs.map((j) => `${j.Namespace}/${j.ID}@${j.CreateIndex}-${j.ModifyIndex}`).sort();
  const allA = new ApiClient({ address: a.httpAddress, token: rootA, namespace: "*" });
  const allB = new ApiClient({ address: b.httpAddress, token: rootA, namespace: "*" });
  assert.deepEqual(strip(await allB.jobs.list()), strip(await allA.jobs.list()));
  assert.deepEqual(
    (await onB.namespaces.list()).map((n) => n.Name),
    (await apiA.namespaces.list()).map((n) => n.Name),
  );
  const volA = await apiA.volumes.info("vol");
  const volB = await onB.volumes.info("vol");
  assert.equal(volB.ModifyIndex, volA.ModifyIndex);
  assert.equal(volB.ExternalID, "ext-1");
  assert.deepEqual(
    (await onB.acl.policies()).map((p) => p.Name),
    ["readers"],
  );
  const readerOnB = new ApiClient({ address: b.httpAddress, token: reader.SecretID });
  assert.equal((await readerOnB.jobs.list()).length, 1, "A's client token works on B within its policy");
  // Writes go on above the restored index.
  await onB.namespaces.register({ Name: "after", Description: "" });
  assert.ok((await onB.namespaces.info("after")).CreateIndex > indexB - 1);
});
