/**
 * The node agent: wires the state DB, drivers, plugin registry, csimanager, volume manager and
 * alloc runners to one connection to the server. It registers (with its fingerprint) on every
 * connection, heartbeats, reports fingerprint changes and alloc status, runs the allocs the server
 * assigns, and answers the server's ClientCSI calls.
 */
import fs from "node:fs/promises";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { sleep } from "../internal/abort.js";
import { BerthError, isBerthError } from "../structs/errors.js";
import type { DriverInfo, NodeResources } from "../structs/node.js";
import type { CSIInfo } from "../structs/plugin.js";
import { safeJoin } from "../structs/ids.js";
import { AllocSync } from "./alloc_sync.js";
import { AllocUpdateBatcher } from "./alloc_updates.js";
import { CsiManager } from "./csimanager/manager.js";
import { VolumeManager } from "./csimanager/volume_manager.js";
import { volumeStatsPoller } from "./volume_stats_wiring.js";
import { startAllocMetrics } from "./alloc_metrics_wiring.js";
import { KeyedMutex } from "../internal/keyed_mutex.js";
import type { TaskDriver } from "./drivers/driver.js";
import { ExecDriver } from "./drivers/exec/exec_driver.js";
import { RawExecDriver } from "./drivers/raw_exec/raw_exec_driver.js";
import { DockerDriver } from "./drivers/docker/docker_driver.js";
import { watchDriverHealth } from "./driver_health.js";
import { PluginRegistry } from "./dynamicplugins/registry.js";
import { buildNode, fingerprintNode, loadOrCreateNodeId, loadOrCreateNodeSecret } from "./node_identity.js";
import { ReportClock } from "./report_order.js";
import { reservedResources } from "./fingerprint/resources.js";
import { allocAccess } from "./alloc_access.js";
import { registerClientAllocHandlers } from "./rpc/client_alloc.js";
import { registerClientCsiHandlers } from "./rpc/client_csi.js";
import { nodeVolumeAccess, type NodeVolumeAccess } from "./rpc/client_csi_node.js";
import { ServerConnection, type ServerPeer } from "./rpc/server_conn.js";
import { StateDB } from "./state/state_db.js";
import { PluginDirs } from "./allocrunner/taskrunner/plugin_dirs.js";
import { runnerFactory, taskNodeOf } from "./runner_factory.js";
import { csiClientFactory, volumesNeedingAttentionGauge } from "./csi_metrics.js";
import { leaseFile, NodeLease } from "./fence/node_lease.js";
import { SelfFence } from "./fence/self_fence.js";
import type { ClientOptions } from "./client_options.js";
import { introTokenField } from "./intro_token.js";
export type { ClientOptions };

export class Client {
  private stateDb: StateDB | null = null;
  private conn: ServerConnection | null = null;
  private csi: CsiManager | null = null;
  private volumeStats: ReturnType<typeof volumeStatsPoller> | null = null;
  private allocMetrics: ReturnType<typeof startAllocMetrics> = null;
  private sync: AllocSync | null = null;
  private lease: NodeLease | null = null;
  private fence: SelfFence | null = null;
  private updates: AllocUpdateBatcher | null = null;
  private readonly stopped = new AbortController();
  private heartbeat: Promise<void> | null = null;
  /** The server's TTL from each registration; short at first, so the first heartbeat comes soon. */
  private heartbeatTtlMs = 1_000;
  private fingerprint: { controllers: Record<string, CSIInfo>; nodes: Record<string, CSIInfo> } = {
    controllers: {},
    nodes: {},
  };
  private drivers = new Map<string, TaskDriver>();
  private driverInfo: Record<string, DriverInfo> = {};
  private driverWatch: Promise<void> | null = null;
  private attributes: Record<string, string> = {};
  private resources: NodeResources | undefined;
  nodeId = "";
  /** Proves this agent is node `nodeId` to the server (node_identity.ts); sent only in Node.Register. */
  private nodeSecret = "";
  /** Orders this agent's Node.Register and Node.UpdateFingerprint reports (report_order.ts). */
  private reports: ReportClock | undefined;
  /** Whether the agent holds a connection to a server now (`/v1/agent/health`'s client part). */
  get serverConnected(): boolean {
    return this.conn?.connected ?? false;
  }

  /** The URL of the server this agent is connected to (or dials next); null before start. */
  get serverAddress(): string | null {
    return this.conn?.serverAddr ?? null;
  }

  private get nodeName(): string {
    return this.opts.nodeName ?? os.hostname();
  }

