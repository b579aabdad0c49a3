/**
 * The system under test of the property suite: an in-process berth Server on loopback with its
 * state in a real SQLite file in a temp dir, and two nodes registered through the agent RPC path a
 * node agent uses (so scheduling, plugin records and controller calls run): `fz-n1` runs plugin
 * `fz-p1` as controller and node plugin, `fz-n2` as node plugin only. n1 answers the server's
 * controller calls as a well-behaved CSI plugin would (an unknown paging token is the plugin's
 * ABORTED, as the CSI spec says). Every error-level log line of the server is recorded: a loop that
 * fails or a request that fails inside berth logs one, so "no error logged" is part of "healthy".
 */
import { BerthError } from "../../src/structs/errors.js";
import { Server } from "../../src/server/server.js";
import type { Logger } from "../../src/internal/log.js";
import { makeNode } from "../builders/node.js";
import { controllerInfo, nodePluginInfo } from "../builders/plugin_info.js";
import { connectAgent, type AgentPeer } from "../integration/server/fake_agent.js";
import { tempDir } from "../helpers/temp_dir.js";
import { StoreDump } from "./store_dump.js";

export const PLUGIN = "fz-p1";
export const NODES = ["fz-n1", "fz-n2"] as const;

/** A logger that keeps error and warn lines (tests read them) and drops the rest. */
export function recordingLogger(errors: string[], component = "server"): Logger {
  const line = (lvl: string, msg: string, f?: Record<string, unknown>) =>
    `${lvl} ${component}: ${msg} ${f ? JSON.stringify(f, (_k, v: unknown) => (v instanceof Error ? v.message : v)) : ""}`;
  return {
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (m, f) => errors.push(line("error", m, f)),
    child: (c) => recordingLogger(errors, `${component}.${c}`),
  };
}

export interface RawRequest {
  method: string;
  /** Path and query, already encoded. */
  url: string;
  headers: Record<string, string>;
  body?: string;
}

export interface RawResponse {
  status: number;
  code: string | null;
  text: string;
}

export class FuzzTarget {
  readonly dataDir = tempDir("berth-fuzz-");
  readonly errors: string[] = [];
  private server: Server | undefined;
  private peers: AgentPeer[] = [];
  private dumper: StoreDump | undefined;
  base = "";

  async start(): Promise<void> {
    this.server = new Server({
      dataDir: this.dataDir,
      httpAddr: "127.0.0.1:0",
      log: recordingLogger(this.errors),
      // The fake nodes do not heartbeat: nothing may go down while the suite runs.
      heartbeatTtlMs: 10 * 60_000,
      // A drain pass, and a deployment watcher pass (service jobs get Nomad's default update
      // strategy, so deployments), follow a write within milliseconds, so settle() sees them.
      drainer: { settleMs: 5 },
      deploymentWatcher: { settleMs: 5 },
    });
    await this.server.start();
    this.base = this.server.httpAddress;
    this.peers = [await this.agent(NODES[0], true), await this.agent(NODES[1], false)];
    this.dumper = new StoreDump(this.dataDir);
  }

  private async agent(id: string, controller: boolean): Promise<AgentPeer> {
    let n = 0;
    const peer = await connectAgent(this.base, {
      "ClientCSI.ControllerCreateVolume": async (p) => ({
        ExternalVolumeID: `ext-${p.Name}`,
        CapacityBytes: p.CapacityMin,
        VolumeContext: {},
        Topologies: [],
      }),
      "ClientCSI.ControllerDeleteVolume": async () => ({}),
      "ClientCSI.ControllerValidateVolume": async () => ({}),
      "ClientCSI.ControllerPublishVolume": async () => ({ PublishContext: {} }),
      "ClientCSI.ControllerUnpublishVolume": async () => ({}),
      "ClientCSI.ControllerCreateSnapshot": async (p) => ({
        ID: `snap-${++n}`,
        ExternalSourceVolumeID: p.ExternalSourceVolumeID,
        SizeBytes: 1024,
        CreateTime: 1_700_000_000,
        IsReady: true,
      }),
      "ClientCSI.ControllerDeleteSnapshot": async () => ({}),
      "ClientCSI.ControllerListSnapshots": async (p) => {
        if (p.StartingToken !== "" && p.StartingToken !== "t1")
          throw new BerthError("ERR_CSI_ABORTED", "starting_token is not valid");
        return { Entries: [], NextToken: "" };
      },
      "ClientCSI.ControllerExpandVolume": async (p) => ({
        CapacityBytes: p.CapacityMin,
        NodeExpansionRequired: false,
      }),
      "ClientCSI.ControllerListVolumes": async (p) => {
        if (p.StartingToken !== "" && p.StartingToken !== "t1")
          throw new BerthError("ERR_CSI_ABORTED", "starting_token is not valid");
        return { Entries: [], NextToken: "" };
      },
      "ClientCSI.NodeExpandVolume": async () => ({ CapacityBytes: 0 }),
      "ClientCSI.NodeDetachVolume": async () => ({}),
    });
    const caps = {
      SupportsCreateDeleteSnapshot: true,
      SupportsListSnapshots: true,
      SupportsListVolumes: true,
    };
    const ctl = controllerInfo(PLUGIN, true);
    await peer.call("Node.Register", {
      Node: makeNode(id, {
        CSIControllerPlugins: controller
          ? { [PLUGIN]: { ...ctl, ControllerInfo: ctl.ControllerInfo && { ...ctl.ControllerInfo, ...caps } } }
          : {},
        CSINodePlugins: {
          [PLUGIN]: nodePluginInfo(PLUGIN, { RequiresControllerPlugin: true }, { ID: `ext-${id}` }),
        },
      }),
    });
    return peer;
  }

  get store(): StoreDump {
    if (!this.dumper) throw new Error("not started");
    return this.dumper;
  }

  /** One request as given: no content-type or body fix-ups, so odd ones reach the server as is. */
  async send(r: RawRequest): Promise<RawResponse> {
    const res = await fetch(this.base + r.url, {
      method: r.method,
      headers: r.headers,
      ...(r.body === undefined ? {} : { body: r.body }),
    });
    return { status: res.status, code: res.headers.get("x-berth-error-code"), text: await res.text() };
  }

  /**
   * Waits until background work a successful write set off (the scheduler's retry of blocked jobs,
   * the drainer) has written what it will: the write index stays put over several polls. A server
   * that keeps writing forever fails here.
   */
  async settle(): Promise<void> {
    let last = this.store.writeIndex();
    let still = 0;
    for (let i = 0; i < 1000 && still < 3; i++) {
      await new Promise((r) => setTimeout(r, 5));
      const now = this.store.writeIndex();
      still = now === last ? still + 1 : 0;
      last = now;
    }
    if (still < 3) throw new Error("the server kept writing for 5 s after a request");
  }

  async stop(): Promise<void> {
    this.dumper?.close();
    this.dumper = undefined;
    for (const p of this.peers) p.close();
    this.peers = [];
    await this.server?.stop();
    this.server = undefined;
  }

  /** Starts a second server on the same data dir (no agents): it must start and answer. */
  async restart(): Promise<Server> {
    const server = new Server({
      dataDir: this.dataDir,
      httpAddr: "127.0.0.1:0",
      log: recordingLogger(this.errors, "restarted"),
      heartbeatTtlMs: 10 * 60_000,
    });
    await server.start();
    return server;
  }
}
