/**
 * Issue 10: "the agent follows a symlink a task planted in its own log directory, as root, and wrote
 * a file on the host". A real `berth agent -dev` runs raw_exec tasks that, on their first run, replace
 * their stdout log file (group "file") or their whole logs dir (group "dir") with a symlink to a host
 * path outside the data dir, then exit 1; the restart policy starts them again, which is when the
 * agent (re)opens the logs. The host file and dir stay untouched, and the task fails with an event
 * saying why instead of writing through the link. Ends asserting nothing is left running.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
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

let dir: string;
let hostDir: string;
let agent: AgentProcess;
let addr: string;
let logFile: string;
let failed = true;

before(async () => {
  dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-logsymlink-")));
  hostDir = path.join(dir, "host"); // stands for a host directory outside the data dir
  fs.mkdirSync(path.join(hostDir, "dir"), { recursive: true });
  fs.writeFileSync(path.join(hostDir, "passwd"), "root:x:0:0\n");
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
    await runCli(["job", "stop", "-purge", "planter"], { BERTH_ADDR: addr });
  } finally {
    const code = await agent?.stop(60_000);
    const left = killProcessGroupsUnder(dir);
    if (failed || code !== 0) process.stderr.write(`agent log:\n${logTail(logFile, 80)}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, "the agent stopped cleanly");
    assert.deepEqual(left, [], "no task process was left running");
  }
});

/** A group whose raw_exec task plants `plant` (shell, run in its task dir) on its first run only. */
function group(name: string, plant: string): string {
  const script = `[ -e "$NOMAD_ALLOC_DIR/planted" ] && exit 0; ${plant} && touch "$NOMAD_ALLOC_DIR/planted"; exit 1`;
  return `  group "${name}" {
    restart {
      attempts = 1
      delay    = "1s"
      interval = "1m"
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    task "${name}" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
    }
  }
`;
}

test("a log file or logs dir a task replaced with a symlink is never written through", async () => {
  const spec = `job "planter" {
  type = "batch"
${group("file", `ln -sf ${hostDir}/passwd logs/file.stdout.0`)}
${group("dir", `rm -rf logs && ln -s ${hostDir}/dir logs`)}
}
`;
  const file = path.join(dir, "planter.hcl");
  fs.writeFileSync(file, spec);
  const r = await runCli(["job", "run", "-detach", file], { BERTH_ADDR: addr });
  assert.equal(r.code, 0, r.stderr);
  const finals = await eventually(
    "both allocs to finish",
    async () => {
      const allocs = await getJson<
        {
          TaskGroup: string;
          ClientStatus: string;
          TaskStates?: Record<string, { Events: { Type: string; DisplayMessage: string }[] }>;
        }[]
      >(addr, "/v1/job/planter/allocations");
      if (allocs.length !== 2 || !allocs.every((a) => ["complete", "failed"].includes(a.ClientStatus))) {
        return undefined;
      }
      return new Map(
        allocs.map((a) => [
          a.TaskGroup,
          {
            status: a.ClientStatus,
            events: Object.values(a.TaskStates ?? {}).flatMap((t) =>
              t.Events.map((e) => `${e.Type}: ${e.DisplayMessage}`),
            ),
          },
        ]),
      );
    },
    60_000,
  );
  // The host side first: nothing written, nothing created.
  assert.equal(fs.readFileSync(path.join(hostDir, "passwd"), "utf8"), "root:x:0:0\n");
  assert.deepEqual(fs.readdirSync(path.join(hostDir, "dir")), []);
  for (const [name, planted] of [
    ["file", "logs/file.stdout.0"],
    ["dir", "dir/logs"],
  ] as const) {
    const res = finals.get(name);
    assert.ok(res, `group ${name} has an alloc`);
    assert.equal(res.status, "failed", res.events.join("\n"));
    const why = res.events.find((e) => e.includes("does not follow links"));
    assert.ok(why, `an event says why:\n${res.events.join("\n")}`);
    assert.ok(why.includes(planted), why);
  }
  failed = false;
});
