/**
 * Real processes: a `berth agent -client -servers=A,B` node agent and two `berth agent -server`
 * processes. Killing (SIGKILL) the server the agent is connected to moves it to the other one,
 * where it registers and heartbeats. (Each server keeps its own state here; with the etcd store
 * they share it — see the README's "Several servers on etcd".)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { AgentProcess, eventually, freePort, getJson, logTail } from "../../helpers/agent_process.js";
import { tempDir } from "../../helpers/temp_dir.js";

interface NodeStub {
  Name: string;
  Status: string;
}

async function nodeStatus(base: string, name: string): Promise<string | undefined> {
  try {
    const nodes = await getJson<NodeStub[]>(base, "/v1/nodes");
    return nodes.find((n) => n.Name === name)?.Status;
  } catch {
    return undefined;
  }
}

test("a node agent whose server is killed moves to the next server in its list", async () => {
  const dir = tempDir("berth-failover-");
  const ports = [await freePort(), await freePort()];
  const bases = ports.map((p) => `http://127.0.0.1:${p}`);
  const servers = ports.map(
    (p, i) =>
      new AgentProcess(
        ["-server", "-data-dir", path.join(dir, `s${i}`), "-http-addr", `127.0.0.1:${p}`],
        path.join(dir, `s${i}.log`),
      ),
  );
  let client: AgentProcess | undefined;
  try {
    // Both listening first: the agent dials the first in its list, and a server still starting
    // would (rightly) send it on to the next.
    for (const base of bases) {
      await eventually(`${base} to answer`, () =>
        fetch(`${base}/v1/status/leader`).then(
          (r) => (r.ok ? true : undefined),
          () => undefined,
        ),
      );
    }
    client = new AgentProcess(
      [
        "-client",
        "-data-dir",
        path.join(dir, "node"),
        `-servers=127.0.0.1:${ports[0]},127.0.0.1:${ports[1]}`,
        "-node-name=mover",
      ],
      path.join(dir, "node.log"),
    );
    await eventually("the node to register with the first server", async () =>
      (await nodeStatus(bases[0]!, "mover")) === "ready" ? true : undefined,
    );
    assert.equal(await nodeStatus(bases[1]!, "mover"), undefined, "only the first server has it");
    servers[0]!.kill();
    await eventually(
      "the node to move to the second server",
      async () => ((await nodeStatus(bases[1]!, "mover")) === "ready" ? true : undefined),
      30_000,
    ).catch((err: unknown) => {
      throw new Error(`${(err as Error).message}\nnode log:\n${logTail(path.join(dir, "node.log"), 40)}`);
    });
    assert.ok(client.running, "the node agent kept running");
  } finally {
    await client?.stop();
    for (const s of servers) await s.stop();
  }
  assert.ok(!client?.running && servers.every((s) => !s.running), "nothing left running");
});
