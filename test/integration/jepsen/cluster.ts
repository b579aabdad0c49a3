/**
 * The processes of the Jepsen-style run: servers (three on one etcd, or one with its SQLite store),
 * two node agents A and B that reach every server only through their own blackholing proxies
 * (test/helpers/blackhole_proxy.ts), and what a fault does to them: SIGSTOP/SIGCONT, SIGKILL and a
 * restart with the same flags, a partition of a node from every server. Every process runs under
 * `dir`; `cleanUp` SIGCONTs what is stopped and kills every process group under it.
 */
import fs from "node:fs";
import path from "node:path";
import { AgentProcess, crashAgent, eventually, freePort, logTail } from "../../helpers/agent_process.js";
import { NodeProxies } from "../../helpers/blackhole_proxy.js";
import type { EtcdServer } from "../../helpers/etcd_server.js";
import { leaderOf, type ServerProcess } from "../leader/ha_processes.js";

export interface ClusterOptions {
  dir: string;
  /** Three servers on it; without it, one server with its own store. */
  etcd?: EtcdServer;
  /** The servers' -heartbeat-ttl, in ms. */
  heartbeatTtlMs: number;
  nodeNames: string[];
}

export interface JepsenNode {
  name: string;
  proxies: NodeProxies;
  agent: AgentProcess;
  dataDir: string;
  log: string;
}

