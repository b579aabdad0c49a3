/**
 * Mutual TLS on the server's one listener (issue 12), through the real parts: an in-process server
 * on loopback with HTTPS, berth's API client (the CLI's transport), raw WebSockets on the agent RPC
 * path, and the node agent's own dialer (ServerConnection) registering a node.
 */
import { randomUUID } from "node:crypto";
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { WebSocket, type ClientOptions } from "ws";
import { clientTls, serverTls, type TlsSetting } from "../../../src/agent/config_tls.js";
import { ApiClient } from "../../../src/api/index.js";
import { ServerConnection } from "../../../src/client/rpc/server_conn.js";
import { createLogger, nullLogger } from "../../../src/internal/log.js";
import { RpcPeer } from "../../../src/internal/rpc/peer.js";
import { Server } from "../../../src/server/server.js";
import type { ClientMethods, ServerMethods } from "../../../src/structs/rpc.js";
import type { ConnLimits } from "../../../src/server/http/conn_limits.js";
import { makeNode } from "../../builders/node.js";
import { eventually } from "../../helpers/agent_process.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { makeTestCerts, type CertFiles, type TestCerts } from "../../helpers/tls_certs.js";
import fs from "node:fs";
import https from "node:https";

let certs: TestCerts;

before(async () => {
  certs = await makeTestCerts(tempDir("berth-tls-"));
});

/** A started in-memory server with the agent config `tls` block `t`; stopped after the suite. */
async function startTlsServer(
  t: TlsSetting,
  limits: Partial<ConnLimits> = {},
): Promise<{ server: Server; base: string }> {
  const tls = serverTls({ http: true, caFile: certs.ca, ...t });
  assert.ok(tls);
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
    tls,
    limits,
  });
  await server.start();
  return { server, base: server.httpAddress };
}

const pem = (f: CertFiles) => ({ cert: fs.readFileSync(f.cert), key: fs.readFileSync(f.key) });

/** Opens a WebSocket on the agent RPC path: "open", or the HTTP status / error that refused it. */
function dialRpc(
  base: string,
  opts: ClientOptions,
): Promise<{ ws?: WebSocket; status?: number; body?: string; code?: string; error?: string }> {
  const ws = new WebSocket(base.replace("https://", "wss://") + "/v1/agent/rpc", {
    ca: fs.readFileSync(certs.ca),
    ...opts,
  });
  return new Promise((resolve) => {
    ws.once("open", () => resolve({ ws }));
    ws.once("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (d: Buffer) => (body += d.toString()));
      res.on("end", () =>
        resolve({ status: res.statusCode, body, code: String(res.headers["x-berth-error-code"]) }),
      );
    });
    ws.once("error", (err) => resolve({ error: err.message }));
  });
}

describe("verify_https_client: the handshake refuses clients the CA did not sign", () => {
  let server: Server;
  let base: string;
  before(async () => {
    ({ server, base } = await startTlsServer({
      rpc: true,
      verifyHttpsClient: true,
      verifyServerHostname: true,
      certFile: certs.server.cert,
      keyFile: certs.server.key,
    }));
  });
  after(() => server.stop());

  it("serves the API over HTTPS to a client with the CLI certificate", async () => {
    assert.match(base, /^https:\/\/127\.0\.0\.1:\d+$/);
    const api = new ApiClient({
      address: base,
      tls: { caCert: certs.ca, clientCert: certs.cli.cert, clientKey: certs.cli.key },
    });
    assert.deepEqual(await api.nodes.list(), []);
  });

  it("refuses an HTTPS client without a certificate, or with a foreign CA's", async () => {
    const none = new ApiClient({ address: base, tls: { caCert: certs.ca } });
    await assert.rejects(none.nodes.list(), (err: Error) => {
      assert.equal(err.name, "ConnectionError", err.message);
      assert.match(err.message, /cannot reach berth at https:/);
      return true;
    });
    const foreign = new ApiClient({
      address: base,
      tls: { caCert: certs.ca, clientCert: certs.foreignClient.cert, clientKey: certs.foreignClient.key },
    });
    await assert.rejects(foreign.nodes.list(), { name: "ConnectionError" });
  });

  it("the client refuses a server its CA did not sign, unless told to skip the check", async () => {
    const cli = { clientCert: certs.cli.cert, clientKey: certs.cli.key };
    const wrongCa = new ApiClient({ address: base, tls: { caCert: certs.foreignCa, ...cli } });
    await assert.rejects(
      wrongCa.nodes.list(),
      /cannot reach berth at https:.*(self[- ]signed|unable to verify|certificate)/i,
    );
    const skip = new ApiClient({ address: base, tls: { insecure: true, ...cli } });
    assert.deepEqual(await skip.nodes.list(), []);
    // -tls-server-name: the name the certificate must carry, whatever the address says.
    const named = new ApiClient({
      address: base,
      tls: { caCert: certs.ca, serverName: "server.global.nomad", ...cli },
    });
    assert.deepEqual(await named.nodes.list(), []);
    const misnamed = new ApiClient({
      address: base,
      tls: { caCert: certs.ca, serverName: "db.example.com", ...cli },
    });
    await assert.rejects(misnamed.nodes.list(), /db\.example\.com/);
  });

  it("refuses a node agent with a foreign CA's certificate at the handshake", async () => {
    const r = await dialRpc(base, pem(certs.foreignClient));
    assert.equal(r.ws, undefined, "no connection");
    assert.ok(r.error, `refused at the TLS layer: ${JSON.stringify(r)}`);
  });
});