  constructor(private readonly opts: ClientOptions) {}

  async start(): Promise<void> {
    const { log, dataDir } = this.opts;
    await fs.mkdir(safeJoin(dataDir, "alloc"), { recursive: true });
    this.nodeId = await loadOrCreateNodeId(safeJoin(dataDir, "client"));
    this.nodeSecret = await loadOrCreateNodeSecret(safeJoin(dataDir, "client"));
    this.reports = await ReportClock.open(safeJoin(dataDir, "client"));
    const seams = this.opts.seams ?? {};
    const stateDb = StateDB.open(seams.inMemoryState ? ":memory:" : dataDir);
    this.stateDb = stateDb;
    if (this.opts.telemetry) volumesNeedingAttentionGauge(this.opts.telemetry, stateDb);
    this.lease = new NodeLease(
      seams.inMemoryState ? null : leaseFile(safeJoin(dataDir, "client")),
      log.child("lease"),
    );
    await this.startDrivers();
    const { registry, csi, locks, volumeManager } = this.csiParts(stateDb);
    const pluginDirs = new PluginDirs({ dataDir, store: stateDb, log: log.child("plugin_dirs") });
    const conn = new ServerConnection({
      servers: this.opts.servers.length > 0 ? this.opts.servers : ["http://127.0.0.1:4646"],
      tls: this.opts.tls,
      log: log.child("rpc"),
      installHandlers: (peer) =>
        this.installHandlers(peer, nodeVolumeAccess({ stateDb, registry, volumeManager })),
      onConnect: (peer, signal) => this.register(peer, signal),
      localAddress: seams.localAddress || undefined,
    });
    this.conn = conn;
    const reports = this.reports;
    this.updates = new AllocUpdateBatcher(this.nodeId, conn, log.child("alloc_updates"), 100, () =>
      reports?.next(),
    );
    const newRunner = runnerFactory({
      ...{
        opts: this.opts,
        node: taskNodeOf(this.opts, this.nodeId, this.nodeName, this.attributes),
        rpc: conn,
        registry,
        volumeManager,
        stateDb,
        pluginDirs,
        log,
      },
      onUpdate: (u) => this.updates?.push(u),
      driverFor: (name) => this.driverFor(name),
    });
    // A runner that throws is reported as a failed alloc, the error as its description.
    this.sync = new AllocSync(this.nodeId, conn, newRunner, log.child("alloc_sync"), (alloc, err) =>
      this.updates?.push({
        ID: alloc.ID,
        ClientStatus: "failed",
        ClientDescription: `alloc runner failed: ${err.message}`,
        TaskStates: alloc.TaskStates ?? {},
      }),
    );
    for (const p of seams.plugins ?? []) registry.register(p);
    this.run({ stateDb, registry, csi, locks, conn, sync: this.sync, lease: this.lease });
  }

  /** Fingerprints the drivers (none of its own under the seams' driverInfo) and watches their health. */
  private async startDrivers(): Promise<void> {
    const { log, dataDir } = this.opts;
    const seams = this.opts.seams ?? {};
    const rawExec = new RawExecDriver({ enabled: this.opts.drivers?.rawExec?.enabled ?? false });
    Object.assign(this.driverInfo, seams.driverInfo);
    const docker = new DockerDriver({ ...this.opts.drivers?.docker, log: log.child("docker") });
    for (const d of seams.driverInfo ? [] : [new ExecDriver(), rawExec, docker]) {
      this.drivers.set(d.name, d);
      this.driverInfo[d.name] = await d.fingerprint();
    }
    const drivers = [...this.drivers.values()];
    const onDriverChange = () => void this.sendFingerprint();
    this.driverWatch = watchDriverHealth(drivers, this.driverInfo, this.stopped.signal, onDriverChange);
    const fp = (seams.fingerprint ?? fingerprintNode)(this.driverInfo, dataDir, this.opts.resourceOverrides);
    this.attributes = fp.attributes;
    this.resources = fp.resources;
  }

