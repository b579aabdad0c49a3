/**
 * The rig of the attachment reconciler's end-to-end tests (attachment_reconcile*.test.ts): an
 * in-process server on loopback (SQLite state file, the reconciler's options as given), a real
 * `berth agent -client` process, berth's csi-hostpath as a monolith raw_exec plugin task with
 * `--attach-required` (its attachments are files in its state dir: the provider's own records,
 * which the tests change behind berth's back as a real provider drifts), a single-node-writer
 * volume "vol", and an exec app job that writes into the volume. `close()` stops everything and
 * answers what it had to clean up.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { readCallLog, type CallRecord } from "../../../src/csi/hostpath/call_log.js";
import { nullLogger } from "../../../src/internal/log.js";
import { Telemetry } from "../../../src/internal/metrics/telemetry.js";
import type { AttachmentReconcileOptions } from "../../../src/server/leader/attachment_reconciler.js";
import { Server } from "../../../src/server/server.js";
import { hostpathPluginJob } from "../../builders/hostpath_plugin_job.js";
import { AgentProcess, eventually, logTail } from "../../helpers/agent_process.js";
import { Cli, allocOf, cleanUp, type AllocView } from "../restart/restart_fixtures.js";

const SLEEP = 86_417;
/** The provider's ID of the agent's node (csi-hostpath's --node-id). */
export const NODE_EXT_ID = "n1";

export interface ClaimView {
  AllocationID: string;
  State: string;
}
export interface ReconcileVolume {
  ExternalID: string;
  WriteClaims: Record<string, ClaimView>;
  AttachmentReconcile?: {
    Action: string;
    Outcome: string;
    ExternalNodeID: string;
    AllocationID: string;
  } | null;
}

export class ReconcileRig {
  readonly dir: string;
  readonly storage: string;
  readonly cli: Cli;
  externalId = "";
  private agent: AgentProcess | null = null;
  private readonly agentLog: string;

  private constructor(
    readonly server: Server,
    dir: string,
  ) {
    this.dir = dir;
    this.storage = path.join(dir, "storage");
    this.agentLog = path.join(dir, "agent.log");
    this.cli = new Cli(server.httpAddress);
  }

  static async start(prefix: string, reconcile: Partial<AttachmentReconcileOptions>): Promise<ReconcileRig> {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
    const server = new Server({
      dataDir: path.join(dir, "server"),
      httpAddr: "127.0.0.1:0",
      log: nullLogger,
      attachmentReconcile: reconcile,
      telemetry: new Telemetry({ prometheusMetrics: true }),
    });
    await server.start();
    const rig = new ReconcileRig(server, dir);
    await rig.boot();
    return rig;
  }

  private async boot(): Promise<void> {
    this.agent = new AgentProcess(
      [
        "-client",
        "-data-dir",
        path.join(this.dir, "a"),
        `-servers=${new URL(this.cli.addr).host}`,
        "-node-name=a",
      ],
      this.agentLog,
    );
    await eventually("node a to be ready", async () => {
      const nodes = await this.cli.get<{ Status: string }[]>("/v1/nodes");
      return nodes?.some((n) => n.Status === "ready") ? true : undefined;
    });
    const plugin = path.join(this.dir, "plugin.hcl");
    fs.writeFileSync(
      plugin,
      hostpathPluginJob({
        driver: "raw_exec",
        args: [
          `--node-id=${NODE_EXT_ID}`,
          "--attach-required",
          `--state-dir=${this.storage}`,
          `--call-log=${path.join(this.dir, "calls.jsonl")}`,
        ],
      }),
    );
    await this.cli.run(["job", "run", plugin]);
    await eventually("plugin hostpath to be healthy", async () => {
      const p = await this.cli.get<{ NodesHealthy: number; ControllersHealthy: number }>(
        "/v1/plugin/csi/hostpath",
      );
      return p && p.NodesHealthy >= 1 && p.ControllersHealthy >= 1 ? p : undefined;
    });
    const spec = path.join(this.dir, "vol.hcl");
    fs.writeFileSync(
      spec,
      'id = "vol"\nname = "vol"\ntype = "csi"\nplugin_id = "hostpath"\n' +
        'capability {\n  access_mode     = "single-node-writer"\n  attachment_mode = "file-system"\n}\n',
    );
    await this.cli.run(["volume", "create", spec]);
    this.externalId = (await this.volume()).ExternalID;
  }

