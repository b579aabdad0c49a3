/**
 * Issue 32: task logs rotate as the `logs` stanza says, through a real `berth agent -server
 * -client` running a raw_exec task that prints numbered lines (~0.8 MB/s) with `max_files = 2`,
 * `max_file_size = 1` (MB). A reader in this test follows the files themselves (multi_file_log.ts,
 * a cursor across rotations) the whole time. The agent is killed with SIGKILL while the task
 * writes, stays dead while more files rotate, and is started again on the same data dir: the log
 * collector is the same process all along, and the reader saw every line exactly once, in order.
 * At the end at most two files are kept (every full one exactly 1 MiB), the oldest deleted, and
 * `alloc logs` (whole, -tail -n, -f, -stderr) reads across the rotated files. Nothing is left
 * running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { readLogWindow } from "../../../src/client/logmon/multi_file_log.js";
import { isSameLiveProcess } from "../../../src/client/drivers/shared/proc.js";
import {
  AgentProcess,
  crashAgent,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

const MIB = 1024 * 1024;
// Batches of 500 numbered lines (95 bytes each) until $NOMAD_ALLOC_DIR/stop exists, then "END <n>".
const AWK = `BEGIN {
  pad = sprintf("%80s", ""); gsub(/ /, "x", pad); stop = ENVIRON["NOMAD_ALLOC_DIR"] "/stop"
  for (;;) {
    for (k = 0; k < 500; k++) { i++; printf "line %08d %s\\n", i, pad }
    fflush()
    if ((getline junk < stop) >= 0) break
    system("sleep 0.05")
  }
  printf "END %d\\n", i
}`;
const JOB = `job "chatty" {
  type = "batch"
  group "g" {
    task "talk" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(`echo hello-stderr >&2; exec awk ${shellQuote(AWK)}`)}]
      }
      logs {
        max_files     = 2
        max_file_size = 1
      }
    }
  }
}
`;

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

let dir: string;
let args: string[];
let agent: AgentProcess;
let addr: string;
let logFile: string;
let failed = true;

async function startAgent(): Promise<void> {
  agent = new AgentProcess(args, logFile);
  await eventually("the node to be ready", async () => {
    const nodes = await getJson<{ Status: string }[]>(addr, "/v1/nodes");
    return nodes.some((n) => n.Status === "ready") ? true : undefined;
  });
}

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-logrotate-")));
  const port = await freePort();
  addr = `http://127.0.0.1:${port}`;
  logFile = path.join(dir, "agent.log");
  args = ["-server", "-client", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`];
  await startAgent();
});

after(async () => {
  try {
    await runCli(["job", "stop", "-purge", "chatty"], { BERTH_ADDR: addr });
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

/** Follows `<task>.stdout.<n>` across rotations from the first byte, as the HTTP route does. */
class FileFollower {
  text = "";
  private cur: { index: number; offset: number } = { index: 0, offset: 0 };
  private stopped = false;
  readonly done: Promise<void>;

