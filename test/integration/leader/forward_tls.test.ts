/**
 * Forwarding with TLS on (`tls { rpc = true, verify_server_hostname = true }`): servers forward to
 * each other over HTTPS with their server certificate; a peer holding the cluster secret but only
 * a client certificate (client.global.nomad) is refused, and so is one with the server
 * certificate but no secret: both proofs are needed.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import https from "node:https";
import { WebSocket } from "ws";
import type { Server } from "../../../src/server/server.js";
import type { NodeConnections } from "../../../src/server/clientconn/connections.js";
import { serverTls } from "../../../src/agent/config_tls.js";
import { openEtcd } from "../../../src/server/leader/cluster.js";
import { haKeys } from "../../../src/server/leader/keys.js";
import { CLUSTER_SECRET_HEADER, FORWARD_PATH } from "../../../src/server/leader/forward.js";
import { RpcPeer } from "../../../src/internal/rpc/peer.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods, ServerMethods } from "../../../src/structs/rpc.js";
import { makeNode } from "../../builders/node.js";
import { makeTestCerts, type CertFiles, type TestCerts } from "../../helpers/tls_certs.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { eventually } from "../../helpers/agent_process.js";
import { fakeNodeSecret } from "../server/fake_agent.js";
import { cluster, lastPrefix } from "./servers.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

let etcd: EtcdServer | undefined;
let certs: TestCerts;
before(async () => {
  if (skip) return;
  etcd = await startEtcd();
  certs = await makeTestCerts(tempDir("berth-fwd-tls-"));
});
after(async () => {
  await etcd?.stop();
});

// The node connections of the parts a started server holds (server.ts `running`).
const connsOf = (s: Server) => (s as unknown as { running: { conns: NodeConnections } }).running.conns;

function post(
  base: string,
  who: CertFiles,
  headers: Record<string, string>,
): Promise<{ status: number; text: string }> {
  const body = JSON.stringify({ NodeID: "n1", Method: "ClientCSI.ControllerValidateVolume", Params: {} });
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(FORWARD_PATH, base),
      {
        method: "POST",
        ca: fs.readFileSync(certs.ca),
        cert: fs.readFileSync(who.cert),
        key: fs.readFileSync(who.key),
        headers: { "Content-Type": "application/json", ...headers },
      },
      (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

test("with TLS, a forward needs a server certificate and the cluster secret", { skip }, async () => {
  const tls = serverTls({
    http: true,
    rpc: true,
    verifyServerHostname: true,
    caFile: certs.ca,
    certFile: certs.server.cert,
    keyFile: certs.server.key,
  });
  assert.ok(tls);
  const [a, b] = (await cluster(2, etcd!.endpoint, 60_000, { tls })) as [Server, Server];
  const validated: unknown[] = [];
  const ws = new WebSocket(b.httpAddress.replace("https://", "wss://") + "/v1/agent/rpc", {
    ca: fs.readFileSync(certs.ca),
    cert: fs.readFileSync(certs.client.cert),
    key: fs.readFileSync(certs.client.key),
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const peer = new RpcPeer<ClientMethods, ServerMethods>(ws, nullLogger);
  peer.handle("ClientCSI.ControllerValidateVolume", async (req) => {
    validated.push(req);
    return {};
  });
  const client = openEtcd([etcd!.endpoint]);
  try {
    await peer.call("Node.Register", { Node: { ...makeNode("n1"), SecretID: fakeNodeSecret("n1") } });
    await eventually(
      "a to see n1",
      () => Promise.resolve(connsOf(a).isConnected("n1") || undefined),
      10_000,
      20,
    );
    await connsOf(a).call("n1", "ClientCSI.ControllerValidateVolume", { PluginID: "p1" } as never);
    assert.equal(validated.length, 1, "forwarded over HTTPS with the server certificate");

    const secret = (await client.get(haKeys(lastPrefix).clusterSecret).string()) ?? "";
    assert.notEqual(secret, "");
    const asClient = await post(b.httpAddress, certs.client, { [CLUSTER_SECRET_HEADER]: secret });
    assert.equal(asClient.status, 403);
    assert.match(asClient.text, /only a server certificate/);
    const noSecret = await post(b.httpAddress, certs.server, {});
    assert.equal(noSecret.status, 403);
    assert.match(noSecret.text, /cluster secret/);
    assert.equal(validated.length, 1, "neither refused forward reached the node");
    const both = await post(b.httpAddress, certs.server, { [CLUSTER_SECRET_HEADER]: secret });
    assert.equal(both.status, 200, both.text);
    assert.equal(validated.length, 2);
  } finally {
    client.close();
    peer.close();
    await a.stop();
    await b.stop();
  }
});
