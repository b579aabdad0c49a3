/**
 * Placement through the real server over HTTP, with two node agents registered over the agent RPC
 * carrying what the real client fingerprints on this machine (attributes under Nomad's names and
 * NodeResources; memory_total_mb set to 1024 MiB as an operator would): an HCL job constrained on
 * `${attr.kernel.name}` places, one on another kernel is filtered with Nomad's reason text,
 * distinct_hosts puts one alloc on each of the two nodes and leaves the third unplaced, and a group that needs more memory than either node
 * has left fails with the "memory" dimension in the eval's FailedTGAllocs and in `job status`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseJobHcl } from "../../../src/api/specs/jobspec.js";
import { reservedResources } from "../../../src/client/fingerprint/resources.js";
import { buildNode, fingerprintNode } from "../../../src/client/node_identity.js";
import { runCli } from "../../helpers/agent_process.js";
import { connectAgent, http, startServer, type AgentPeer } from "./fake_agent.js";

const drivers = { exec: { Detected: true, Healthy: true, HealthDescription: "", SupportsMounts: true } };

interface AllocView {
  NodeID: string;
  TaskGroup: string;
}

interface EvalView {
  Status: string;
  FailedTGAllocs: Record<
    string,
    {
      NodesEvaluated: number;
      NodesExhausted: number;
      DimensionExhausted: Record<string, number>;
      ConstraintFiltered: Record<string, number> | null;
    }
  > | null;
}

async function register(base: string, id: string, dataDir: string): Promise<AgentPeer> {
  const peer = await connectAgent(base);
  const fp = fingerprintNode(drivers, dataDir, { memoryTotalMB: 1024 });
  const node = buildNode({
    id,
    name: `node-${id.slice(0, 4)}`,
    drivers,
    attributes: fp.attributes,
    ...(fp.resources ? { resources: fp.resources } : {}),
    reserved: reservedResources({ memory: 124 }),
    controllers: {},
    nodes: {},
  });
  await peer.call("Node.Register", { Node: JSON.parse(JSON.stringify(node)) });
  return peer;
}

async function runHcl(base: string, text: string): Promise<void> {
  const job = await parseJobHcl("job.hcl", text);
  const res = await http(base, "PUT", "/v1/jobs", { Job: job });
  assert.equal(res.status, 200, res.text);
}

const allocs = async (base: string, job: string) =>
  ((await http(base, "GET", `/v1/job/${job}/allocations`)).json as AllocView[]).filter(Boolean);

const latestEval = async (base: string, job: string) => {
  const evals = (await http(base, "GET", `/v1/job/${job}/evaluations`)).json as EvalView[];
  return evals.find((e) => e.FailedTGAllocs) ?? evals[0]!;
};

const execTask = (name: string) => `
    task "${name}" {
      driver = "exec"
      config {
        command = "/bin/true"
      }
    }`;

test("placement: attribute constraints, distinct_hosts and memory exhaustion on fingerprinted nodes", async (t) => {
  const base = await startServer(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-place-"));
  const peers: AgentPeer[] = [];
  t.after(() => {
    peers.forEach((p) => p.close());
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const ids = ["a1b2c3d4-0000-4000-8000-000000000001", "a1b2c3d4-0000-4000-8000-000000000002"];
  for (const id of ids) peers.push(await register(base, id, dir));
  const node = (await http(base, "GET", `/v1/node/${ids[0]}`)).json;
  assert.equal(node.Attributes["kernel.name"], "linux", "the fingerprint reached the server");
  assert.equal(node.NodeResources.Memory.MemoryMB, 1024);
  assert.equal(node.ReservedResources.Memory.MemoryMB, 124);

  // 1. A constraint on a fingerprinted attribute places; one no node meets is filtered, by reason.
  await runHcl(
    base,
    `job "lin" {
  datacenters = ["dc1"]
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  group "g" {${execTask("t")}
  }
}`,
  );
  assert.equal((await allocs(base, "lin")).length, 1);
  await runHcl(
    base,
    `job "win" {
  datacenters = ["dc1"]
  group "g" {
    constraint {
      attribute = "\${attr.kernel.name}"
      operator  = "regexp"
      value     = "^windows"
    }${execTask("t")}
  }
}`,
  );
  assert.equal((await allocs(base, "win")).length, 0);
  const win = await latestEval(base, "win");
  assert.deepEqual(win.FailedTGAllocs?.g?.ConstraintFiltered, { "${attr.kernel.name} regexp ^windows": 2 });

  // 2. distinct_hosts: one alloc of the group per node, so the third of three finds none.
  await runHcl(
    base,
    `job "dh" {
  datacenters = ["dc1"]
  group "g" {
    count = 3
    constraint {
      operator = "distinct_hosts"
      value    = "true"
    }${execTask("t")}
  }
}`,
  );
  const dh = await allocs(base, "dh");
  assert.equal(dh.length, 2);
  assert.equal(new Set(dh.map((a) => a.NodeID)).size, 2, "one alloc per node");
  const dhEval = await latestEval(base, "dh");
  assert.deepEqual(dhEval.FailedTGAllocs?.g?.ConstraintFiltered, { distinct_hosts: 2 });

  // 3. Each node has 1024 − 124 = 900 MiB; lin and dh took 300 MiB (Nomad's default) on one and
  // 600 on the other. Three tasks of 300 MiB fit on neither.
  await runHcl(
    base,
    `job "big" {
  datacenters = ["dc1"]
  group "g" {${execTask("a")}${execTask("b")}${execTask("c")}
  }
}`,
  );
  assert.equal((await allocs(base, "big")).length, 0);
  const big = await latestEval(base, "big");
  const m = big.FailedTGAllocs?.g;
  assert.ok(m, "the eval records the failed group");
  assert.equal(m.NodesEvaluated, 2);
  assert.equal(m.NodesExhausted, 2);
  assert.deepEqual(m.DimensionExhausted, { memory: 2 });
  const status = await runCli(["job", "status", "big"], { BERTH_ADDR: base });
  assert.equal(status.code, 0, status.stderr);
  assert.match(status.stdout, /Resources exhausted on 2 nodes/);
  assert.match(status.stdout, /Dimension "memory" exhausted on 2 nodes/);
});
