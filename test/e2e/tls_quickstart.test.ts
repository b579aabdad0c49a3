/**
 * The quick start with mutual TLS on, end to end through real processes: certificates made by
 * `berth tls ca create` / `berth tls cert create`, a real `berth agent -dev` with a `tls` block
 * (https, rpc, verify_server_hostname, verify_https_client), the CLI with NOMAD_CACERT /
 * NOMAD_CLIENT_CERT / NOMAD_CLIENT_KEY: plugin job → volume created → writer job completes →
 * hello.txt in the volume → job stop -purge → volume delete → clean stop. A CLI without a client
 * certificate is refused, and a node agent holding a foreign CA's certificate cannot register.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { ApiClient } from "../../src/api/index.js";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import {
  AgentProcess,
  BERTH_BIN,
  eventually,
  findFiles,
  freePort,
  killProcessGroupsUnder,
  killProcessesUnder,
  logTail,
  REPO_ROOT,
  runCli,
  type CliResult,
} from "../helpers/agent_process.js";

let dir: string;
let dataDir: string;
let certDir: string;
let logFile: string;
let agent: AgentProcess | undefined;
let rogue: AgentProcess | undefined;
let env: Record<string, string>;
let api: ApiClient;
let passed = false;

/** The real CLI in `cwd` (the tls commands write there, as Nomad's do). */
function berthIn(cwd: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BERTH_BIN, ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

async function ok(cwd: string, args: string[]): Promise<CliResult> {
  const r = await berthIn(cwd, args);
  assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}`);
  return r;
}

async function cli(args: string[]): Promise<CliResult> {
  const r = await runCli(args, env);
  assert.equal(r.code, 0, `berth ${args.join(" ")} failed: ${r.stderr}\n${r.stdout}`);
  return r;
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-tls-"));
  dataDir = path.join(dir, "data");
  certDir = path.join(dir, "certs");
  const foreignDir = path.join(dir, "foreign");
  fs.mkdirSync(certDir);
  fs.mkdirSync(foreignDir);
  logFile = path.join(dir, "agent.log");
  await ok(certDir, ["tls", "ca", "create"]);
  await ok(certDir, ["tls", "cert", "create", "-server"]);
  await ok(certDir, ["tls", "cert", "create", "-client"]);
  await ok(certDir, ["tls", "cert", "create", "-cli"]);
  await ok(foreignDir, ["tls", "ca", "create"]);
  await ok(foreignDir, ["tls", "cert", "create", "-client"]);

  const c = (f: string) => path.join(certDir, f);
  const tlsConfig = path.join(dir, "tls.hcl");
  fs.writeFileSync(
    tlsConfig,
    `tls {\n  http = true\n  rpc = true\n  ca_file = "${c("nomad-agent-ca.pem")}"\n` +
      `  cert_file = "${c("global-server-nomad.pem")}"\n  key_file = "${c("global-server-nomad-key.pem")}"\n` +
      `  verify_server_hostname = true\n  verify_https_client = true\n}\n` +
      // ACLs on as well: the quick start runs with a token, as a secured cluster's operator does.
      `acl {\n  enabled = true\n}\n`,
  );
  const port = await freePort();
  agent = new AgentProcess(
    [
      "-dev",
      "-config",
      path.join(REPO_ROOT, "examples/hostpath/agent.hcl"),
      "-config",
      tlsConfig,
      "-data-dir",
      dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
    ],
    logFile,
  );
  env = {
    NOMAD_ADDR: `https://127.0.0.1:${port}`,
    NOMAD_CACERT: c("nomad-agent-ca.pem"),
    NOMAD_CLIENT_CERT: c("global-cli-nomad.pem"),
    NOMAD_CLIENT_KEY: c("global-cli-nomad-key.pem"),
  };
  // The one-time bootstrap over mutual TLS: its management token runs everything after it.
  const boot = await eventually(
    "the ACL bootstrap over HTTPS",
    async () => {
      const r = await runCli(["acl", "bootstrap"], env);
      return r.code === 0 ? r.stdout : undefined;
    },
    30_000,
  );
  const secret = /^Secret ID\s*=\s*(\S+)$/m.exec(boot)?.[1];
  assert.match(secret ?? "", /^[0-9a-f-]{36}$/, boot);
  const anonymous = await runCli(["job", "status"], env);
  assert.notEqual(anonymous.code, 0, "without a token the CLI is refused");
  assert.match(anonymous.stderr, /Permission denied/);
  env.NOMAD_TOKEN = secret!;
  api = new ApiClient({
    address: env.NOMAD_ADDR,
    token: secret!,
    tls: { caCert: env.NOMAD_CACERT, clientCert: env.NOMAD_CLIENT_CERT, clientKey: env.NOMAD_CLIENT_KEY },
  });
  await eventually(
    "the dev node to be ready over HTTPS",
    async () => ((await api.nodes.list()).some((n) => n.Status === "ready") ? true : undefined),
    30_000,
  );
});

