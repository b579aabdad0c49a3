/**
 * Interactive `alloc exec` on a pseudo-terminal, end to end: a real `berth agent -dev` runs an
 * exec-driver task (its own mount namespace, root and devpts); the test speaks Nomad's exec
 * WebSocket protocol with `tty=true` and sees a terminal in the task, of the size it sent, input
 * reaching the command as typed, a window size change reaching it (SIGWINCH), Ctrl-C interrupting
 * it, and the exit code coming back. Then the real CLI, itself given a terminal by util-linux
 * `script`, runs `berth alloc exec` interactively (-t by default). Ends asserting nothing is left
 * running.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { WebSocket } from "ws";
import {
  AgentProcess,
  BERTH_BIN,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  logTail,
  runCli,
} from "../../helpers/agent_process.js";

const JOB = `job "shell" {
  group "g" {
    task "sh" {
      driver = "exec"
      config {
        command = "/bin/sleep"
        args    = ["86411"]
      }
    }
  }
}
`;

let dir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let allocId: string;
let failed = true;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-exectty-")));
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
  fs.writeFileSync(path.join(dir, "shell.hcl"), JOB);
  const run = await runCli(["job", "run", "-detach", path.join(dir, "shell.hcl")], { BERTH_ADDR: addr });
  assert.equal(run.code, 0, run.stderr);
  allocId = await eventually("a running shell alloc", async () => {
    const allocs = await getJson<{ ID: string; ClientStatus: string }[]>(addr, "/v1/job/shell/allocations");
    return allocs.find((a) => a.ClientStatus === "running")?.ID;
  });
});

after(async () => {
  try {
    await runCli(["job", "stop", "-purge", "shell"], { BERTH_ADDR: addr });
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

/** One exec WebSocket session: what the terminal shows so far, frames to send, the exit code. */
class Session {
  private readonly ws: WebSocket;
  output = "";
  readonly exit: Promise<number>;

  constructor(command: string[], size: { height: number; width: number }) {
    const q = new URLSearchParams({ task: "sh", command: JSON.stringify(command), tty: "true" });
    this.ws = new WebSocket(`${addr.replace("http", "ws")}/v1/client/allocation/${allocId}/exec?${q}`);
    // Nomad's CLI sends the terminal's size first.
    this.ws.on("open", () => this.send({ tty_size: size }));
    this.exit = new Promise((resolve, reject) => {
      let code: number | null = null;
      this.ws.on("message", (raw: Buffer) => {
        const f = JSON.parse(raw.toString()) as {
          stdout?: { data?: string };
          exited?: boolean;
          result?: { exit_code: number };
        };
        if (f.stdout?.data) this.output += Buffer.from(f.stdout.data, "base64").toString();
        if (f.exited) code = f.result!.exit_code;
      });
      this.ws.on("close", (_c, reason) =>
        code === null ? reject(new Error(`closed without an exit: ${reason.toString()}`)) : resolve(code),
      );
      this.ws.on("error", reject);
    });
  }

  send(frame: object): void {
    this.ws.send(JSON.stringify(frame));
  }

  type(text: string): void {
    this.send({ stdin: { data: Buffer.from(text).toString("base64") } });
  }

  shows(text: string): Promise<true> {
    return eventually(`the terminal to show ${JSON.stringify(text)}`, async () =>
      this.output.includes(text) ? true : undefined,
    );
  }
}

test("a TTY session: a terminal of the size sent, typed input, exit code", async () => {
  const s = new Session(["/bin/sh", "-c", 'tty; stty size; read line; echo "got:$line"; exit 7'], {
    height: 33,
    width: 111,
  });
  await s.shows("33 111");
  assert.match(s.output, /^\/dev\/pts\/\d+\r\n33 111\r\n/, "a terminal, of the size sent");
  s.type("hello\r");
  assert.equal(await s.exit, 7);
  assert.match(s.output, /hello\r\ngot:hello\r\n$/, "the terminal echoed the line; the command read it");
});

test("a TTY session: a window size change reaches the command, Ctrl-C interrupts it", async () => {
  const s = new Session(
    ["/bin/sh", "-c", "trap 'stty size' WINCH; echo ready; while :; do sleep 0.05; done"],
    { height: 24, width: 80 },
  );
  await s.shows("ready");
  s.send({ tty_size: { height: 50, width: 132 } });
  await s.shows("50 132");
  s.type("\x03");
  assert.equal(await s.exit, 130, "the shell died of SIGINT from the terminal");
});

test("berth alloc exec on a terminal is interactive by default", async () => {
  // util-linux script gives the CLI a terminal; what is written to script's stdin is typed there.
  const cmd = [process.execPath, BERTH_BIN, "alloc", "exec", allocId, "/bin/sh", "-c"]
    .map((w) => `'${w}'`)
    .join(" ");
  const inner = `'[ -t 0 ] && echo remote-is-a-tty; read x; echo "got-$x"; exit 5'`;
  const r = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child = spawn("script", ["-q", "-e", "-c", `${cmd} ${inner}`, "/dev/null"], {
      env: { ...process.env, BERTH_ADDR: addr },
      stdio: ["pipe", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      // Typed once the remote shell waits for it.
      if (out.includes("remote-is-a-tty") && !child.stdin.writableEnded) child.stdin.end("abc\r");
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
  assert.equal(r.code, 5, r.out);
  // Node's raw mode keeps the local terminal's output newline translation (libuv leaves ONLCR on),
  // so the remote terminal's \r\n can reach the screen as \r\r\n: the same on screen.
  assert.match(r.out, /remote-is-a-tty\r+\n/);
  assert.match(r.out, /got-abc\r+\n/);
  failed = false;
});