  /** The plugin registry, the csimanager (reporting fingerprints) and the volume manager (restored). */
  private csiParts(stateDb: StateDB) {
    const { log } = this.opts;
    const seams = this.opts.seams ?? {};
    const registry = new PluginRegistry(stateDb, log.child("dynamicplugins"));
    const csi = new CsiManager({
      registry,
      clientFactory: seams.csiClientFactory ?? csiClientFactory(log.child("csi"), this.opts.telemetry),
      log: log.child("csimanager"),
      fingerprintIntervalMs: this.opts.fingerprintIntervalMs || undefined,
      onFingerprint: (controllers, nodes) => {
        this.fingerprint = { controllers, nodes };
        void this.sendFingerprint();
      },
    });
    this.csi = csi;
    const locks = new KeyedMutex();
    const volumeManager = new VolumeManager({
      plugins: csi,
      locks,
      log: log.child("volume_manager"),
      isMountPoint: seams.isMountPoint,
      callTimeoutMs: this.opts.csiCallTimeoutMs,
    });
    volumeManager.restore(stateDb.listVolumeStubsInUse());
    return { registry, csi, locks, volumeManager };
  }

  /** Starts the agent's loops, in an order that matters (the comments say why). */
  private run(p: {
    stateDb: StateDB;
    registry: PluginRegistry;
    csi: CsiManager;
    locks: KeyedMutex;
    conn: ServerConnection;
    sync: AllocSync;
    lease: NodeLease;
  }): void {
    const { log, dataDir } = this.opts;
    const { stateDb, registry, csi, locks, conn, sync } = p;
    csi.start();
    // Restore before watching: tasks are re-attached and releases resumed even while the server
    // is unreachable; the first Node.GetAllocs answer then stops or destroys what changed.
    sync.restore(stateDb.listAllocs().map((s) => s.alloc));
    // The lease goes on from the previous agent's last renewal: a node restarted while cut off
    // fences what it restored as soon as the bound has passed (fence/node_lease.ts).
    this.fence = new SelfFence(p.lease, sync, log.child("fence"));
    this.fence.start();
    conn.start();
    sync.start();
    // Simulated nodes (seams) run no real plugin or task: no volume stats to poll, no usage to publish.
    if (!this.opts.seams) {
      const intervalMs = this.opts.volumeStatsIntervalMs;
      const parts = { nodeId: this.nodeId, stateDb, registry, plugins: csi, locks, conn, intervalMs };
      this.volumeStats = volumeStatsPoller({ ...parts, log: log.child("volume_stats") });
      this.volumeStats.start();
      this.allocMetrics = startAllocMetrics(this.opts, this.nodeId, sync, this.drivers);
    }
    this.heartbeat = this.heartbeatLoop();
    log.info("node agent started", { node: this.nodeId, dataDir });
  }

  /**
   * Stops every alloc and waits for its volumes to be released: allocs that use plugins first,
   * then the plugin allocs, so no volume is left without its node plugin (the -dev exit path).
   */
  async stopAllAllocs(): Promise<void> {
    if (!this.sync) return;
    await this.sync.stop();
    const { users, plugins } = this.sync.runnersPluginsLast();
    for (const group of [users, plugins]) {
      await Promise.all(
        group.map(async ([id, runner]) => {
          try {
            await runner.destroy();
          } catch (err) {
            this.opts.log.error("stopping alloc failed", { alloc: id, error: err });
          }
          this.sync?.forget(id);
        }),
      );
    }
    await this.sync.settled();
    await this.updates?.flush();
  }

  /** Leaves tasks running and mounts in place (a restart resumes them); closes everything else. */
  async shutdown(): Promise<void> {
    this.stopped.abort();
    this.fence?.stop();
    await this.sync?.stop();
    if (this.sync) {
      const { users, plugins } = this.sync.runnersPluginsLast();
      await Promise.all([...users, ...plugins].map(([, r]) => r.shutdown()));
      // Runner runs and destroys are tracked by the sync: none may outlive the state DB.
      await this.sync.settled();
    }
    // The tasks keep running for the next agent to recover; only our watch on them ends here.
    for (const d of this.drivers.values()) d.detach();
    await this.updates?.flush().catch(() => undefined);
    this.updates?.stop();
    await Promise.all([this.volumeStats?.stop(), this.allocMetrics?.stop()]);
    await this.heartbeat;
    await this.lease?.flushed();
    await Promise.all([this.fingerprintSending, this.driverWatch]);
    await this.conn?.stop();
    await this.csi?.stop();
    this.stateDb?.close();
  }

  private driverFor(name: string): TaskDriver {
    const d = this.drivers.get(name);
    if (!d) throw new BerthError("ERR_DRIVER", `unknown task driver ${JSON.stringify(name)}`);
    return d;
  }

