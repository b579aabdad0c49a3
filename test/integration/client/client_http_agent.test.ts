/**
 * Issue 32 item 5, through a real `-server` agent, a real `-client` agent with its own HTTP API on
 * loopback, and the real CLI pointed at the client agent (BERTH_ADDR=client):
 * - the client serves its own `/v1/metrics` (Prometheus text, its registry), `/v1/agent/health`
 *   (Nomad's client shape; `?type=server` is 500 "server not enabled") and `/v1/agent/self`;
 * - everything else is forwarded to the server: `job run` (a PUT with a body), `job status`, the
 *   job list, `alloc logs`;
 * - `alloc fs`: the alloc dir's listing, a file's bytes, `-stat`, `-tail -n`; a path climbing out
 *   of the alloc dir, one through a symlink the task planted, and a secrets file are refused (4xx).
 * ACLs are on (server and client): the client's own `/v1/agent/self` and, with
 * `metrics_require_acl`, `/v1/metrics` ask a server about the caller's token (403 without one); a
 * forwarded route carries the token to the server (an anonymous `alloc fs` is 403, the CLI with
 * the management token in BERTH_TOKEN works). Ends asserting nothing is left running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  freePort,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

let dir: string;
let server: AgentProcess | undefined;
let client: AgentProcess | undefined;
let serverAddr: string;
let clientAddr: string;
let failed = true;
let root = "";

// Writes a file into the shared alloc dir, a secret, and a symlink out of its task dir, then waits.
const SCRIPT = [
  "printf 'line one\\nline two\\nline three\\n' > ../alloc/data.txt",
  "echo hush > secrets/token",
  "ln -s /etc local/escape",
  "echo task-started",
  "while :; do sleep 1; done",
].join("; ");
const JOB = `job "fsdemo" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SCRIPT)}]
      }
    }
  }
}
`;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-clienthttp-")));
  const acl = path.join(dir, "acl.hcl");
  fs.writeFileSync(acl, "acl {\n  enabled = true\n}\n");
  const telemetry = path.join(dir, "telemetry.hcl");
  fs.writeFileSync(telemetry, "telemetry {\n  prometheus_metrics = true\n  metrics_require_acl = true\n}\n");
  const [sport, cport] = [await freePort(), await freePort()];
  serverAddr = `http://127.0.0.1:${sport}`;
  clientAddr = `http://127.0.0.1:${cport}`;
  server = new AgentProcess(
    ["-server", "-data-dir", path.join(dir, "server"), "-http-addr", `127.0.0.1:${sport}`, "-config", acl],
    path.join(dir, "server.log"),
  );
  client = new AgentProcess(
    [
      "-client",
      "-data-dir",
      path.join(dir, "n1"),
      `-servers=127.0.0.1:${sport}`,
      "-node-name=n1",
      "-http-addr",
      `127.0.0.1:${cport}`,
      "-config",
      acl,
      "-config",
      telemetry,
    ],
    path.join(dir, "n1.log"),
  );
  root = await eventually("the ACL bootstrap", async () => {
    const boot = await fetch(`${serverAddr}/v1/acl/bootstrap`, { method: "PUT" });
    return boot.ok ? ((await boot.json()) as { SecretID: string }).SecretID : undefined;
  });
  await eventually("node n1 to be ready", async () => {
    const nodes = await get<{ Name: string; Status: string }[]>(serverAddr, "/v1/nodes");
    return nodes.some((n) => n.Name === "n1" && n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  try {
    await runCli(["job", "stop", "-purge", "fsdemo"], {
      BERTH_ADDR: serverAddr,
      NOMAD_ADDR: "",
      BERTH_TOKEN: root,
    });
    await eventually("the fsdemo task to end", async () => {
      const allocs = await get<{ ClientStatus: string }[]>(serverAddr, "/v1/allocations");
      return allocs.every((a) => a.ClientStatus !== "running") ? true : undefined;
    });
  } finally {
    const codes = [await client?.stop(60_000), await server?.stop(60_000)];
    const left = killProcessGroupsUnder(dir);
    if (failed) {
      process.stderr.write(`client log:\n${logTail(path.join(dir, "n1.log"), 60)}\n`);
      process.stderr.write(`server log:\n${logTail(path.join(dir, "server.log"), 30)}\n`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(codes, [0, 0], "both agents stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

/** The CLI against the client agent, with the management token. */
function cli(...args: string[]) {
  return runCli(args, { BERTH_ADDR: clientAddr, NOMAD_ADDR: "", BERTH_TOKEN: root, NOMAD_TOKEN: "" });
}

