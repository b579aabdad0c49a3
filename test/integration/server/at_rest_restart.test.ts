/**
 * Secrets at rest through the whole server: an in-process server with its state in a real SQLite
 * file, a fake node agent on the real RPC socket running a controller plugin. A volume created and
 * one registered with secrets: the plugin's CreateVolume gets them, the state files never hold them,
 * no API answer shows them; after a server restart on the same data dir the plugin's
 * ControllerPublishVolume (a claim) still gets them whole.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { Server } from "../../../src/server/server.js";
import { nullLogger } from "../../../src/internal/log.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { tempDir } from "../../helpers/temp_dir.js";
import { connectAgent, http, type Call } from "./fake_agent.js";

const CREATE_SECRET = "create-pw-4d1e0";
const REGISTER_SECRET = "register-tok-b7a93";

async function startServer(dataDir: string): Promise<Server> {
  const server = new Server({ dataDir, httpAddr: "127.0.0.1:0", log: nullLogger, heartbeatTtlMs: 60_000 });
  await server.start();
  return server;
}

async function node(base: string, calls: Call[]) {
  const peer = await connectAgent(base, {
    "ClientCSI.ControllerCreateVolume": async (p) => {
      calls.push({ method: "create", params: p });
      return {
        ExternalVolumeID: `ext-${p.Name}`,
        CapacityBytes: p.CapacityMin,
        VolumeContext: {},
        Topologies: [],
      };
    },
    // Registration validates the storage with the plugin; the request carries the secrets too.
    "ClientCSI.ControllerValidateVolume": async (p) => (calls.push({ method: "validate", params: p }), {}),
    "ClientCSI.ControllerPublishVolume": async (p) => {
      calls.push({ method: "publish", params: p });
      return { PublishContext: {} };
    },
    "ClientCSI.ControllerUnpublishVolume": async (p) => (calls.push({ method: "unpublish", params: p }), {}),
  });
  await peer.call("Node.Register", {
    Node: makeNode("n1", {
      CSIControllerPlugins: { p1: controllerInfo("p1", true) },
      CSINodePlugins: { p1: nodePluginInfo("p1", { RequiresControllerPlugin: true }, { ID: "ext-n1" }) },
    }),
  });
  return peer;
}

const caps = [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }];

function filesBytes(dir: string): Buffer {
  return Buffer.concat(
    fs
      .readdirSync(dir)
      .map((n) => path.join(dir, n))
      .filter((p) => fs.statSync(p).isFile())
      .map((p) => fs.readFileSync(p)),
  );
}

test("volume secrets: to the plugin, never in the state files or answers, and to ControllerPublish after a restart", async () => {
  const dataDir = tempDir("berth-at-rest-srv-");
  const calls: Call[] = [];
  let server: Server | undefined = await startServer(dataDir);
  let peer = await node(server.httpAddress, calls);
  try {
    let base = server.httpAddress;
    const created = await http(base, "PUT", "/v1/volume/csi/vol1/create", {
      Volumes: [
        {
          ID: "vol1",
          Name: "vol1",
          PluginID: "p1",
          RequestedCapabilities: caps,
          Secrets: { pw: CREATE_SECRET },
        },
      ],
    });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(calls.find((c) => c.method === "create")?.params.Secrets, { pw: CREATE_SECRET });
    const registered = await http(base, "PUT", "/v1/volumes", {
      Volumes: [
        {
          ID: "vol2",
          Name: "vol2",
          PluginID: "p1",
          ExternalID: "ext-vol2",
          RequestedCapabilities: caps,
          Secrets: { tok: REGISTER_SECRET },
        },
      ],
    });
    assert.equal(registered.status, 200, registered.text);
    assert.deepEqual(calls.find((c) => c.method === "validate")?.params.Secrets, { tok: REGISTER_SECRET });
    for (const route of ["/v1/volume/csi/vol1", "/v1/volume/csi/vol2", "/v1/volumes?type=csi"]) {
      const r = await http(base, "GET", route);
      assert.ok(!r.text.includes(CREATE_SECRET) && !r.text.includes(REGISTER_SECRET), route);
    }

    peer.close();
    await server.stop();
    server = undefined;
    const bytes = filesBytes(dataDir);
    assert.equal(bytes.includes(CREATE_SECRET), false, "created volume's secret not at rest");
    assert.equal(bytes.includes(REGISTER_SECRET), false, "registered volume's secret not at rest");

    server = await startServer(dataDir);
    base = server.httpAddress;
    peer = await node(base, calls);
    const job = {
      ID: "j",
      TaskGroups: [
        {
          Name: "g",
          Volumes: {
            data: {
              Type: "csi",
              Source: "vol1",
              AccessMode: "single-node-writer",
              AttachmentMode: "file-system",
            },
          },
          Tasks: [{ Name: "t", Driver: "exec", VolumeMounts: [{ Volume: "data", Destination: "/data" }] }],
        },
      ],
    };
    const reg = await http(base, "PUT", "/v1/jobs", { Job: job });
    assert.equal(reg.status, 200, reg.text);
    const allocs = await http(base, "GET", "/v1/job/j/allocations");
    const allocId: string = allocs.json[0].ID;
    await peer.call("CSIVolume.Claim", {
      VolumeID: "vol1",
      Namespace: "default",
      AllocationID: allocId,
      NodeID: "n1",
      Mode: "write",
      AccessMode: "single-node-writer",
      AttachmentMode: "file-system",
    });
    const publish = calls.find((c) => c.method === "publish");
    assert.deepEqual(
      publish?.params.Secrets,
      { pw: CREATE_SECRET },
      "the restarted server opened the sealed secret",
    );
  } finally {
    peer.close();
    await server?.stop();
  }
});
