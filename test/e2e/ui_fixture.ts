/**
 * The web UI test's cluster: the README's quick start through the real CLI against a real
 * `berth agent -dev -config examples/hostpath/agent.hcl` (the hostpath plugin job, volume `demo`),
 * and a writer that holds `demo` (it writes, logs a line, then sleeps until stopped). Plus a
 * "squatter": a process of the test that sits in the writer's published target, so the node's
 * NodeUnpublish fails ("target is busy") after the writer stops and the claim stays in release —
 * the case `volume detach` exists for. cleanup() leaves nothing running or mounted, also after a
 * failure half-way.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { mountsUnder } from "../../src/internal/mountinfo.js";
import {
  eventually,
  getJson,
  killProcessGroupsUnder,
  logTail,
  REPO_ROOT,
  runCli,
  startExampleDevAgent,
  type AgentProcess,
} from "../helpers/agent_process.js";

export const WRITER_LINE = "wrote hello to /data/hello.txt";

const WRITER_JOB = `job "writer" {
  type = "batch"
  group "writer" {
    volume "data" {
      type            = "csi"
      source          = "demo"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "writer" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello > /data/hello.txt && echo '${WRITER_LINE}' && exec sleep 600"]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;

interface AllocStub {
  ID: string;
  ClientStatus: string;
  NodeID: string;
}

export class UiCluster {
  agent?: AgentProcess;
  addr = "";
  nodeId = "";
  writerAlloc = "";
  private squatter?: ChildProcess;

  readonly dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-e2e-ui-"));
  readonly logFile = path.join(os.tmpdir(), `berth-e2e-ui-${process.pid}.log`);

  async cli(args: string[]): Promise<string> {
    const r = await runCli(args, { BERTH_ADDR: this.addr }, 120_000);
    if (r.code !== 0) throw new Error(`berth ${args.join(" ")}: exit ${r.code}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  }

  /** Agent, plugin (healthy), volume demo, and the writer running with its claim. */
  async start(): Promise<void> {
    const started = await startExampleDevAgent(this.dataDir, this.logFile);
    this.agent = started.agent;
    this.addr = started.addr;
    await this.cli(["job", "run", path.join(REPO_ROOT, "examples/hostpath/plugin.hcl")]);
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const p = await getJson<{ NodesHealthy: number; ControllersHealthy: number }>(
          this.addr,
          "/v1/plugin/csi/hostpath",
        );
        return p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? true : undefined;
      },
      90_000,
    );
    await this.cli(["volume", "create", path.join(REPO_ROOT, "examples/hostpath/volume.hcl")]);
    const jobFile = path.join(this.dataDir, "writer.hcl");
    fs.writeFileSync(jobFile, WRITER_JOB);
    await this.cli(["job", "run", jobFile]);
    const alloc = await this.writerWith("running");
    this.writerAlloc = alloc.ID;
    this.nodeId = alloc.NodeID;
  }

  async writerWith(status: string | RegExp): Promise<AllocStub> {
    return eventually(
      `the writer alloc to be ${String(status)}`,
      async () => {
        const allocs = await getJson<AllocStub[]>(this.addr, "/v1/job/writer/allocations");
        return allocs.find((a) =>
          typeof status === "string" ? a.ClientStatus === status : status.test(a.ClientStatus),
        );
      },
      60_000,
    );
  }

  /** A process of the test with its working directory in the writer's published target. */
  async squat(): Promise<void> {
    const target = await eventually("the writer's publish target", async () =>
      (await mountsUnder(this.dataDir)).find((m) => m.includes(`/per-alloc/${this.writerAlloc}/demo/`)),
    );
    this.squatter = spawn("sleep", ["600"], { cwd: target, stdio: "ignore" });
  }

  /** Ends the squatter and waits until it is gone (its cwd no longer pins the mount). */
  async unsquat(): Promise<void> {
    const s = this.squatter;
    if (!s || s.exitCode !== null || s.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => s.once("exit", () => resolve()));
    s.kill("SIGKILL");
    await gone;
  }

  async claimCount(): Promise<number> {
    const v = await getJson<Record<string, Record<string, unknown> | null>>(
      this.addr,
      "/v1/volume/csi/demo?claims=true",
    );
    return ["ReadClaims", "WriteClaims", "PastClaims"].reduce(
      (n, k) => n + Object.keys(v[k] ?? {}).length,
      0,
    );
  }

  /** Kills whatever is left (squatter, agent, tasks), unmounts, removes the data dir. */
  async cleanup(): Promise<string[]> {
    await this.unsquat();
    this.agent?.kill();
    const leftovers = killProcessGroupsUnder(this.dataDir).map(String);
    for (const m of (await mountsUnder(this.dataDir)).reverse()) {
      leftovers.push(m);
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    return leftovers;
  }

  /** Pids of processes whose root or command line is in the data dir (tasks, chrooted plugins). */
  processesInDataDir(): number[] {
    const out: number[] = [];
    for (const entry of fs.readdirSync("/proc")) {
      const pid = Number(entry);
      if (!Number.isInteger(pid) || pid === process.pid) continue;
      try {
        const root = fs.readlinkSync(`/proc/${pid}/root`);
        const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
        if (root.startsWith(this.dataDir) || cmd.includes(this.dataDir)) out.push(pid);
      } catch {
        /* gone, or not ours */
      }
    }
    return out;
  }

  logTail(): string {
    return logTail(this.logFile, 60);
  }
}
