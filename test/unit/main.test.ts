import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../../../bin/berth", import.meta.url));
const run = (args: string[]) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [bin, ...args], (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
    });
  });

describe("the program router (src/main.ts)", () => {
  it("sends `agent` to the agent and `csi-hostpath` to the plugin", async () => {
    const agent = await run(["agent", "-h"]);
    assert.equal(agent.code, 0, agent.stderr);
    assert.match(agent.stdout, /^Usage: berth agent /);
    const plugin = await run(["csi-hostpath", "-h"]);
    assert.equal(plugin.code, 0, plugin.stderr);
    assert.match(plugin.stdout, /^usage: berth csi-hostpath /);
  });

  it("sends everything else to the CLI, whose help still lists agent, csi-hostpath and nodesim", async () => {
    const help = await run(["-h"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: berth /);
    assert.match(help.stdout, /^ {2}agent {10}Runs a berth agent/m);
    assert.match(help.stdout, /^ {2}csi-hostpath {3}Runs berth's reference CSI plugin/m);
    assert.match(help.stdout, /^ {2}nodesim {8}Runs many simulated node agents/m);
    const unknown = await run(["frobnicate"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^Error: unknown command "frobnicate"/);
  });
});
