/**
 * Wiring: compiled agent options → a server and/or a node agent. In -dev both run in one process and
 * the node agent still reaches the server through its HTTP address and RPC socket, the same path a
 * remote node uses. Stopping a -dev agent stops every alloc and releases every volume first (there
 * is no later restart to resume from), then removes the throwaway data dir.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Logger } from "../internal/log.js";
import { Client } from "../client/client.js";
import { removeTreeNoMounts } from "../client/allocdir/alloc_dir.js";
import { Server } from "../server/server.js";
import { resolveHostVolumes } from "./config_file.js";
import type { AgentOptions } from "./options.js";

export class Agent {
  private server: Server | null = null;
  private client: Client | null = null;
  private dataDir = "";
  private tempDataDir = false;

  constructor(
    private readonly opts: AgentOptions,
    private readonly log: Logger,
  ) {}

  get httpAddress(): string | null {
    return this.server?.httpAddress ?? null;
  }

  async start(): Promise<void> {
    // The config files were read and merged with the flags before (options.ts loadAgentOptions).
    const fileConfig = this.opts.fileConfig;
    if (this.opts.dataDir) {
      this.dataDir = path.resolve(this.opts.dataDir);
      await fs.mkdir(this.dataDir, { recursive: true });
    } else {
      this.dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-dev-"));
      this.tempDataDir = true;
    }
    // Checked before anything starts, so a bad path fails the agent at once. Flags come after the
    // files' settings in opts.hostVolumes, so a -host-volume of the same name wins.
    const hostVolumes = this.opts.client ? await resolveHostVolumes(this.opts.hostVolumes, this.dataDir) : {};
    if (this.opts.server) {
      const serverDir = path.join(this.dataDir, "server");
      await fs.mkdir(serverDir, { recursive: true });
      this.server = new Server({
        dataDir: serverDir,
        httpAddr: this.opts.httpAddr,
        log: this.log.child("server"),
        ...(fileConfig.limits ? { limits: fileConfig.limits } : {}),
        ...(this.opts.heartbeatTtlMs !== null ? { heartbeatTtlMs: this.opts.heartbeatTtlMs } : {}),
      });
      await this.server.start();
    }
    if (this.opts.client) {
      const servers = this.opts.servers.length > 0 ? this.opts.servers : [this.server!.httpAddress];

      this.client = new Client({
        dataDir: this.dataDir,
        servers,
        nodeName: this.opts.nodeName,
        datacenter: this.opts.datacenter,
        nodeClass: this.opts.nodeClass,
        drivers: this.opts.drivers,
        hostVolumes,
        meta: this.opts.meta,
        ...(fileConfig.reserved ? { reserved: fileConfig.reserved } : {}),
        ...(fileConfig.resourceOverrides ? { resourceOverrides: fileConfig.resourceOverrides } : {}),
        log: this.log.child("client"),
        ...(this.opts.csiPluginWaitMs === null ? {} : { pluginWaitTimeoutMs: this.opts.csiPluginWaitMs }),
        ...(this.opts.csiClaimRetryMs === null ? {} : { claimRetryDeadlineMs: this.opts.csiClaimRetryMs }),
        ...(this.opts.csiCallTimeoutMs === null ? {} : { csiCallTimeoutMs: this.opts.csiCallTimeoutMs }),
      });
      await this.client.start();
    }
  }

  /** Graceful stop. -dev: stop and clean up every alloc, then the parts, then the temp dir. */
  async stop(): Promise<void> {
    try {
      if (this.client) {
        if (this.opts.dev) await this.client.stopAllAllocs();
        await this.client.shutdown();
      }
    } finally {
      // The server stops in order (intake, loops, store) even when the client's stop failed.
      await this.server?.stop();
    }
    if (this.tempDataDir) {
      await removeTreeNoMounts(this.dataDir).catch((err: unknown) =>
        this.log.error("could not remove the dev data dir", { dir: this.dataDir, error: err }),
      );
    }
  }
}
