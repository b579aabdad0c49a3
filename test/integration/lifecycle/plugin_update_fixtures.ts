/**
 * Shared pieces of the plugin-update tests: one real `berth agent -server -client` in a temp dir,
 * csi-hostpath as a job under raw_exec or exec (under exec its storage is a host volume, so it lies
 * outside every task dir and outlives plugin allocs), a volume, jobs using it, and a cleanup that
 * leaves no process or mount behind even after a failure.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import { AgentProcess, crashAgent, eventually, freePort, logTail } from "../../helpers/agent_process.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { Cli, cleanUp, type AllocView, type VolumeView } from "../restart/restart_fixtures.js";

export type PluginDriver = "raw_exec" | "exec";

export interface PluginOptions {
  faults?: string;
  stagePublishBaseDir?: string;
  /** More csi-hostpath flags. */
  args?: string[];
}
export const VOLUME = "shared";

export class UpdateRig {
  readonly dir: string;
  readonly dataDir: string;
  /** csi-hostpath's --state-dir on the host: `volumes/<id>` are the volumes' bytes. */
  readonly storage: string;
  readonly logFile: string;
  agent: AgentProcess | null = null;
  cli!: Cli;

  constructor(
    name: string,
    readonly driver: PluginDriver,
  ) {
    this.dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `berth-${name}-`)));
    this.dataDir = path.join(this.dir, "data");
    this.storage = path.join(this.dir, "storage");
    this.logFile = path.join(this.dir, "agent.log");
    fs.mkdirSync(this.storage);
  }

  private args: string[] = [];

  /** `extraArgs`: more agent arguments (e.g. `-config FILE`). */
  async start(extraArgs: string[] = []): Promise<void> {
    const port = await freePort();
    this.cli = new Cli(`http://127.0.0.1:${port}`);
    this.args = [
      "-server",
      "-client",
      "-data-dir",
      this.dataDir,
      "-http-addr",
      `127.0.0.1:${port}`,
      ...extraArgs,
    ];
    if (this.driver === "exec") this.args.push(`-host-volume=hostpath-data:${this.storage}`);
    this.agent = new AgentProcess(this.args, this.logFile);
    await this.nodeReady();
  }

  /** kill -9 of the agent, then a new one on the same data dir (tasks and mounts stay). */
  async crashAndRestart(): Promise<void> {
    await crashAgent(this.agent!);
    this.agent = new AgentProcess(this.args, this.logFile);
    await this.nodeReady();
  }

  private async nodeReady(): Promise<void> {
    await eventually("the node to be ready", async () => {
      const nodes = await this.cli.get<{ Status: string }[]>("/v1/nodes");
      return nodes?.some((n) => n.Status === "ready") ? true : undefined;
    });
  }

  /** Pass or fail: the agent killed, the log tail printed on failure, nothing left behind. */
  async cleanUp(passed: boolean, sleepSeconds: number): Promise<void> {
    this.agent?.kill();
    if (!passed) process.stderr.write(`--- agent.log (tail) ---\n${logTail(this.logFile, 120)}\n`);
    await cleanUp([this.dir], sleepSeconds);
  }

  write(name: string, text: string): string {
    const file = path.join(this.dir, name);
    fs.writeFileSync(file, text);
    return file;
  }

  /**
   * The plugin job; `generation` changes one argument (--max-volumes), so each new generation is a
   * plugin job update. `faults`: a csi-hostpath faults file; `stagePublishBaseDir`: the csi_plugin
   * block's stage_publish_base_dir.
   */
  pluginJob(generation: number, opts: PluginOptions = {}): string {
    const common = [
      "--node-id=${node.unique.id}",
      `--max-volumes=${1000 + generation}`,
      ...(opts.faults ? [`--faults=${opts.faults}`] : []),
      ...(opts.args ?? []),
    ];
    const base = opts.stagePublishBaseDir ? { stagePublishBaseDir: opts.stagePublishBaseDir } : {};
    if (this.driver === "raw_exec") {
      return hostpathPluginJob({
        jobType: "service",
        driver: "raw_exec",
        args: [`--state-dir=${this.storage}`, ...common],
        ...base,
      });
    }
    return hostpathPluginJob({
      jobType: "service",
      driver: "exec",
      args: ["--state-dir=/srv/hostpath", ...common],
      hostVolume: { source: "hostpath-data", destination: "/srv/hostpath" },
      ...base,
    });
  }

  /** Runs plugin generation `g`; resolves once exactly one plugin alloc runs and is healthy. */
  async runPlugin(g: number, opts: PluginOptions = {}): Promise<AllocView> {
    const before = new Set((await this.pluginAllocs()).map((a) => a.ID));
    await this.cli.run(["job", "run", this.write(`plugin-${g}.hcl`, this.pluginJob(g, opts))]);
    const running = await eventually(
      `plugin generation ${g} to replace the old one`,
      async () => {
        const allocs = await this.pluginAllocs();
        const failed = allocs.find((a) => a.ClientStatus === "failed");
        if (failed) throw new Error(`plugin alloc failed: ${JSON.stringify(failed.TaskStates)}`);
        const live = allocs.filter((a) => a.ClientStatus === "running" || a.ClientStatus === "pending");
        const fresh = live.filter((a) => !before.has(a.ID) && a.ClientStatus === "running");
        return live.length === 1 && fresh.length === 1 ? fresh[0] : undefined;
      },
      90_000,
    );
    await eventually(
      "plugin hostpath to be healthy",
      async () => {
        const p = await this.cli.get<{ NodesHealthy: number; ControllersHealthy: number }>(
          "/v1/plugin/csi/hostpath",
        );
        return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
      },
      60_000,
    );
    return running;
  }

  pluginAllocs(): Promise<AllocView[]> {
    return this.cli.get<AllocView[]>("/v1/job/plugin/allocations").then((a) => a ?? []);
  }

  async createVolume(accessMode = "multi-node-multi-writer"): Promise<VolumeView> {
    const spec = `id = "${VOLUME}"\nname = "${VOLUME}"\ntype = "csi"\nplugin_id = "hostpath"\ncapability {\n  access_mode = "${accessMode}"\n  attachment_mode = "file-system"\n}\n`;
    await this.cli.run(["volume", "create", this.write("volume.hcl", spec)]);
    return (await this.cli.get<VolumeView>(`/v1/volume/csi/${VOLUME}?claims=true`))!;
  }

  /** Where the volume's bytes are: the plugin's storage, never berth's data dir. */
  volumeDir(v: VolumeView): string {
    return path.join(this.storage, "volumes", v.ExternalID);
  }

  /** A job of `type` using the volume at /data in an exec task running `script`. */
  userJob(id: string, type: string, script: string, accessMode = "multi-node-multi-writer"): string {
    return this.write(
      `${id}.hcl`,
      `job "${id}" {
  type = "${type}"
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "${VOLUME}"
      access_mode     = "${accessMode}"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`,
    );
  }

  /** The job's only alloc once its status is `status`; fails fast when it failed. */
  allocOf(job: string, status: string, timeoutMs = 60_000): Promise<AllocView> {
    return eventually(
      `job ${job}'s alloc to be ${status}`,
      async () => {
        const a = (await this.cli.get<AllocView[]>(`/v1/job/${job}/allocations`))?.[0];
        if (a?.ClientStatus === "failed" && status !== "failed") {
          throw new Error(`alloc of ${job} failed: ${JSON.stringify(a.TaskStates)}`);
        }
        return a?.ClientStatus === status ? a : undefined;
      },
      timeoutMs,
    );
  }

  /**
   * Files (not directories) in berth's own per-alloc dirs, i.e. beside or beneath the volumes'
   * mounts but never through them: what a task wrote when it was handed an unmounted path.
   */
  async filesUnderPerAlloc(): Promise<string[]> {
    const root = path.join(this.dataDir, "client", "csi");
    const mounts = new Set(await mountsUnder(root));
    const out: string[] = [];
    const walk = (d: string, inPerAlloc: boolean) => {
      let entries: fs.Dirent[];
      try {
        entries = fs.readdirSync(d, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = path.join(d, e.name);
        if (mounts.has(p)) continue;
        if (e.isDirectory()) walk(p, inPerAlloc || e.name === "per-alloc");
        else if (inPerAlloc) out.push(p);
      }
    };
    walk(root, false);
    return out;
  }

  /** The end of every test: plugin stopped, agent exits 0, nothing mounted under the test dir. */
  async stopAll(): Promise<void> {
    await this.cli.run(["job", "stop", "plugin"]);
    await eventually("the plugin allocs to stop", async () => {
      const allocs = await this.pluginAllocs();
      return allocs.every((a) => a.ClientStatus !== "running" && a.ClientStatus !== "pending")
        ? true
        : undefined;
    });
    assert.equal(await this.agent!.stop(30_000), 0, "the agent exits 0");
    assert.deepEqual(await mountsUnder(this.dir), [], "nothing is mounted under the test dir");
  }
}

/** A number written by the counter task, or undefined while the file is missing or mid-write. */
export function readCounter(file: string): number | undefined {
  try {
    const n = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}
