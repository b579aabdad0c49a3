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
import { DEFAULT_INTRO_SETTINGS } from "../server/rpc/node_intro.js";
import { nodeRpcWarning } from "./node_rpc_warning.js";
import { ensureDirMode, PRIVATE_DIR_MODE, TRAVERSE_ONLY_DIR_MODE } from "../internal/private_files.js";
import { resolveHostVolumes } from "./config_file.js";
import { clientTls, dialAddress, serverTls } from "./config_tls.js";
import { aclOptions } from "./config_acl.js";
import type { AgentOptions } from "./options.js";
import { Telemetry } from "../internal/metrics/telemetry.js";
import { collectRuntimeMetrics } from "../internal/metrics/runtime.js";
import { telemetrySettings } from "./config_telemetry.js";
import { agentInfoOf } from "./agent_info.js";
import { ClientHttp } from "./client_http.js";
import { parseJobspecForServer } from "./jobspec_parser.js";

export class Agent {
  private server: Server | null = null;
  private client: Client | null = null;
  /** A client-only agent's HTTP API (client_http.ts); a server's is the server's own. */
  private clientHttp: ClientHttp | null = null;
  private dataDir = "";
  private tempDataDir = false;
  /** Stops the runtime metrics (internal/metrics/runtime.ts); a no-op until the agent started. */
  private stopRuntimeMetrics: () => void = () => undefined;

  constructor(
    private readonly opts: AgentOptions,
    private readonly log: Logger,
  ) {}

  get httpAddress(): string | null {
    return this.server?.httpAddress ?? this.clientHttp?.url ?? null;
  }

  /** HOST:PORT the HTTP listener is really bound to (0.0.0.0:4646 for a wildcard bind). */
  get httpBind(): string | null {
    return this.server?.boundAddress ?? this.clientHttp?.boundAddress ?? null;
  }