describe("rpc = true: the agent RPC path takes only the CA's agent certificates; the API stays non-mutual", () => {
  let server: Server;
  let base: string;
  before(async () => {
    ({ server, base } = await startTlsServer({
      rpc: true,
      verifyServerHostname: true,
      certFile: certs.server.cert,
      keyFile: certs.server.key,
    }));
  });
  after(() => server.stop());

  it("answers the API to an HTTPS client without a certificate (Nomad's verify_https_client = false)", async () => {
    const api = new ApiClient({ address: base, tls: { caCert: certs.ca } });
    assert.deepEqual(await api.nodes.list(), []);
  });

  it("refuses RPC upgrades with 403 ERR_PERMISSION_DENIED: no certificate, a foreign CA's, a CLI certificate", async () => {
    const none = await dialRpc(base, {});
    assert.equal(none.status, 403, JSON.stringify(none));
    assert.equal(none.code, "ERR_PERMISSION_DENIED");
    assert.match(none.body ?? "", /requires a client certificate signed by the cluster's CA/);

    const foreign = await dialRpc(base, pem(certs.foreignClient));
    assert.equal(foreign.status, 403, JSON.stringify(foreign));
    assert.match(foreign.body ?? "", /client certificate is not trusted/);

    const cli = await dialRpc(base, pem(certs.cli));
    assert.equal(cli.status, 403, JSON.stringify(cli));
    assert.match(
      cli.body ?? "",
      /certificate is for cli\.global\.nomad.*not client\.global\.nomad or server\.global\.nomad \(verify_server_hostname\)/,
    );
  });

  it("takes a node agent with a client certificate: it registers", async () => {
    const r = await dialRpc(base, pem(certs.client));
    assert.ok(r.ws, JSON.stringify(r));
    const peer = new RpcPeer<ClientMethods, ServerMethods>(r.ws, nullLogger);
    try {
      await peer.call("Node.Register", { Node: { ...makeNode("tls-node"), SecretID: randomUUID() } });
      const api = new ApiClient({ address: base, tls: { caCert: certs.ca } });
      assert.deepEqual(
        (await api.nodes.list()).map((n) => n.ID),
        ["tls-node"],
      );
    } finally {
      peer.close();
    }
  });

  it("the node agent's own dialer with a foreign CA's certificate never registers", async () => {
    const lines: string[] = [];
    const log = createLogger({ level: "warn", sink: { write: (l) => lines.push(l) } });
    let registered = false;
    const conn = new ServerConnection({
      servers: [base],
      log,
      installHandlers: () => undefined,
      onConnect: async () => {
        registered = true;
      },
      tls: clientTls({
        rpc: true,
        caFile: certs.ca,
        certFile: certs.foreignClient.cert,
        keyFile: certs.foreignClient.key,
      })!,
    });
    conn.start();
    try {
      await eventually("the dialer to report the refusal", async () =>
        lines.some((l) => l.includes("the server refused this node") && l.includes("certificate"))
          ? true
          : undefined,
      );
      assert.equal(registered, false);
      assert.equal(conn.connected, false);
    } finally {
      await conn.stop();
    }
  });
});

describe("verify_server_hostname on the node agent", () => {
  let server: Server;
  let base: string;
  before(async () => {
    // Signed by the right CA, but a client's certificate: not a server's name.
    ({ server, base } = await startTlsServer({
      rpc: true,
      certFile: certs.client.cert,
      keyFile: certs.client.key,
    }));
  });
  after(() => server.stop());

  function dialer(verifyServerHostname: boolean, lines: string[]) {
    let registered = false;
    const conn = new ServerConnection({
      servers: [base],
      log: createLogger({ level: "info", sink: { write: (l) => lines.push(l) } }),
      installHandlers: () => undefined,
      onConnect: async () => {
        registered = true;
      },
      tls: clientTls({
        rpc: true,
        caFile: certs.ca,
        certFile: certs.client.cert,
        keyFile: certs.client.key,
        verifyServerHostname,
      })!,
    });
    return { conn, registered: () => registered };
  }

  it("refuses a server whose certificate does not name server.global.nomad", async () => {
    const lines: string[] = [];
    const d = dialer(true, lines);
    d.conn.start();
    try {
      await eventually("the dialer to refuse the server", async () =>
        lines.some((l) => l.includes("cannot connect to server") && l.includes("server.global.nomad"))
          ? true
          : undefined,
      );
      assert.equal(d.registered(), false, "never got as far as registering");
    } finally {
      await d.conn.stop();
    }
  });

  it("without it, checks the chain only (as Nomad) and connects", async () => {
    const lines: string[] = [];
    const d = dialer(false, lines);
    d.conn.start();
    try {
      await eventually("the dialer to connect", async () => (d.registered() ? true : undefined));
    } finally {
      await d.conn.stop();
    }
  });
});

describe("connection limits still hold behind TLS", () => {
  let server: Server;
  let base: string;
  before(async () => {
    ({ server, base } = await startTlsServer(
      { rpc: true, certFile: certs.server.cert, keyFile: certs.server.key },
      { rpcMaxConnsPerClient: 1, rpcHandshakeTimeoutMs: 1_500 },
    ));
  });
  after(() => server.stop());

  it("a second agent RPC connection from one address is refused 429; a silent one is closed", async () => {
    const first = await dialRpc(base, pem(certs.client));
    assert.ok(first.ws, JSON.stringify(first));
    try {
      const second = await dialRpc(base, pem(certs.client));
      assert.equal(second.status, 429, JSON.stringify(second));
      assert.equal(second.code, "ERR_TOO_MANY_CONNECTIONS");
      // The first sends nothing: the handshake timeout closes it.
      const closed = await new Promise<number>((resolve) => first.ws!.once("close", (code) => resolve(code)));
      assert.ok(closed > 0);
    } finally {
      first.ws.terminate();
    }
  });
});

describe("http = true alone: one-way HTTPS", () => {
  let server: Server;
  let base: string;
  before(async () => {
    ({ server, base } = await startTlsServer({ certFile: certs.server.cert, keyFile: certs.server.key }));
  });
  after(() => server.stop());

  it("a node agent without a certificate of its own dials wss:// checking the server against ca_file", async () => {
    let registered = false;
    const conn = new ServerConnection({
      servers: [base],
      log: nullLogger,
      installHandlers: () => undefined,
      onConnect: async (peer) => {
        await peer.call("Node.Register", { Node: { ...makeNode("one-way"), SecretID: randomUUID() } });
        registered = true;
      },
      tls: clientTls({ http: true, caFile: certs.ca })!,
    });
    conn.start();
    try {
      await eventually("the node to register", async () => (registered ? true : undefined));
      const api = new ApiClient({ address: base, tls: { caCert: certs.ca } });
      assert.deepEqual(
        (await api.nodes.list()).map((n) => n.ID),
        ["one-way"],
      );
    } finally {
      await conn.stop();
    }
  });
});

describe('tls_min_version = "tls13"', () => {
  let server: Server;
  let base: string;
  before(async () => {
    ({ server, base } = await startTlsServer({
      certFile: certs.server.cert,
      keyFile: certs.server.key,
      minVersion: "TLSv1.3",
    }));
  });
  after(() => server.stop());

  it("refuses a TLS 1.2 client and serves a TLS 1.3 one", async () => {
    const get = (maxVersion: "TLSv1.2" | "TLSv1.3") =>
      new Promise<number>((resolve, reject) => {
        const req = https.get(
          `${base}/v1/nodes`,
          { ca: fs.readFileSync(certs.ca), maxVersion, agent: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.once("error", reject);
      });
    await assert.rejects(get("TLSv1.2"), /version|protocol/i);
    assert.equal(await get("TLSv1.3"), 200);
  });
});