after(async () => {
  rogue?.kill();
  agent?.kill();
  const leftovers = killProcessGroupsUnder(dir);
  if (leftovers.length > 0 || !passed) process.stderr.write(`agent log (tail):\n${logTail(logFile)}\n`);
  for (const m of await mountsUnder(dir)) {
    try {
      execFileSync("umount", ["-l", m]);
    } catch {
      /* already gone */
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test("berth tls makes Nomad's files: a P-256 CA, agent certificates for their role's name, keys 0600", () => {
  const read = (f: string) => new crypto.X509Certificate(fs.readFileSync(path.join(certDir, f)));
  const ca = read("nomad-agent-ca.pem");
  assert.equal(ca.ca, true);
  const server = read("global-server-nomad.pem");
  assert.ok(server.checkIssued(ca) && server.verify(ca.publicKey), "signed by the CA");
  assert.equal(server.publicKey.asymmetricKeyDetails?.namedCurve, "prime256v1");
  assert.match(server.subject, /CN=server\.global\.nomad/);
  assert.equal(server.subjectAltName, "DNS:server.global.nomad, DNS:localhost, IP Address:127.0.0.1");
  assert.match(read("global-client-nomad.pem").subjectAltName ?? "", /DNS:client\.global\.nomad/);
  assert.equal(read("global-cli-nomad.pem").subjectAltName, "DNS:cli.global.nomad, DNS:localhost");
  for (const key of ["nomad-agent-ca-key.pem", "global-server-nomad-key.pem", "global-cli-nomad-key.pem"]) {
    assert.equal(fs.statSync(path.join(certDir, key)).mode & 0o777, 0o600, key);
  }
});

test("the CLI is refused without a client certificate, and never replaces an existing certificate", async () => {
  const { NOMAD_CLIENT_CERT: _c, NOMAD_CLIENT_KEY: _k, ...noCert } = env;
  const r = await runCli(["node", "status"], noCert);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot reach berth at https:\/\/127\.0\.0\.1/);
  const plain = await runCli(["node", "status"], {
    ...env,
    NOMAD_ADDR: env.NOMAD_ADDR!.replace("https:", "http:"),
  });
  assert.equal(plain.code, 1, "plain HTTP finds no API");
  const again = await berthIn(certDir, ["tls", "cert", "create", "-cli"]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /Certificate file 'global-cli-nomad\.pem' already exists/);
});

test("a node agent with a foreign CA's certificate cannot register", async () => {
  const foreign = (f: string) => path.join(dir, "foreign", f);
  const rogueConfig = path.join(dir, "rogue.hcl");
  fs.writeFileSync(
    rogueConfig,
    `tls {\n  http = true\n  rpc = true\n  ca_file = "${path.join(certDir, "nomad-agent-ca.pem")}"\n` +
      `  cert_file = "${foreign("global-client-nomad.pem")}"\n  key_file = "${foreign("global-client-nomad-key.pem")}"\n}\n`,
  );
  const rogueLog = path.join(dir, "rogue.log");
  rogue = new AgentProcess(
    [
      "-client",
      "-data-dir",
      path.join(dir, "rogue"),
      `-servers=${env.NOMAD_ADDR!.replace("https://", "")}`,
      "-node-name=rogue",
      "-config",
      rogueConfig,
    ],
    rogueLog,
  );
  try {
    await eventually("the rogue agent to be refused", async () =>
      /cannot connect to server/.test(logTail(rogueLog)) ? true : undefined,
    );
    const names = (await api.nodes.list()).map((n) => n.Name);
    assert.ok(!names.includes("rogue"), `registered nodes: ${names.join(", ")}`);
    // The server says why, without the certificate's contents.
    await eventually("the server to log the refused handshake", async () =>
      /refused a TLS handshake/.test(logTail(logFile, 400)) ? true : undefined,
    );
  } finally {
    await rogue.stop(10_000);
  }
});

test(
  "quick start with TLS: plugin, volume, writer job, release, delete, clean stop",
  { timeout: 120_000 },
  async () => {
    await cli(["job", "run", "examples/hostpath/plugin.hcl"]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const r = await runCli(["plugin", "status", "-json", "hostpath"], env);
        if (r.code !== 0) return undefined;
        const p = JSON.parse(r.stdout) as { NodesHealthy: number; ControllersHealthy: number };
        return p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? true : undefined;
      },
      60_000,
    );
    await cli(["volume", "create", "examples/hostpath/volume.hcl"]);
    // The example writer, also saying what it did on stdout, for `alloc logs` over TLS.
    const writerFile = path.join(dir, "writer.hcl");
    fs.writeFileSync(
      writerFile,
      fs
        .readFileSync(path.join(REPO_ROOT, "examples/hostpath/job.hcl"), "utf8")
        .replace("echo hello > /data/hello.txt", "echo hello > /data/hello.txt && echo wrote-hello"),
    );
    await cli(["job", "run", writerFile]);
    const writer = await eventually(
      "the writer to complete",
      async () => {
        const allocs = await api.jobs.allocations("writer");
        if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error("writer failed");
        return allocs.length > 0 && allocs.every((a) => a.ClientStatus === "complete")
          ? allocs[0]
          : undefined;
      },
      60_000,
    );
    // The streaming routes over TLS too: a task's log (HTTPS), exec (a wss:// WebSocket).
    assert.equal((await cli(["alloc", "logs", writer.ID, "writer"])).stdout, "wrote-hello\n");
    const plugin = (await api.jobs.allocations("plugin")).find((a) => a.ClientStatus === "running");
    assert.ok(plugin, "the plugin alloc runs");
    const exec = await cli(["alloc", "exec", "-task", "plugin", plugin.ID, "/bin/sh", "-c", "echo via-wss"]);
    assert.equal(exec.stdout, "via-wss\n");
    // Nomad's log frames (-tail reads them), with the CLI's CA too.
    assert.equal(
      (await cli(["alloc", "logs", "-tail", "-n", "1", writer.ID, "writer"])).stdout,
      "wrote-hello\n",
    );
    const hellos = findFiles(path.join(dataDir, "hostpath-data"), "hello.txt");
    assert.equal(hellos.length, 1, "hello.txt is in the volume's storage");
    assert.equal(fs.readFileSync(hellos[0]!, "utf8").trim(), "hello");

    await cli(["job", "stop", "-purge", "writer"]);
    await eventually("the volume's claims to be released", async () => {
      const v = await api.volumes.info("demo");
      const claims = [v.ReadAllocs, v.WriteAllocs, v.PastClaims];
      return claims.every((c) => Object.keys(c ?? {}).length === 0) ? true : undefined;
    });
    await cli(["volume", "delete", "demo"]);
    assert.equal(fs.existsSync(path.dirname(hellos[0]!)), false, "DeleteVolume removed the storage");

    const code = await agent!.stop(60_000);
    assert.equal(code, 0, "the agent stops cleanly");
    assert.deepEqual(await mountsUnder(dataDir), [], "nothing is mounted under the data dir");
    assert.deepEqual(killProcessesUnder(dataDir), [], "no task process outlived the agent");
    passed = true;
  },
);