  async start(): Promise<void> {
    // The config files were read and merged with the flags before (options.ts loadAgentOptions).
    const fileConfig = this.opts.fileConfig;
    // TLS files are read and checked now, before anything listens or dials.
    const listenerTls = this.opts.server ? serverTls(fileConfig.tls) : undefined;
    const dialTls = this.opts.client ? clientTls(fileConfig.tls) : undefined;
    if (this.opts.dataDir) {
      this.dataDir = path.resolve(this.opts.dataDir);
    } else {
      this.dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "berth-dev-"));
      this.tempDataDir = true;
    }
    // Others may traverse the data dir (a task running as another user reaches its alloc dir) but
    // not list it; the server and client state dirs below it are root's alone (0700).
    ensureDirMode(this.dataDir, TRAVERSE_ONLY_DIR_MODE);
    // Checked before anything starts, so a bad path fails the agent at once. Flags come after the
    // files' settings in opts.hostVolumes, so a -host-volume of the same name wins.
    const hostVolumes = this.opts.client ? await resolveHostVolumes(this.opts.hostVolumes, this.dataDir) : {};
    // One registry per agent, shared by its server and client (in -dev, one /v1/metrics shows both).
    const telemetry = new Telemetry(telemetrySettings(fileConfig.telemetry, this.opts.dev), (err) =>
      this.log.warn("collecting metrics failed", { error: err }),
    );
    this.stopRuntimeMetrics = collectRuntimeMetrics(telemetry);
    if (this.opts.server) {
      const serverDir = path.join(this.dataDir, "server");
      ensureDirMode(serverDir, PRIVATE_DIR_MODE);
      this.server = new Server({
        dataDir: serverDir,
        httpAddr: this.opts.httpAddr,
        rpcAddr: this.opts.rpcAddr ?? undefined,
        advertise: this.opts.advertise,
        log: this.log.child("server"),
        limits: fileConfig.limits,
        tls: listenerTls,
        acl: fileConfig.acl ? aclOptions(fileConfig.acl) : undefined,
        httpApi: fileConfig.httpApi,
        heartbeatTtlMs: this.opts.heartbeatTtlMs ?? undefined,
        failoverHeartbeatTtlMs: this.opts.failoverHeartbeatTtlMs ?? undefined,
        controllerCondition:
          this.opts.csiControllerConditionIntervalMs !== null
            ? { intervalMs: this.opts.csiControllerConditionIntervalMs }
            : undefined,
        attachmentReconcile: {
          intervalMs: this.opts.csiAttachmentReconcileIntervalMs ?? undefined,
          dryRun: this.opts.csiAttachmentReconcileDryRun,
        },
        capacity:
          this.opts.csiCapacityIntervalMs !== null
            ? { intervalMs: this.opts.csiCapacityIntervalMs }
            : undefined,
        telemetry,
        etcd: this.opts.etcd ?? undefined,
        member: {
          name: this.opts.nodeName ?? undefined,
          datacenter: this.opts.datacenter,
        },
        // -dev listens on loopback only: its own node is not warned about unless configured.
        intro: fileConfig.clientIntroduction ?? (this.opts.dev ? { enforcement: "none" } : {}),
        agentInfo: agentInfoOf(this.opts, this.dataDir, fileConfig.acl?.enabled === true, () => this.client),
        jobspecParser: parseJobspecForServer,
      });
      await this.server.start();
      const exposed = nodeRpcWarning({
        dev: this.opts.dev,
        https: listenerTls !== undefined,
        mtls: listenerTls?.rpc === true,
        enforcement: fileConfig.clientIntroduction?.enforcement ?? DEFAULT_INTRO_SETTINGS.enforcement,
      });
      if (exposed) this.log.child("server").warn(exposed.message, exposed.fields);
    }
    if (this.opts.client) {
      const servers = (this.opts.servers.length > 0 ? this.opts.servers : [this.server!.httpAddress]).map(
        (s) => dialAddress(s, fileConfig.tls),
      );

      this.client = new Client({
        dataDir: this.dataDir,
        servers,
        nodeName: this.opts.nodeName,
        introToken: this.opts.clientIntroToken ?? undefined,
        datacenter: this.opts.datacenter,
        nodeClass: this.opts.nodeClass,
        drivers: this.opts.drivers,
        hostVolumes,
        meta: this.opts.meta,
        reserved: fileConfig.reserved,
        resourceOverrides: fileConfig.resourceOverrides,
        log: this.log.child("client"),
        tls: dialTls,
        telemetry,
        pluginWaitTimeoutMs: this.opts.csiPluginWaitMs ?? undefined,
        claimRetryDeadlineMs: this.opts.csiClaimRetryMs ?? undefined,
        csiCallTimeoutMs: this.opts.csiCallTimeoutMs ?? undefined,
        volumeStatsIntervalMs: this.opts.csiVolumeStatsIntervalMs ?? undefined,
        csiUnmountEscalateAfterMs: this.opts.csiUnmountEscalateAfterMs ?? undefined,
      });
      // Bound first, so a configured address that is taken fails the agent before any task starts.
      if (!this.server) await this.startClientHttp(telemetry, dialTls);
      await this.client.start();
    }
  }

  /**
   * A client-only agent serves its own HTTP API (client_http.ts) with the listener TLS a server
   * would use. A configured address that cannot be bound fails the agent; the default one (another
   * agent on this host has it) is a warning: the node's work does not depend on its API.
   */
  private async startClientHttp(telemetry: Telemetry, dialTls: ReturnType<typeof clientTls>): Promise<void> {
    const fileConfig = this.opts.fileConfig;
    const http = new ClientHttp({
      addr: this.opts.httpAddr,
      // HTTPS only with tls { http = true }; a node's `rpc` alone is about how it dials its servers.
      tls: fileConfig.tls?.http === true ? serverTls(fileConfig.tls) : undefined,
      dialTls,
      telemetry,
      agent: agentInfoOf(this.opts, this.dataDir, fileConfig.acl?.enabled === true, () => this.client),
      server: () => this.client?.serverAddress ?? null,
      log: this.log.child("http"),
    });
    try {
      await http.start();
      this.clientHttp = http;
    } catch (err) {
      if (this.opts.httpAddrGiven) throw err;
      this.log.warn("the client's HTTP API is not served: its default address could not be bound", {
        http_addr: this.opts.httpAddr,
        error: err,
      });
    }
  }

  /** Graceful stop. -dev: stop and clean up every alloc, then the parts, then the temp dir. */
  async stop(): Promise<void> {
    this.stopRuntimeMetrics();
    await this.clientHttp?.stop();
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
