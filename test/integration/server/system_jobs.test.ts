/**
 * System jobs end to end (issue 29): an in-process server on loopback and real `berth agent
 * -client` processes running raw_exec tasks. A system job gets one alloc on each node; a node that
 * joins later gets its own within 5 s of registering; an ineligible node keeps what it runs but
 * takes nothing new, and loses its alloc (not replaced there) when the job gets a new version, as in
 * Nomad; a drain stops the node's system alloc only once its service alloc has moved. Nothing is
 * left running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";
import {
  AgentProcess,
  eventually,
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

interface AllocView {
  ID: string;
  Name: string;
  NodeID: string;
  NodeName: string;
  JobVersion: number;
  DesiredStatus: string;
  ClientStatus: string;
}
interface NodeView {
  ID: string;
  Name: string;
  Status: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const terminal = (a: AllocView) => ["complete", "failed", "lost"].includes(a.ClientStatus);

/**
 * A job whose one raw_exec task idles on a file of the test's dir (so its process names the dir).
 * `stubborn`: the task ignores SIGINT and SIGTERM, so it takes its whole 3 s kill timeout to stop.
 */
function jobSpec(
  id: string,
  type: string,
  idle: string,
  opts: { extraArg?: string; stubborn?: boolean } = {},
): string {
  const config = opts.stubborn
    ? `command = "/bin/sh"
        args    = ["-c", "trap '' INT TERM; while :; do sleep 0.2; done", "${idle}"]`
    : `command = "/usr/bin/tail"
        args    = ["-f", "${idle}"${opts.extraArg ?? ""}]`;
  return `job "${id}" {
  type = "${type}"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        ${config}
      }
      kill_timeout = "${opts.stubborn ? "3s" : "1s"}"
    }
  }
}
`;
}