/** GET `base + route` as JSON within `timeoutMs`; undefined on any failure (a paused server too). */
export async function getWithin<T>(base: string, route: string, timeoutMs = 2000): Promise<T | undefined> {
  try {
    const res = await fetch(base + route, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    return (await res.json()) as T;
  } catch {
    return undefined;
  }
}

export class JepsenCluster {
  servers: ServerProcess[] = [];
  nodes: JepsenNode[] = [];
  /** Names of the servers SIGSTOPped now. */
  readonly paused = new Set<string>();
  private rr = 0;

  constructor(readonly opts: ClusterOptions) {}

  get dir(): string {
    return this.opts.dir;
  }

  /** The plugin's shared state dir: both nodes' plugin instances keep their volumes here. */
  get storage(): string {
    return path.join(this.dir, "storage");
  }

  /** The call log both plugin instances append to. */
  get callLog(): string {
    return path.join(this.dir, "calls.jsonl");
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.storage, { recursive: true });
    const n = this.opts.etcd ? 3 : 1;
    for (let i = 0; i < n; i++) {
      const port = await freePort();
      const name = `s${i}`;
      const log = path.join(this.dir, `${name}.log`);
      const args = [
        "-server",
        "-data-dir",
        path.join(this.dir, name),
        "-http-addr",
        `127.0.0.1:${port}`,
        `-node-name=${name}`,
        `-heartbeat-ttl=${this.opts.heartbeatTtlMs}ms`,
        ...(this.opts.etcd ? [`-etcd-endpoints=${this.opts.etcd.endpoint}`] : []),
      ];
      this.servers.push({
        name,
        host: `127.0.0.1:${port}`,
        base: `http://127.0.0.1:${port}`,
        log,
        proc: new AgentProcess(args, log),
      });
    }
    await eventually("every server to answer", async () => {
      const up = await Promise.all(this.servers.map((s) => getWithin(s.base, "/v1/nodes")));
      return up.every((u) => u !== undefined) ? true : undefined;
    });
    for (const [i, name] of this.opts.nodeNames.entries()) {
      const lower = name.toLowerCase();
      // Each node's list starts at another server (Nomad's clients shuffle theirs), so the nodes
      // spread over the servers and a hung server strands one node, not every controller.
      const order = this.servers.map((_, j) => this.servers[(i + j) % this.servers.length]!);
      const proxies = await NodeProxies.start(name, order);
      const dataDir = path.join(this.dir, lower);
      const log = path.join(this.dir, `${lower}.log`);
      const agent = new AgentProcess(
        ["-client", "-data-dir", dataDir, `-servers=${proxies.serversFlag}`, `-node-name=${name}`],
        log,
      );
      this.nodes.push({ name, proxies, agent, dataDir, log });
    }
  }

  /** Servers running and not paused. */
  live(): ServerProcess[] {
    return this.servers.filter((s) => s.proc.running && !this.paused.has(s.name));
  }

  /** A live server, round robin (each poll asks another). */
  pick(): ServerProcess {
    const live = this.live();
    const s = live[this.rr++ % Math.max(1, live.length)];
    if (!s) throw new Error("no live server");
    return s;
  }

  server(name: string): ServerProcess {
    const s = this.servers.find((x) => x.name === name);
    if (!s) throw new Error(`no server ${name}`);
    return s;
  }

  node(name: string): JepsenNode {
    const n = this.nodes.find((x) => x.name === name);
    if (!n) throw new Error(`no node ${name}`);
    return n;
  }

  /** GET through a live server (another one on each call); undefined when it did not answer. */
  get<T>(route: string, timeoutMs = 2000): Promise<T | undefined> {
    return getWithin<T>(this.pick().base, route, timeoutMs);
  }

  /** The server a node agent is connected to now (its newest live proxied connection). */
  connectedServer(node: string): string | undefined {
    return this.node(node).proxies.connectedTo()[0];
  }

  /** The leader the live servers agree on (host:port → server). */
  async leader(timeoutMs = 30_000): Promise<ServerProcess> {
    return eventually(
      "the live servers to agree on a leader",
      async () => {
        const live = this.live();
        const seen = await Promise.all(live.map((s) => leaderOf(s.base)));
        if (!seen.every((l) => l !== undefined && l === seen[0])) return undefined;
        return this.servers.find((s) => s.host === seen[0]);
      },
      timeoutMs,
      50,
    );
  }

  pause(name: string): void {
    const pid = this.server(name).proc.pid;
    if (pid === undefined) return;
    process.kill(pid, "SIGSTOP");
    this.paused.add(name);
  }

  resume(name: string): void {
    const pid = this.server(name).proc.pid;
    this.paused.delete(name);
    if (pid !== undefined && this.server(name).proc.running) process.kill(pid, "SIGCONT");
  }

  /** SIGKILLs a server and starts it again with the same flags (same port, same data dir). */
  async killAndRestart(name: string, downMs: number): Promise<void> {
    const s = this.server(name);
    this.paused.delete(name);
    await crashAgent(s.proc);
    await new Promise((r) => setTimeout(r, downMs));
    s.proc = new AgentProcess(s.proc.child.spawnargs.slice(3), s.log);
    await eventually(`${name} to answer again`, () => getWithin(s.base, "/v1/nodes"), 30_000, 100);
  }

  /** Both node agents ready as a live server sees them. */
  async nodesReady(timeoutMs = 60_000): Promise<void> {
    const names = this.nodes.map((n) => n.name);
    await eventually(
      `nodes ${names.join(", ")} to be ready`,
      async () => {
        const nodes = await this.get<{ Name: string; Status: string }[]>("/v1/nodes");
        if (!nodes) return undefined;
        const ready = new Set(nodes.filter((n) => n.Status === "ready").map((n) => n.Name));
        return names.every((n) => ready.has(n)) ? true : undefined;
      },
      timeoutMs,
      200,
    );
  }

  /** Every process's log tail, for a failing run. */
  logTails(lines = 60): string {
    const parts = [
      ...this.servers.map((s) => `--- ${s.name}.log ---\n${logTail(s.log, lines)}`),
      ...this.nodes.map((n) => `--- ${n.name} agent log ---\n${logTail(n.log, lines)}`),
    ];
    return parts.join("\n");
  }

  /** Copies every log of the run (agents' and the plugin's call log) to `dest`, for a look after. */
  keepLogs(dest: string): void {
    fs.mkdirSync(dest, { recursive: true });
    const dumps = fs.readdirSync(this.dir).filter((f) => /^state-.*\.json$/.test(f));
    const files = [...this.servers.map((s) => s.log), ...this.nodes.map((n) => n.log), this.callLog];
    for (const f of [...files, ...dumps.map((d) => path.join(this.dir, d))]) {
      if (fs.existsSync(f)) fs.copyFileSync(f, path.join(dest, path.basename(f)));
    }
  }

  /** After the run, pass or fail: SIGCONT what is stopped, heal, kill the agents, close proxies. */
  async stopHard(): Promise<void> {
    for (const name of [...this.paused]) this.resume(name);
    for (const n of this.nodes) n.proxies.heal();
    for (const n of this.nodes) await crashAgent(n.agent).catch(() => undefined);
    for (const s of this.servers) await crashAgent(s.proc).catch(() => undefined);
    for (const n of this.nodes) await n.proxies.close();
  }
}