/** GET with the management token (or `token`), as JSON; throws on a non-2xx answer. */
async function get<T>(base: string, route: string): Promise<T> {
  const res = await fetch(base + route, { headers: { "X-Nomad-Token": root } });
  const text = await res.text();
  if (!res.ok) throw new Error(`GET ${route}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

const auth = () => ({ headers: { "X-Nomad-Token": root } });

/** The status of an anonymous GET. */
async function anonymous(base: string, route: string): Promise<number> {
  const res = await fetch(base + route);
  await res.arrayBuffer();
  return res.status;
}

test("a client-only agent serves its metrics and health and forwards the rest; alloc logs and alloc fs through it", async () => {
  // Its own routes.
  const health = await eventually("the client to report healthy", async () => {
    const res = await fetch(`${clientAddr}/v1/agent/health`);
    return res.status === 200 ? ((await res.json()) as unknown) : undefined;
  });
  assert.deepEqual(health, { client: { ok: true, message: "ok" } });
  const asServer = await fetch(`${clientAddr}/v1/agent/health?type=server`);
  assert.equal(asServer.status, 500);
  assert.deepEqual(await asServer.json(), { server: { ok: false, message: "server not enabled" } });
  assert.equal(await anonymous(clientAddr, "/v1/metrics?format=prometheus"), 403, "metrics_require_acl");
  assert.equal(await anonymous(clientAddr, "/v1/agent/self"), 403);
  const metrics = await fetch(`${clientAddr}/v1/metrics?format=prometheus`, {
    headers: { "X-Nomad-Token": root },
  });
  assert.equal(metrics.status, 200);
  const text = await metrics.text();
  assert.match(text, /^# TYPE berth_agent_uptime gauge$/m);
  assert.match(text, /^# TYPE berth_client_csi_rpc_calls_total counter$/m, "the client's own registry");
  assert.doesNotMatch(text, /berth_server_/, "not the server's metrics");
  const self = await get<{ config: { ServerEnabled: boolean; ClientEnabled: boolean } }>(
    clientAddr,
    "/v1/agent/self",
  );
  assert.deepEqual([self.config.ServerEnabled, self.config.ClientEnabled], [false, true]);

  // Forwarded: a PUT with a body, a list, a status.
  fs.writeFileSync(path.join(dir, "fsdemo.hcl"), JOB);
  const run = await cli("job", "run", path.join(dir, "fsdemo.hcl"));
  assert.equal(run.code, 0, run.stderr);
  const jobs = await get<{ ID: string }[]>(clientAddr, "/v1/jobs");
  assert.deepEqual(
    jobs.map((j) => j.ID),
    ["fsdemo"],
  );
  const status = await cli("job", "status");
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /^fsdemo\s/m);
  const allocId = await eventually("a running fsdemo alloc", async () => {
    const allocs = await get<{ ID: string; ClientStatus: string }[]>(
      clientAddr,
      "/v1/job/fsdemo/allocations",
    );
    return allocs.find((a) => a.ClientStatus === "running")?.ID;
  });
  await eventually("the task to have started", async () => {
    const logs = await cli("alloc", "logs", allocId);
    return logs.stdout === "task-started\n" ? true : undefined;
  });

  // A forwarded route carries the caller's token: none is refused by the server.
  assert.equal(await anonymous(clientAddr, `/v1/client/fs/ls/${allocId}`), 403);
  assert.equal(await anonymous(clientAddr, "/v1/jobs"), 403);

  // alloc fs: the listing of the alloc dir, a file, its stat, its tail.
  const listing = await cli("alloc", "fs", allocId.slice(0, 8));
  assert.equal(listing.code, 0, listing.stderr);
  assert.match(listing.stdout, /^Mode\s+Size\s+Modified Time\s+Name$/m);
  assert.match(
    listing.stdout,
    /^dtrwxrwxrwx\s.*\salloc\/$/m,
    "the shared dir, sticky (Go's FileMode letters)",
  );
  assert.match(listing.stdout, /^d\S+\s.*\st\/$/m, "the task's dir");
  const cat = await cli("alloc", "fs", allocId, "alloc/data.txt");
  assert.deepEqual([cat.code, cat.stdout], [0, "line one\nline two\nline three\n"], cat.stderr);
  const stat = await cli("alloc", "fs", "-stat", "-H", allocId, "alloc/data.txt");
  assert.equal(stat.code, 0, stat.stderr);
  assert.match(stat.stdout, /^-rw-r--r--\s+29\s+\S+\s+text\/plain; charset=utf-8\s+data\.txt$/m);
  const tail = await cli("alloc", "fs", "-tail", "-n", "1", allocId, "alloc/data.txt");
  assert.equal(tail.stdout, "line three\n");
  const readat = await fetch(
    `${clientAddr}/v1/client/fs/readat/${allocId}?path=alloc/data.txt&offset=5&limit=3`,
    auth(),
  );
  assert.deepEqual([readat.status, await readat.text()], [200, "one"]);

  // Nomad's stream frames, not followed: one frame with the bytes from 5 before the end.
  const stream = await fetch(
    `${clientAddr}/v1/client/fs/stream/${allocId}?path=alloc/data.txt&origin=end&offset=6&follow=false`,
    auth(),
  );
  assert.equal(stream.status, 200);
  const frame = JSON.parse(await stream.text()) as { Offset: number; Data: string; File: string };
  assert.deepEqual(
    [frame.Offset, Buffer.from(frame.Data, "base64").toString(), frame.File],
    [29, "three\n", "alloc/data.txt"],
  );

  // Refused: out of the alloc dir, through the task's symlink, a secret.
  const escape = await cli("alloc", "fs", allocId, "../../");
  assert.equal(escape.code, 1);
  assert.match(escape.stderr, /Path escapes the alloc directory/);
  const viaLink = await fetch(
    `${clientAddr}/v1/client/fs/cat/${allocId}?path=t/local/escape/hostname`,
    auth(),
  );
  assert.equal(viaLink.status, 400, await viaLink.text());
  const link = await cli("alloc", "fs", "-stat", allocId, "t/local/escape");
  assert.match(link.stdout, /^Lrwxrwxrwx\s.*\sescape$/m, "a link is shown, not followed");
  const linkCat = await fetch(`${clientAddr}/v1/client/fs/cat/${allocId}?path=t/local/escape`, auth());
  assert.equal(linkCat.status, 400);
  const secret = await fetch(`${clientAddr}/v1/client/fs/cat/${allocId}?path=t/secrets/token`, auth());
  assert.equal(secret.status, 403);
  assert.match(await secret.text(), /Reading secret file prohibited/);
  const missing = await fetch(`${clientAddr}/v1/client/fs/stat/${allocId}?path=alloc/nope`, auth());
  assert.equal(missing.status, 404);
  failed = false;
});
