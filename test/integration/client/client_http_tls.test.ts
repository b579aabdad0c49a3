/**
 * A client-only agent's HTTP API under TLS (issue 32 item 5), real agents on loopback: with the
 * node's `tls { http = true, verify_https_client = true }` its listener speaks HTTPS with the
 * node's certificate and refuses a caller without one signed by the CA; a forwarded request reaches
 * a server that itself insists on client certificates (`verify_https_client`) and names
 * (`verify_server_hostname`), because the node forwards with its own TLS settings.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  freePort,
  killProcessGroupsUnder,
  logTail,
} from "../../helpers/agent_process.js";
import { makeTestCerts, type TestCerts } from "../../helpers/tls_certs.js";

let dir: string;
let certs: TestCerts;
let server: AgentProcess | undefined;
let client: AgentProcess | undefined;
let serverPort: number;
let clientPort: number;
let failed = true;

function tlsConfig(file: string, own: { cert: string; key: string }): string {
  fs.writeFileSync(
    file,
    `tls {\n  http = true\n  rpc = true\n  verify_https_client = true\n  verify_server_hostname = true\n` +
      `  ca_file = "${certs.ca}"\n  cert_file = "${own.cert}"\n  key_file = "${own.key}"\n}\n`,
  );
  return file;
}

/** GET over HTTPS with the CLI's certificate (or none): the status and body. */
function get(port: number, route: string, withCert = true): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1",
      port,
      path: route,
      ca: fs.readFileSync(certs.ca),
      ...(withCert ? { cert: fs.readFileSync(certs.cli.cert), key: fs.readFileSync(certs.cli.key) } : {}),
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-clienthttp-tls-")));
  certs = await makeTestCerts(dir);
  [serverPort, clientPort] = [await freePort(), await freePort()];
  server = new AgentProcess(
    [
      "-server",
      "-data-dir",
      path.join(dir, "server"),
      "-http-addr",
      `127.0.0.1:${serverPort}`,
      "-config",
      tlsConfig(path.join(dir, "server-tls.hcl"), certs.server),
    ],
    path.join(dir, "server.log"),
  );
  client = new AgentProcess(
    [
      "-client",
      "-data-dir",
      path.join(dir, "n1"),
      `-servers=127.0.0.1:${serverPort}`,
      "-node-name=n1",
      "-http-addr",
      `127.0.0.1:${clientPort}`,
      "-config",
      tlsConfig(path.join(dir, "client-tls.hcl"), certs.client),
    ],
    path.join(dir, "n1.log"),
  );
});

after(async () => {
  const codes = [await client?.stop(60_000), await server?.stop(60_000)];
  const left = killProcessGroupsUnder(dir);
  if (failed) {
    process.stderr.write(`client log:\n${logTail(path.join(dir, "n1.log"), 40)}\n`);
    process.stderr.write(`server log:\n${logTail(path.join(dir, "server.log"), 20)}\n`);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(codes, [0, 0], "both agents stopped cleanly");
  assert.deepEqual(left, []);
});

test("the node's API is HTTPS with its own settings, and forwards over mTLS to its server", async () => {
  const health = await eventually("the node to be connected", async () => {
    const r = await get(clientPort, "/v1/agent/health");
    return r.status === 200 ? r.body : undefined;
  });
  assert.deepEqual(JSON.parse(health), { client: { ok: true, message: "ok" } });
  const nodes = await get(clientPort, "/v1/nodes");
  assert.equal(nodes.status, 200, nodes.body);
  assert.deepEqual(
    (JSON.parse(nodes.body) as { Name: string }[]).map((n) => n.Name),
    ["n1"],
    "forwarded to the server, which asks for a client certificate",
  );
  await assert.rejects(get(clientPort, "/v1/agent/health", false), "no certificate: the handshake fails");
  failed = false;
});