test(
  "system jobs: one alloc per node, a joining node within 5 s, ineligible nodes, drain order",
  { timeout: 300_000 },
  async (t) => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-system-")));
    const idle = path.join(dir, "idle");
    fs.writeFileSync(idle, "");
    const server = new Server({
      dataDir: path.join(dir, "server"),
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
    });
    const agents = new Map<string, AgentProcess>();
    let passed = false;
    let serverStopped = false;
    try {
      await server.start();
      const base = server.httpAddress;
      const env = { BERTH_ADDR: base };
      const cli = async (args: string[]) => {
        const r = await runCli(args, env);
        assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
        return r.stdout;
      };
      const startAgent = (name: string) =>
        agents.set(
          name,
          new AgentProcess(
            [
              "-client",
              "-data-dir",
              path.join(dir, name),
              `-servers=${new URL(base).host}`,
              `-node-name=${name}`,
            ],
            path.join(dir, `${name}.log`),
          ),
        );
      const nodes = () => getJson<NodeView[]>(base, "/v1/nodes");
      const nodeId = async (name: string) =>
        eventually(`node ${name} to be ready`, async () => {
          const n = (await nodes()).find((x) => x.Name === name && x.Status === "ready");
          return n?.ID;
        });
      const allocs = (job: string) => getJson<AllocView[]>(base, `/v1/job/${job}/allocations`);
      const liveOn = async (job: string) =>
        (await allocs(job))
          .filter((a) => a.DesiredStatus === "run" && !terminal(a))
          .map((a) => a.NodeName)
          .sort();
      const runningOn = async (job: string, names: string[]) =>
        eventually(`${job} to run on ${names.join(", ")}`, async () => {
          const all = await allocs(job);
          const running = all.filter((a) => a.DesiredStatus === "run" && a.ClientStatus === "running");
          const on = running.map((a) => a.NodeName).sort();
          return JSON.stringify(on) === JSON.stringify([...names].sort()) ? running : undefined;
        });

      startAgent("a");
      startAgent("b");
      await nodeId("a");
      await nodeId("b");

      const sysFile = path.join(dir, "sys.hcl");
      fs.writeFileSync(sysFile, jobSpec("sys", "system", idle));
      await cli(["job", "run", sysFile]);
      const first = await runningOn("sys", ["a", "b"]);
      assert.deepEqual(
        first.map((a) => a.Name),
        ["sys.g[0]", "sys.g[0]"],
        "every node's alloc is index 0",
      );

      // A node that joins later gets its alloc within 5 s of registering.
      startAgent("c");
      const idC = await eventually(
        "node c to register",
        async () => (await nodes()).find((x) => x.Name === "c")?.ID,
        60_000,
        50,
      );
      const registered = Date.now();
      await eventually(
        "c's system alloc",
        async () => ((await allocs("sys")).some((a) => a.NodeID === idC) ? true : undefined),
        60_000,
        50,
      );
      const placedMs = Date.now() - registered;
      t.diagnostic(`node c got its system alloc ${placedMs} ms after it registered`);
      assert.ok(placedMs < 5_000, `c got its alloc ${placedMs} ms after registering`);
      await runningOn("sys", ["a", "b", "c"]);

      // Ineligible: c keeps what it runs (Nomad), takes nothing new; a new version stops it there.
      await cli(["node", "eligibility", "-disable", idC]);
      assert.deepEqual(await liveOn("sys"), ["a", "b", "c"]);
      fs.writeFileSync(sysFile, jobSpec("sys", "system", idle, { extraArg: ', "--retry"' }));
      await cli(["job", "run", sysFile]);
      const v1 = await eventually("version 1 on a and b, nothing on c", async () => {
        const live = (await allocs("sys")).filter((a) => a.DesiredStatus === "run");
        const onC = (await allocs("sys")).filter((a) => a.NodeID === idC);
        const done =
          live.length === 2 &&
          live.every((a) => a.ClientStatus === "running" && a.JobVersion === 1) &&
          onC.every((a) => a.DesiredStatus === "stop");
        return done ? live : undefined;
      });
      assert.deepEqual(v1.map((a) => a.NodeName).sort(), ["a", "b"]);
      await cli(["node", "eligibility", "-enable", idC]);
      await runningOn("sys", ["a", "b", "c"]);

      // Drain: the service alloc moves first; the node's system alloc stays until it has.
      const webFile = path.join(dir, "web.hcl");
      // web takes 3 s to stop: a system alloc marked with it would be seen stopping while it runs.
      fs.writeFileSync(webFile, jobSpec("web", "service", idle, { stubborn: true }));
      await cli(["job", "run", webFile]);
      const [web] = await eventually("web to run", async () => {
        const r = (await allocs("web")).filter((a) => a.ClientStatus === "running");
        return r.length === 1 ? r : undefined;
      });
      const drainedId = web!.NodeID;
      const sysOnDrained = (await allocs("sys")).find(
        (a) => a.NodeID === drainedId && a.DesiredStatus === "run",
      )!;
      await cli(["node", "drain", "-enable", "-yes", "-detach", "-deadline", "2m", drainedId]);
      const order = await eventually(
        "the drained node's system alloc to be stopped",
        async () => {
          const sys = (await allocs("sys")).find((a) => a.ID === sysOnDrained.ID)!;
          const oldWeb = (await allocs("web")).find((a) => a.ID === web!.ID)!;
          if (sys.DesiredStatus === "run") {
            // While the system alloc runs, the service alloc may still be stopping; never the reverse.
            return undefined;
          }
          return { oldWebTerminal: terminal(oldWeb), oldWebDesired: oldWeb.DesiredStatus };
        },
        120_000,
        50,
      );
      assert.deepEqual(order, { oldWebTerminal: true, oldWebDesired: "stop" }, "web had stopped first");
      const moved = await eventually("web's replacement to run elsewhere", async () => {
        const r = (await allocs("web")).filter(
          (a) => a.DesiredStatus === "run" && a.ClientStatus === "running",
        );
        return r.length === 1 && r[0]!.NodeID !== drainedId ? r[0] : undefined;
      });
      assert.notEqual(moved.NodeID, drainedId);
      assert.deepEqual(
        (await liveOn("sys")).length,
        2,
        "the drained node's system alloc is not moved to another node",
      );

      // A system task that fails at once, every time: each node retries it, but waits longer
      // each time (at once, then 5 s, then 10 s) instead of making a new alloc per evaluation.
      const flakyFile = path.join(dir, "flaky.hcl");
      fs.writeFileSync(
        flakyFile,
        jobSpec("flaky", "system", idle).replace(/command = .*\n.*args .*\n/, 'command = "/bin/false"\n'),
      );
      await cli(["job", "run", flakyFile]);
      await sleep(12_000);
      const perNode = new Map<string, number>();
      for (const a of await allocs("flaky")) perNode.set(a.NodeName, (perNode.get(a.NodeName) ?? 0) + 1);
      t.diagnostic(`failing system allocs per node after 12 s: ${JSON.stringify([...perNode])}`);
      const eligible = (await liveOn("sys")).sort();
      assert.deepEqual([...perNode.keys()].sort(), eligible, "tried on every eligible node");
      for (const [node, n] of perNode) assert.ok(n >= 2 && n <= 4, `${n} allocs on ${node} in 12 s`);
      const evals = await getJson<{ Status: string; WaitUntil?: string | null }[]>(
        base,
        "/v1/job/flaky/evaluations",
      );
      assert.ok(
        evals.some((e) => e.Status === "pending" && e.WaitUntil && !e.WaitUntil.startsWith("0001")),
        `a delayed eval waits for the next try: ${JSON.stringify(evals)}`,
      );

      await cli(["job", "stop", "-purge", "flaky"]);
      await cli(["job", "stop", "-purge", "web"]);
      await cli(["job", "stop", "-purge", "sys"]);
      for (const [name, agent] of agents) assert.equal(await agent.stop(60_000), 0, `agent ${name} stops`);
      serverStopped = true;
      await server.stop();
      passed = true;
    } finally {
      for (const agent of agents.values()) agent.kill();
      killProcessesUnder(dir);
      if (!passed)
        for (const name of agents.keys())
          console.error(`--- ${name}.log\n${logTail(path.join(dir, `${name}.log`))}`);
      if (!serverStopped) await server.stop().catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