  constructor(logsDir: string) {
    const d = { anchor: path.dirname(path.dirname(logsDir)), rel: ["talk", "logs"], base: "talk.stdout" };
    this.done = (async () => {
      for (;;) {
        const w = await readLogWindow(d, { origin: "start", limit: 1 << 20, ...this.cur });
        assert.ok(
          w.index === this.cur.index || this.cur.offset === 0,
          `fell behind: ${w.index} ≠ ${this.cur.index}`,
        );
        this.text += w.data.toString("latin1");
        this.cur = { index: w.index, offset: w.offset + w.data.length };
        if (this.cur.offset >= w.size && w.next) this.cur = { index: w.index + 1, offset: 0 };
        else if (this.cur.offset >= w.size) {
          if (this.stopped) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    })();
  }

  get index(): number {
    return this.cur.index;
  }

  async stop(): Promise<string> {
    this.stopped = true;
    await this.done;
    return this.text;
  }
}

/** Asserts `text` is `line <n>` lines counting up by one from `first`, then `END <last>`. */
function assertContiguous(text: string, first: number | "any", what: string): number {
  const lines = text.split("\n");
  assert.equal(lines.pop(), "", `${what} ends with a newline`);
  const end = /^END (\d+)$/.exec(lines.pop() ?? "");
  assert.ok(end, `${what} ends with END`);
  let want = first === "any" ? Number(/^line (\d+) /.exec(lines[0] ?? "")?.[1]) : first;
  for (const l of lines) {
    const n = Number(/^line (\d+) x+$/.exec(l)?.[1]);
    if (n !== want) assert.fail(`${what}: expected line ${want}, got ${JSON.stringify(l.slice(0, 40))}`);
    want++;
  }
  assert.equal(Number(end[1]), want - 1, `${what}: END counts the lines`);
  return lines.length;
}

test("logs rotate by the logs stanza and lose no line across an agent kill -9", async () => {
  fs.writeFileSync(path.join(dir, "chatty.hcl"), JOB);
  const run = await runCli(["job", "run", "-detach", path.join(dir, "chatty.hcl")], { BERTH_ADDR: addr });
  assert.equal(run.code, 0, run.stderr);
  const id = await eventually("the alloc", async () => {
    const allocs = await getJson<{ ID: string }[]>(addr, "/v1/job/chatty/allocations");
    return allocs[0]?.ID;
  });
  const allocDir = path.join(dir, "data", "alloc", id);
  const logsDir = path.join(allocDir, "talk", "logs");
  await eventually("the first file", async () =>
    fs.existsSync(path.join(logsDir, "talk.stdout.0")) ? true : undefined,
  );
  const follower = new FileFollower(logsDir);
  const record = () =>
    JSON.parse(fs.readFileSync(path.join(allocDir, ".talk.logmon.json"), "utf8")) as {
      pid: number;
      startTime: string;
    };
  const collector = record();
  await eventually("a rotation", async () => (follower.index >= 1 ? true : undefined), 30_000, 50);

  await crashAgent(agent);
  const atCrash = follower.index;
  // The task and its collector go on without the agent: files keep rotating.
  await eventually(
    "a rotation with the agent dead",
    async () => (follower.index >= atCrash + 1 ? true : undefined),
    30_000,
    50,
  );
  await startAgent();
  await eventually(
    "a rotation after the restart",
    async () => (follower.index >= atCrash + 2 ? true : undefined),
    30_000,
    50,
  );
  assert.deepEqual(record(), collector, "the same collector still runs");
  assert.ok(await isSameLiveProcess(collector.pid, collector.startTime), "the collector survived the crash");

  // Follow through the API while the task ends.
  const cliFollow = runCli(["alloc", "logs", "-stdout", "-f", id], { BERTH_ADDR: addr });
  fs.writeFileSync(path.join(allocDir, "alloc", "stop"), "");
  await eventually("the alloc to complete", async () => {
    const a = await getJson<{ ClientStatus: string }>(addr, `/v1/allocation/${id}`);
    return a.ClientStatus === "complete" ? true : undefined;
  });
  const seen = await follower.stop();
  const total = assertContiguous(seen, 1, "the files followed across the crash");
  assert.ok(total * 95 > 3 * MIB, `${total} lines span at least four files`);

  // At most two files, the oldest deleted; every file but the newest exactly max_file_size.
  const kept = fs
    .readdirSync(logsDir)
    .filter((f) => f.startsWith("talk.stdout."))
    .sort();
  const newest = follower.index;
  assert.deepEqual(kept, [`talk.stdout.${newest - 1}`, `talk.stdout.${newest}`]);
  assert.equal(fs.statSync(path.join(logsDir, kept[0]!)).size, MIB);
  const onDisk = kept.map((f) => fs.readFileSync(path.join(logsDir, f), "latin1")).join("");
  assert.ok(seen.endsWith(onDisk), "the kept files are the log's end");
  assert.equal(await waitGone(collector), true, "the collector exited with its task");

  // alloc logs: whole (across the two files), -tail -n, -f, -stderr.
  const whole = await runCli(["alloc", "logs", id], { BERTH_ADDR: addr });
  assert.equal(whole.code, 0, whole.stderr);
  assert.ok(whole.stdout === onDisk, "alloc logs prints both kept files, in order");
  const tail = await runCli(["alloc", "logs", "-tail", "-n", "3", id], { BERTH_ADDR: addr });
  assert.equal(tail.stdout, onDisk.split("\n").slice(-4).join("\n"));
  const followed = await cliFollow;
  assert.equal(followed.code, 0, followed.stderr);
  assertContiguous(followed.stdout.slice(followed.stdout.indexOf("\n") + 1), "any", "alloc logs -f");
  const stderr = await runCli(["alloc", "logs", "-stderr", id], { BERTH_ADDR: addr });
  assert.equal(stderr.stdout, "hello-stderr\n");
  failed = false;
});

async function waitGone(rec: { pid: number; startTime: string }): Promise<boolean> {
  return eventually("the collector to exit", async () =>
    (await isSameLiveProcess(rec.pid, rec.startTime)) ? undefined : true,
  );
}