  async volume(): Promise<ReconcileVolume> {
    return (await this.cli.get<ReconcileVolume>("/v1/volume/csi/vol?claims=true"))!;
  }

  /** The store index now (a stream opened from it sees what comes after). */
  async index(): Promise<number> {
    return Number((await fetch(`${this.cli.addr}/v1/volume/csi/vol`)).headers.get("x-nomad-index"));
  }

  private attachmentsDir(): string {
    return path.join(this.storage, "attachments", this.externalId);
  }

  /** The provider's nodes the volume is published to, read from its own records. */
  attachedNodes(): string[] {
    if (!fs.existsSync(this.attachmentsDir())) return [];
    return fs
      .readdirSync(this.attachmentsDir())
      .filter((f) => f.endsWith(".json"))
      .map((f) => Buffer.from(f.slice(0, -".json".length), "base64url").toString())
      .sort();
  }

  /** Records, behind berth's back, that the provider has the volume attached to `nodeId`. */
  addAttachment(nodeId: string): void {
    fs.mkdirSync(this.attachmentsDir(), { recursive: true });
    const file = path.join(this.attachmentsDir(), Buffer.from(nodeId).toString("base64url") + ".json");
    const a = { volumeId: this.externalId, nodeId, accessMode: "SINGLE_NODE_WRITER", readonly: false };
    fs.writeFileSync(file, JSON.stringify(a) + "\n");
  }

  /** Drops, behind berth's back, the provider's record of the attachment to `nodeId`. */
  loseAttachment(nodeId: string): void {
    fs.rmSync(path.join(this.attachmentsDir(), Buffer.from(nodeId).toString("base64url") + ".json"));
  }

  calls(): CallRecord[] {
    return readCallLog(path.join(this.dir, "calls.jsonl")).filter((c) => c.volume_id === this.externalId);
  }

  /** Runs an exec job that appends a line to the volume every 0.2 s; answers its running alloc. */
  async runApp(id: string, timeoutMs = 60_000): Promise<AllocView> {
    const file = path.join(this.dir, `${id}.hcl`);
    fs.writeFileSync(
      file,
      `job "${id}" {
  group "g" {
    volume "data" {
      type            = "csi"
      source          = "vol"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo ${id} >> /data/log.txt; sleep 0.2; done"]
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
    await this.cli.run(["job", "run", "-detach", file]);
    return allocOf(this.cli, id, "running", timeoutMs);
  }

  /** Lines the app wrote into the volume (read through the provider's directory). */
  appLines(): number {
    const f = path.join(this.storage, "volumes", this.externalId, "log.txt");
    return fs.existsSync(f) ? fs.readFileSync(f, "utf8").split("\n").length - 1 : 0;
  }

  /** Stops jobs, the volume, the plugin, the agent and the server; answers what was left. */
  async close(jobs: string[], failed: boolean): Promise<{ pids: number[]; mounts: string[] }> {
    try {
      for (const j of jobs) await this.cli.run(["job", "stop", "-purge", j]).catch(() => undefined);
      await eventually(
        "the volume's claims to be freed",
        async () => (Object.keys((await this.volume()).WriteClaims).length === 0 ? true : undefined),
        60_000,
      ).catch(() => undefined);
      await this.cli.run(["volume", "delete", "vol"]).catch(() => undefined);
      await this.cli.run(["job", "stop", "-purge", "plugin"]).catch(() => undefined);
      await eventually("the plugin task to exit", async () =>
        ((await this.cli.get<{ ClientStatus: string }[]>("/v1/job/plugin/allocations"))?.every(
          (a) => a.ClientStatus !== "running",
        ) ?? true)
          ? true
          : undefined,
      ).catch(() => undefined);
      if (this.agent) assert.equal(await this.agent.stop(60_000), 0, "the agent stops cleanly");
    } finally {
      this.agent?.kill();
      if (failed) process.stderr.write(`--- agent log (tail) ---\n${logTail(this.agentLog)}\n`);
      await this.server.stop().catch(() => undefined);
    }
    return cleanUp([this.dir], SLEEP);
  }
}
