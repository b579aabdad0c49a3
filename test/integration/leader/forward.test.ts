/**
 * A server → node call for a node connected to another server is forwarded there and answered
 * (result and error code) as a local call would be; a forward without the cluster secret, or with
 * a wrong one, is refused (403 ERR_PERMISSION_DENIED) and never reaches the node.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import type { Server } from "../../../src/server/server.js";
import type { NodeConnections } from "../../../src/server/clientconn/connections.js";
import { BerthError, isBerthError } from "../../../src/structs/errors.js";
import { CLUSTER_SECRET_HEADER, FORWARD_PATH } from "../../../src/server/leader/forward.js";
import { makeNode } from "../../builders/node.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { eventually } from "../../helpers/agent_process.js";
import { connectAgent, type Call } from "../server/fake_agent.js";
import { cluster } from "./servers.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

let etcd: EtcdServer | undefined;
before(async () => {
  if (!skip) etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

// The node connections of the parts a started server holds (server.ts `running`).
const connsOf = (s: Server) => (s as unknown as { running: { conns: NodeConnections } }).running.conns;

test(
  "a node call is forwarded to the server holding the node's connection; a forward without the secret is refused",
  { skip },
  async () => {
    const [a, b] = (await cluster(2, etcd!.endpoint)) as [Server, Server];
    const calls: Call[] = [];
    const peer = await connectAgent(b.httpAddress, {
      "ClientCSI.ControllerValidateVolume": async (params) => {
        calls.push({ method: "validate", params });
        return {};
      },
      "ClientCSI.ControllerPublishVolume": async (params) => {
        calls.push({ method: "publish", params });
        if (params.ExternalVolumeID === "busy")
          throw new BerthError("ERR_CSI_ABORTED", "volume busy elsewhere");
        return { PublishContext: { dev: "/dev/fwd" } };
      },
    });
    try {
      await peer.call("Node.Register", { Node: makeNode("n1") });
      await eventually(
        "server a to see n1 through the directory",
        () => Promise.resolve(connsOf(a).isConnected("n1") || undefined),
        10_000,
        20,
      );

      const publish = (ExternalVolumeID: string) =>
        connsOf(a).call("n1", "ClientCSI.ControllerPublishVolume", {
          PluginID: "p1",
          ExternalVolumeID,
          ExternalNodeID: "ext-n1",
          Capability: { AccessMode: "single-node-writer", AttachmentMode: "file-system" },
          MountOptions: null,
          ReadOnly: false,
          Secrets: {},
          VolumeContext: {},
        } as never);
      const published = await publish("v1");
      assert.deepEqual(published, { PublishContext: { dev: "/dev/fwd" } });
      assert.deepEqual(
        calls.map((c): [string, string] => [c.method, String(c.params.ExternalVolumeID)]),
        [["publish", "v1"]],
      );
      await assert.rejects(
        publish("busy"),
        (err: unknown) =>
          isBerthError(err) && err.code === "ERR_CSI_ABORTED" && /volume busy elsewhere/.test(err.message),
      );

      const forward = (headers: Record<string, string>) =>
        fetch(b.httpAddress + FORWARD_PATH, {
          method: "POST",
          headers: { "Content-Type": "application/json", ...headers },
          body: JSON.stringify({ NodeID: "n1", Method: "ClientCSI.ControllerValidateVolume", Params: {} }),
        });
      const attempts: Record<string, string>[] = [
        {},
        { [CLUSTER_SECRET_HEADER]: "guessed" },
        { [CLUSTER_SECRET_HEADER]: "" },
      ];
      for (const headers of attempts) {
        const res = await forward(headers);
        assert.equal(res.status, 403, JSON.stringify(headers));
        assert.equal(res.headers.get("x-berth-error-code"), "ERR_PERMISSION_DENIED");
        assert.match(await res.text(), /cluster secret/);
      }
      const get = await fetch(b.httpAddress + FORWARD_PATH);
      assert.equal(get.status, 405);
      assert.equal(
        calls.filter((c) => c.method === "validate").length,
        0,
        "no refused forward reached the node",
      );
    } finally {
      peer.close();
      await a.stop();
      await b.stop();
    }
  },
);
