/**
 * Client-side input limits of the server's listener (issue 10, "Retry storms": ~20,000 idle
 * connections from one client made the API unreachable; a request could take 300 s to arrive).
 *
 * With real agent processes (`-server` + one `-client` node A) and a config file
 * `limits { http_max_conns_per_client = 4, rpc_handshake_timeout = "1s" }`:
 * - one client (127.0.0.3) holding 4 idle connections gets a 429 with ERR_TOO_MANY_CONNECTIONS on
 *   the next one, and no route runs for it; another client (127.0.0.2) is answered meanwhile; once
 *   one idle connection closes the first client is answered again;
 * - the node agent registered over the RPC upgrade under those limits; a peer that upgrades to the
 *   agent RPC and sends nothing is closed by the handshake timeout.
 * With an in-process Server and short request timeouts: a connection that sends nothing, or only
 * part of its headers, is answered 408 and closed; a blocking query waiting longer than the
 * request timeout is still answered.
 * No timing is asserted: each test waits for an outcome (under the test's own timeout).
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { WebSocket } from "ws";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import {
  eventually,
  killProcessesUnder,
  startCluster,
  type AgentProcess,
} from "../../helpers/agent_process.js";
import { rawConnect, rawGet, type RawConn } from "./conn_client.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-connlim-"));
let port: number;
let server: AgentProcess | undefined;
let clients: Map<string, AgentProcess> | undefined;
let completed = 0;

before(async () => {
  const cfg = path.join(dir, "limits.hcl");
  fs.writeFileSync(cfg, 'limits {\n  http_max_conns_per_client = 4\n  rpc_handshake_timeout = "1s"\n}\n');
  const c = await startCluster(dir, ["A"], 30_000, ["-config", cfg]);
  ({ server, clients } = c);
  port = Number(new URL(c.addr).port);
});

after(() => {
  for (const c of clients?.values() ?? []) c.kill();
  server?.kill();
  killProcessesUnder(dir);
  if (completed < 3) {
    for (const f of ["server.log", "a.log"]) {
      const p = path.join(dir, f);
      if (fs.existsSync(p))
        process.stderr.write(`--- ${f} ---\n${fs.readFileSync(p, "utf8").slice(-6000)}\n`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test(
  "one client over http_max_conns_per_client is refused with a 429; other clients are answered",
  { timeout: 60_000 },
  async () => {
    const idle: RawConn[] = [];
    try {
      for (let i = 0; i < 4; i++) idle.push(await rawConnect(port, "127.0.0.3"));
      const refused = await rawGet(port, "127.0.0.3", "/v1/nodes");
      assert.equal(refused.status, 429, refused.head);
      assert.match(refused.head, /X-Berth-Error-Code: ERR_TOO_MANY_CONNECTIONS/i);

      const other = await rawGet(port, "127.0.0.2", "/v1/nodes");
      assert.equal(other.status, 200, other.head);
      assert.match(other.body, /"Name":"A"/);

      // The held connections are still usable: the limit counts them, it does not break them.
      idle[0]!.socket.write("GET /v1/nodes HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      assert.match(await idle[0]!.closed, /^HTTP\/1\.1 200 /);
      // One closed, so the client is below its limit again (once the server saw the close).
      await eventually("the first client to be answered again", async () => {
        const r = await rawGet(port, "127.0.0.3", "/v1/nodes");
        return r.status === 200 ? r : undefined;
      });
    } finally {
      for (const c of idle) c.socket.destroy();
    }
    completed++;
  },
);

test(
  "an agent RPC peer that upgrades and says nothing is closed after rpc_handshake_timeout",
  { timeout: 60_000 },
  async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/agent/rpc`, { localAddress: "127.0.0.2" });
    ws.on("error", () => undefined);
    const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("unexpected-response", () => reject(new Error("upgrade refused")));
    });
    await closed;
    // The real node agent, which registers at once, kept its connection and stays ready.
    const nodes = (await (await fetch(`http://127.0.0.1:${port}/v1/nodes`)).json()) as {
      Name: string;
      Status: string;
    }[];
    assert.deepEqual(
      nodes.map((n) => [n.Name, n.Status]),
      [["A", "ready"]],
    );
    completed++;
  },
);

test("the agents stop cleanly under the limits", { timeout: 60_000 }, async () => {
  for (const c of clients!.values()) assert.equal(await c.stop(30_000), 0, "client agent exit code");
  assert.equal(await server!.stop(30_000), 0, "server agent exit code");
  assert.deepEqual(killProcessesUnder(dir), [], "no process outlived the agents");
  completed++;
});

test(
  "a silent or trickling connection gets a 408 and is closed; a long blocking query is still answered",
  { timeout: 30_000 },
  async () => {
    const s = new Server({
      dataDir: null,
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
      limits: { headersTimeoutMs: 300, requestTimeoutMs: 600 },
    });
    await s.start();
    try {
      const p = Number(new URL(s.httpAddress).port);
      const silent = await rawConnect(p, "127.0.0.2");
      const partial = await rawConnect(p, "127.0.0.2");
      partial.socket.write("GET /v1/nodes HTTP/1.1\r\nHo");
      assert.match(await silent.closed, /^HTTP\/1\.1 408 /);
      assert.match(await partial.closed, /^HTTP\/1\.1 408 /);

      // Waits 1.5 s for a change that never comes — past the 0.6 s request timeout — and is answered.
      const index = (await fetch(`${s.httpAddress}/v1/jobs`)).headers.get("x-nomad-index");
      const polled = await rawGet(p, "127.0.0.2", `/v1/jobs?index=${index}&wait=1500ms`);
      assert.equal(polled.status, 200, polled.head);
      assert.match(polled.head, new RegExp(`X-Nomad-Index: ${index}`, "i"));
    } finally {
      await s.stop();
    }
  },
);

test(
  "rpc_max_conns_per_client: an upgrade past the limit is refused with a 429, HTTP from that address still served",
  { timeout: 30_000 },
  async () => {
    const s = new Server({
      dataDir: null,
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
      limits: { rpcMaxConnsPerClient: 1, rpcHandshakeTimeoutMs: 0 },
    });
    await s.start();
    const open: WebSocket[] = [];
    try {
      const url = `${s.httpAddress.replace("http://", "ws://")}/v1/agent/rpc`;
      const connect = (from: string) =>
        new Promise<{ ws: WebSocket; status: number }>((resolve) => {
          const ws = new WebSocket(url, { localAddress: from });
          open.push(ws);
          ws.on("error", () => undefined);
          ws.once("open", () => resolve({ ws, status: 101 }));
          ws.once("unexpected-response", (_req, res) => resolve({ ws, status: res.statusCode ?? 0 }));
        });
      assert.equal((await connect("127.0.0.2")).status, 101);
      assert.equal(
        (await connect("127.0.0.2")).status,
        429,
        "a second agent connection from the same address",
      );
      assert.equal((await connect("127.0.0.3")).status, 101, "another address has its own count");
      const p = Number(new URL(s.httpAddress).port);
      assert.equal((await rawGet(p, "127.0.0.2", "/v1/nodes")).status, 200, "HTTP is counted apart");
    } finally {
      for (const ws of open) ws.terminate();
      await s.stop();
    }
  },
);
