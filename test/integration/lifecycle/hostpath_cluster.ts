/**
 * Shared setup for the lifecycle tests: a `-server` agent and `-client` agents on loopback, with
 * csi-hostpath run under raw_exec (controller and node plugin groups constrained to a node), one
 * host state dir (emulated shared storage) and optionally one call log shared by all instances.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { mountsUnder } from "../../../src/internal/mountinfo.js";
import type { CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { hostpathJobOf, hostpathPluginGroup } from "../../builders/hostpath_plugin_job.js";
import {
  getJson,
  killProcessesUnder,
  logTail,
  runCli,
  startCluster,
  type AgentProcess,
} from "../../helpers/agent_process.js";

export interface HostpathOptions {
  /** Pass --attach-required to every plugin instance. */
  attachRequired?: boolean;
  /** Pass --call-log=<dir>/calls.jsonl to every plugin instance. */
  callLog?: boolean;
}

export interface ClaimsView {
  ReadAllocs: Record<string, unknown> | null;
  WriteAllocs: Record<string, unknown> | null;
  PastClaims: Record<string, unknown>;
}

export const claimCount = (v: ClaimsView) =>
  Object.keys(v.ReadAllocs ?? {}).length +
  Object.keys(v.WriteAllocs ?? {}).length +
  Object.keys(v.PastClaims).length; // absent (no ?claims=true) must throw, not count 0

export const line = (c: CallRecord) => `${c.method}:${c.node_id}:${c.code}`;

export interface TaskStateView {
  FinishedAt: string | null;
  Events: { Type: string; Time: number }[];
}

/** An alloc as `/v1/job/:id/allocations` lists it, the fields the drain tests read. */
export interface AllocView {
  ID: string;
  Name: string;
  NodeName: string;
  DesiredStatus: string;
  ClientStatus: string;
  DesiredTransition?: { Migrate?: boolean | null };
  TaskStates: Record<string, TaskStateView> | null;
}

/** Unix ms when the task began to stop (its Killing event), else when it finished. */
export function stoppedAtMs(alloc: AllocView, task: string): number {
  const state = alloc.TaskStates?.[task];
  const killing = state?.Events.find((e) => e.Type === "Killing");
  if (killing) return killing.Time / 1e6;
  assert.ok(state?.FinishedAt, `task ${task} of ${alloc.Name} has stopped`);
  return Date.parse(state.FinishedAt);
}

/** The HCL of a single-node-writer file-system volume `id` of the hostpath plugin, then `extra`. */
export const volumeHcl = (id: string, extra = "") =>
  `id = "${id}"\nname = "${id}"\ntype = "csi"\nplugin_id = "hostpath"\ncapability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n${extra}`;

/**
 * A job using volume `source` single-node-writer at /data, running `script` in an exec task. The
 * optional lines (job type, node constraint and its operator, count, per_alloc) appear only when given.
 */
export function userJob(
  id: string,
  opts: {
    source: string;
    script: string;
    type?: string;
    node?: string;
    operator?: string;
    count?: number;
    perAlloc?: boolean;
  },
): string {
  const type = opts.type === undefined ? "" : `  type = "${opts.type}"\n`;
  const operator = opts.operator === undefined ? "" : `    operator  = "${opts.operator}"\n`;
  const constraint =
    opts.node === undefined
      ? ""
      : `  constraint {\n    attribute = "\${node.unique.name}"\n${operator}    value     = "${opts.node}"\n  }\n`;
  const count = opts.count === undefined ? "" : `    count = ${opts.count}\n`;
  const perAlloc = opts.perAlloc === undefined ? "" : `      per_alloc       = ${opts.perAlloc}\n`;
  return `job "${id}" {
${type}${constraint}  group "g" {
${count}    volume "data" {
      type            = "csi"
      source          = "${opts.source}"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
${perAlloc}    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(opts.script)}]
      }
      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
`;
}

/** A cluster of agents in a temp dir; `start` in `before`, `teardown` in `after`. */
export class HostpathCluster {
  dir!: string;
  addr!: string;
  server!: AgentProcess;
  clients!: Map<string, AgentProcess>;

  constructor(
    private readonly prefix: string,
    private readonly opts: HostpathOptions = {},
  ) {}

  get storage(): string {
    return path.join(this.dir, "storage");
  }

  get callLog(): string {
    return path.join(this.dir, "calls.jsonl");
  }

  async start(
    names: string[],
    timeoutMs?: number,
    serverArgs?: string[],
    clientArgs?: string[],
  ): Promise<void> {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), this.prefix));
    ({
      addr: this.addr,
      server: this.server,
      clients: this.clients,
    } = await startCluster(this.dir, names, timeoutMs, serverArgs, clientArgs));
  }

  /**
   * Kills what is left (with `kill`, by default every process under the dir), prints the agents'
   * log tails unless `passed` and nothing was left, unmounts and removes the dir.
   */
  async teardown(passed: boolean, kill: (dir: string) => unknown[] = killProcessesUnder): Promise<void> {
    // The fields are unset if `start` failed.
    for (const c of this.clients?.values() ?? []) c.kill();
    this.server?.kill();
    const leftovers = kill(this.dir);
    if (!passed || leftovers.length > 0) {
      for (const name of ["server", "a", "b"]) {
        process.stderr.write(`--- ${name}.log (tail) ---\n${logTail(path.join(this.dir, `${name}.log`))}\n`);
      }
    }
    for (const m of (await mountsUnder(this.dir)).reverse()) {
      try {
        execFileSync("umount", ["-l", m]);
      } catch {
        /* already gone */
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  async cli(args: string[]): Promise<string> {
    const r = await runCli(args, { BERTH_ADDR: this.addr });
    assert.equal(r.code, 0, `berth ${args.join(" ")}: ${r.stderr}\n${r.stdout}`);
    return r.stdout;
  }

  writeFile(name: string, text: string): string {
    const file = path.join(this.dir, name);
    fs.writeFileSync(file, text);
    return file;
  }

  /** A csi-hostpath group under raw_exec, constrained to `node`; node plugins report zone=`zone` if given. */
  pluginGroup(group: string, node: string, type: "controller" | "node", zone?: string): string {
    const args = [
      `--mode=${type}`,
      ...(this.opts.attachRequired ? ["--attach-required"] : []),
      `--state-dir=${this.storage}`,
      ...(this.opts.callLog ? [`--call-log=${this.callLog}`] : []),
      ...(type === "node" ? ["--node-id=${node.unique.name}"] : []),
      ...(type === "node" && zone !== undefined ? [`--topology-zone=${zone}`] : []),
    ];
    return hostpathPluginGroup(group, { driver: "raw_exec", type, args, node });
  }

  /** Runs job `job` made of `groups` (from `pluginGroup`), written to `file`. */
  async runPluginJob(file: string, job: string, groups: string[]): Promise<void> {
    await this.cli(["job", "run", this.writeFile(file, hostpathJobOf(job, groups))]);
  }

  getJson<T>(route: string): Promise<T> {
    return getJson<T>(this.addr, route);
  }

  allocsOf(job: string): Promise<AllocView[]> {
    return this.getJson<AllocView[]>(`/v1/job/${job}/allocations`);
  }
}
