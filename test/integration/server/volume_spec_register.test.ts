/**
 * A Nomad volume spec registered through the real CLI command against an in-process server, with a
 * fake node agent running the plugin's controller: a spec without external_id is registered (as
 * Nomad's server takes it), the controller is asked about the volume's own ID (Nomad's RemoteID),
 * and re-registering the same spec keeps the external ID the volume already has.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { volumeRegister } from "../../../src/cli/commands/volume_register.js";
import { captureIO } from "../../fakes/command_io.js";
import { makeNode } from "../../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../../builders/plugin_info.js";
import { connectAgent, http, startServer } from "./fake_agent.js";

const spec = (id: string, extra = "") => `type = "csi"
id = "${id}", name = "${id}", plugin_id = "p1"
capacity_min = ""
capability { access_mode = "single-node-writer", attachment_mode = "file-system" }
${extra}`;

test("volume register: a spec without external_id is registered under the volume's ID; an update keeps the stored one", async (t) => {
  const base = await startServer(t);
  const validated: string[] = [];
  const agent = await connectAgent(base, {
    "ClientCSI.ControllerValidateVolume": async (p: { ExternalVolumeID: string }) => {
      validated.push(p.ExternalVolumeID);
      return {};
    },
  });
  t.after(() => agent.close());
  await agent.call("Node.Register", {
    Node: makeNode("A", {
      CSIControllerPlugins: { p1: controllerInfo("p1", true) },
      CSINodePlugins: { p1: nodePluginInfo("p1") },
    }),
  });

  const register = async (text: string) => {
    const o = captureIO(base, { "v.hcl": text });
    const code = await volumeRegister.run(volumeRegister.parse(["v.hcl"]), o);
    return { code, out: o.out, err: o.err };
  };

  assert.deepEqual(await register(spec("legacy")), { code: 0, out: ['Volume "legacy" registered'], err: [] });
  assert.deepEqual(validated, ["legacy"]);
  const vol = await http(base, "GET", "/v1/volume/csi/legacy?claims=true");
  assert.equal(vol.status, 200, vol.text);
  assert.equal(vol.json.ExternalID, "legacy");

  // Registered with an external ID, then the same spec without it (Nomad's "reuse the create
  // spec"): the stored external ID stays, and is what the controller is asked about.
  assert.equal((await register(spec("kept", 'external_id = "vol-1"'))).code, 0);
  assert.equal((await register(spec("kept", 'context { zone = "z1" }'))).code, 0);
  assert.deepEqual(validated, ["legacy", "vol-1", "vol-1"]);
  const kept = await http(base, "GET", "/v1/volume/csi/kept?claims=true");
  assert.equal(kept.json.ExternalID, "vol-1");
  assert.deepEqual(kept.json.Context, { zone: "z1" });

  // A different external ID is still refused, and changes nothing.
  const moved = await register(spec("kept", 'external_id = "vol-2"'));
  assert.equal(moved.code, 1);
  assert.match(moved.err.join("\n"), /unable to update volume: volume external ID cannot be updated/);
  assert.equal((await http(base, "GET", "/v1/volume/csi/kept?claims=true")).json.ExternalID, "vol-1");
});