  private installHandlers(peer: ServerPeer, nodeVolumes: NodeVolumeAccess): void {
    registerClientCsiHandlers(peer, {
      controllerClient: (pluginId) => this.csi?.controllerClient(pluginId),
      nodeVolumes,
      log: this.opts.log,
    });
    registerClientAllocHandlers(
      peer,
      (id) => allocAccess(this.sync, id),
      this.opts.log.child("client_alloc"),
      (name) => this.drivers.get(name),
      safeJoin(this.opts.dataDir, "alloc"),
    );
  }

  private async register(peer: ServerPeer, signal: AbortSignal): Promise<void> {
    const sentAt = performance.now();
    const resp = await peer.call(
      "Node.Register",
      {
        ...(await introTokenField(safeJoin(this.opts.dataDir, "client"), this.opts.introToken)),
        Node: {
          SecretID: this.nodeSecret,
          ...buildNode({
            id: this.nodeId,
            name: this.nodeName,
            datacenter: this.opts.datacenter,
            nodeClass: this.opts.nodeClass,
            drivers: this.driverInfo,
            hostVolumes: this.opts.hostVolumes ?? {},
            attributes: this.attributes,
            meta: this.opts.meta ?? {},
            resources: this.resources,
            reserved: reservedResources(this.opts.reserved),
            controllers: this.fingerprint.controllers,
            nodes: this.fingerprint.nodes,
          }),
        },
        ReportOrder: this.reports ? this.reports.next() : undefined,
      },
      { signal, timeoutMs: 10_000 },
    );
    this.heartbeatTtlMs = resp.HeartbeatTTL;
    this.lease?.renewed(sentAt, resp.HeartbeatTTL);
    this.opts.seams?.onRegistered?.();
  }

  private fingerprintSending: Promise<void> | null = null;
  private fingerprintDirty = false;

  /** Sends the latest fingerprint; coalesces bursts and retries until it lands or the agent stops. */
  private async sendFingerprint(): Promise<void> {
    this.fingerprintDirty = true;
    if (this.fingerprintSending) return;
    this.fingerprintSending = (async () => {
      while (this.fingerprintDirty && !this.stopped.signal.aborted && this.conn) {
        this.fingerprintDirty = false;
        try {
          await this.conn.call(
            "Node.UpdateFingerprint",
            {
              NodeID: this.nodeId,
              Drivers: this.driverInfo,
              CSIControllerPlugins: this.fingerprint.controllers,
              CSINodePlugins: this.fingerprint.nodes,
              ReportOrder: this.reports ? this.reports.next() : undefined,
            },
            { signal: this.stopped.signal, timeoutMs: 10_000 },
          );
        } catch (err) {
          if (this.stopped.signal.aborted) break;
          this.opts.log.warn("fingerprint update failed; retrying", { error: err });
          this.fingerprintDirty = true;
          await sleep(1000, this.stopped.signal).catch(() => undefined);
        }
      }
    })().finally(() => {
      this.fingerprintSending = null;
    });
    await this.fingerprintSending;
  }

  /**
   * Heartbeats every third of the TTL, each allowed a quarter of the TTL (at most 5 s) to be
   * answered: an acknowledged one renews the node's lease from the moment it was sent. A heartbeat
   * that fails for any reason but "unknown node" — unanswered, or refused by a server that cannot
   * vouch for this node — sends the agent to the next server at once, so a node whose server hung
   * is on another one within about 0.6 TTL, before its self-fence bound (one TTL).
   */
  private async heartbeatLoop(): Promise<void> {
    const signal = this.stopped.signal;
    while (!signal.aborted) {
      await sleep(Math.max(250, this.heartbeatTtlMs / 3), signal).catch(() => undefined);
      if (signal.aborted || !this.conn?.connected) continue;
      const sentAt = performance.now();
      try {
        const resp = await this.conn.call(
          "Node.Heartbeat",
          { NodeID: this.nodeId },
          { signal, timeoutMs: Math.round(Math.min(5000, Math.max(500, this.heartbeatTtlMs / 4))) },
        );
        this.heartbeatTtlMs = resp.HeartbeatTTL;
        this.lease?.renewed(sentAt, resp.HeartbeatTTL);
        this.opts.seams?.onHeartbeat?.();
      } catch (err) {
        if (signal.aborted) break;
        // The server forgot this node (e.g. its state was reset): register again.
        if (isBerthError(err) && err.code === "ERR_NOT_FOUND") this.conn.reconnect();
        else {
          this.opts.log.warn("heartbeat failed", { error: err });
          this.conn.failOver(`heartbeat failed: ${(err as Error).message}`);
        }
      }
    }
  }
}
