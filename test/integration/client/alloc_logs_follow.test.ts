/**
 * `berth alloc logs -tail -n N -f` loses nothing between reading the tail and following: a real
 * `berth agent -dev` runs a raw_exec task printing numbered lines; the real CLI talks to it through
 * a loopback proxy that holds the CLI's follow request until the task has written more lines since
 * the tail was read. Every line from the tail's first to the task's last is printed, in order, once.
 * Ends asserting nothing is left running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

const LINES = 80;
// A batch task: LINES numbered lines, one every 50 ms, then it ends (and so does the follow).
const SCRIPT = `i=0; while [ $i -lt ${LINES} ]; do i=$((i+1)); echo line-$i; sleep 0.05; done`;
const JOB = `job "counter" {
  type = "batch"
  group "g" {
    task "count" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(SCRIPT)}]
      }
    }
  }
}
`;

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let proxy: http.Server | undefined;
let failed = true;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-logsfollow-")));
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`],
    logFile,
  );
  await eventually("the dev node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
});

after(async () => {
  try {
    await runCli(["job", "stop", "-purge", "counter"], { BERTH_ADDR: addr });
  } finally {
    proxy?.closeAllConnections();
    proxy?.close();
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

function lineCount(file: string): number {
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").length - 1 : 0;
}

/**
 * A proxy to the agent that holds every follow request for a log until `file` has at least
 * `more` lines more than when the request came, then forwards it. `held` counts them.
 */
async function holdingProxy(file: string, more: number): Promise<{ url: string; held: () => number }> {
  let held = 0;
  const target = new URL(addr);
  proxy = http.createServer((req, res) => {
    void (async () => {
      if (req.url?.startsWith("/v1/client/fs/logs/") && req.url.includes("follow=true")) {
        held++;
        const at = lineCount(file);
        await eventually("the task to write more lines", async () =>
          lineCount(file) >= Math.min(at + more, LINES) ? true : undefined,
        );
      }
      const up = http.request(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
        (upRes) => {
          res.writeHead(upRes.statusCode ?? 502, upRes.headers);
          upRes.pipe(res);
        },
      );
      up.on("error", () => res.destroy());
      req.pipe(up);
    })();
  });
  const port = await freePort();
  await new Promise<void>((resolve) => proxy!.listen(port, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${port}`, held: () => held };
}

test("alloc logs -tail -n 5 -f prints every line written between the tail and the follow", async () => {
  fs.writeFileSync(path.join(dir, "counter.hcl"), JOB);
  const run = await runCli(["job", "run", "-detach", path.join(dir, "counter.hcl")], { BERTH_ADDR: addr });
  assert.equal(run.code, 0, run.stderr);
  const id = await eventually("the counter alloc", async () => {
    const allocs = await getJson<{ ID: string }[]>(addr, "/v1/job/counter/allocations");
    return allocs[0]?.ID;
  });
  const stdoutLog = path.join(dir, "data", "alloc", id, "count", "logs", "count.stdout.0");
  await eventually("ten lines written", async () => (lineCount(stdoutLog) >= 10 ? true : undefined));

  const { url, held } = await holdingProxy(stdoutLog, 5);
  const r = await runCli(["alloc", "logs", "-tail", "-n", "5", "-f", id], { BERTH_ADDR: url });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(held(), 1, "the follow request was held once");
  const got = r.stdout.trimEnd().split("\n");
  const first = Number(/^line-(\d+)$/.exec(got[0]!)?.[1]);
  assert.ok(first >= 6, `the tail starts at a later line: ${got[0]}`);
  const want = Array.from({ length: LINES - first + 1 }, (_, i) => `line-${first + i}`);
  assert.deepEqual(got, want, "every line from the tail's first to the last, once, in order");
  failed = false;
});
