/**
 * Real processes on a real etcd: three `berth agent -server -etcd-endpoints=…` servers and one
 * `berth agent -client -servers=a,b,c` node agent running a raw_exec task. Killing (SIGKILL) the
 * server the node agent is connected to moves the agent to another server within seconds; its
 * task keeps running in the same alloc (no replacement), the node stays up past several heartbeat
 * TTLs, and the servers agree on a leader among the survivors.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";
import { etcdAvailable, startEtcd, type EtcdServer } from "../../helpers/etcd_server.js";
import { tempDir } from "../../helpers/temp_dir.js";

const skip = etcdAvailable() ? false : "etcd is not installed (/usr/bin/etcd)";

let etcd: EtcdServer | undefined;
before(async () => {
  if (!skip) etcd = await startEtcd();
});
after(async () => {
  await etcd?.stop();
});

const JOB = `job "sleeper" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = ${JSON.stringify(process.execPath)}
        args    = ["-e", "setInterval(() => {}, 1000)"]
      }
      resources {
        memory = 32
      }
    }
  }
}
`;

interface AllocStub {
  ID: string;
  ClientStatus: string;
}

/** The server the node agent says it connected to last (its log), as http://HOST:PORT. */
function connectedTo(log: string): string | undefined {
  const lines = fs
    .readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.includes("connected to server"));
  return /server=(\S+)/.exec(lines.at(-1) ?? "")?.[1];
}

async function leaderOf(base: string): Promise<string | undefined> {
  try {
    const l = await getJson<string>(base, "/v1/status/leader");
    return l === "" ? undefined : l;
  } catch {
    return undefined;
  }
}

test(
  "kill -9 the server a node agent is connected to: the agent moves, its task keeps running",
  { skip },
  async () => {
    const dir = tempDir("berth-etcd-failover-");
    const ports = [await freePort(), await freePort(), await freePort()];
    const bases = ports.map((p) => `http://127.0.0.1:${p}`);
    const servers = ports.map(
      (p, i) =>
        new AgentProcess(
          [
            "-server",
            "-data-dir",
            path.join(dir, `s${i}`),
            "-http-addr",
            `127.0.0.1:${p}`,
            `-node-name=s${i}`,
            `-etcd-endpoints=${etcd!.endpoint}`,
            "-heartbeat-ttl=2s",
          ],
          path.join(dir, `s${i}.log`),
        ),
    );
    const nodeLog = path.join(dir, "node.log");
    let client: AgentProcess | undefined;
    try {
      await eventually("the servers to agree on a leader", async () => {
        const seen = await Promise.all(bases.map(leaderOf));
        return seen.every((l) => l !== undefined && l === seen[0]) ? true : undefined;
      });
      client = new AgentProcess(
        [
          "-client",
          "-data-dir",
          path.join(dir, "node"),
          `-servers=${ports.map((p) => `127.0.0.1:${p}`).join(",")}`,
          "-node-name=n1",
        ],
        nodeLog,
      );
      await eventually("the node to be ready", async () => {
        const nodes = await getJson<{ Name: string; Status: string }[]>(bases[0]!, "/v1/nodes").catch(
          () => [],
        );
        return nodes.some((n) => n.Name === "n1" && n.Status === "ready") ? true : undefined;
      });
      const jobFile = path.join(dir, "sleeper.hcl");
      fs.writeFileSync(jobFile, JOB);
      const run = await runCli(["job", "run", jobFile], { BERTH_ADDR: bases[1]! });
      assert.equal(run.code, 0, run.stderr);
      const alloc = await eventually("the task to run", async () => {
        const allocs = await getJson<AllocStub[]>(bases[2]!, "/v1/job/sleeper/allocations").catch(() => []);
        return allocs.find((a) => a.ClientStatus === "running");
      });

      const held = connectedTo(nodeLog);
      const victim = bases.indexOf(held ?? "");
      assert.ok(victim >= 0, `the node agent names its server: ${held}`);
      servers[victim]!.kill();
      const survivors = bases.filter((_, i) => i !== victim);
      await eventually(
        "the node agent to connect to another server",
        () => {
          const now = connectedTo(nodeLog);
          return Promise.resolve(now !== undefined && now !== held ? now : undefined);
        },
        30_000,
      ).catch((err: unknown) => {
        throw new Error(`${(err as Error).message}\nnode log:\n${logTail(nodeLog, 40)}`);
      });
      await eventually("a survivor to lead", async () => {
        const l = await leaderOf(survivors[0]!);
        return l !== undefined && survivors.some((b) => b.endsWith(l)) ? true : undefined;
      });
      // Three heartbeat TTLs later: still the one alloc, running; the node still up.
      await new Promise((r) => setTimeout(r, 6_000));
      const allocs = await getJson<AllocStub[]>(survivors[0]!, "/v1/job/sleeper/allocations");
      assert.deepEqual(
        allocs.map((a) => [a.ID, a.ClientStatus]),
        [[alloc.ID, "running"]],
      );
      const nodes = await getJson<{ Name: string; Status: string }[]>(survivors[1]!, "/v1/nodes");
      assert.equal(nodes.find((n) => n.Name === "n1")?.Status, "ready");

      const stop = await runCli(["job", "stop", "-purge", "sleeper"], { BERTH_ADDR: survivors[0]! });
      assert.equal(stop.code, 0, stop.stderr);
      await eventually("the task to stop", async () => {
        const a = await getJson<AllocStub>(survivors[0]!, `/v1/allocation/${alloc.ID}`).catch(
          () => undefined,
        );
        return a === undefined || a.ClientStatus !== "running" ? true : undefined;
      });
    } finally {
      await client?.stop();
      for (const s of servers) await s.stop();
      killProcessGroupsUnder(dir);
    }
    assert.ok(!client?.running && servers.every((s) => !s.running), "nothing left running");
  },
);
