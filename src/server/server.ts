/**
 * The berth server: state store, scheduler, node liveness, the volumewatcher, the garbage
 * collector, the agent RPC endpoint and the HTTP API on one listener. The agent wiring only needs
 * this class.
 */
import { BerthError } from "../structs/errors.js";
import type { Logger } from "../internal/log.js";
import { assembleServer, type ServerParts } from "./assembly.js";
import { NodeConnections } from "./clientconn/connections.js";
import { EventBroker } from "./events/broker.js";
import { parseAddr, warnIfExposed } from "./http/bind.js";
import type { GateState } from "./leader/gate.js";
import { memberOf } from "./leader/member.js";
import { openCluster } from "./leader/open_cluster.js";
import { listen, type ListenerAddress } from "./listener.js";
import { openRpcPort, type RpcPort } from "./rpc_port.js";
import type { ServerOptions } from "./server_options.js";
import { openStateStore } from "./state/open_store.js";

export class Server {
  private readonly log: Logger;
  /** Built once by start (from the listener's creation on), cleared by stop. */
  private running: ServerParts | undefined;
  /** Where the listener is, once bound. */
  private where: { url: string; bound: string } | undefined;
  /** The RPC port (options.rpcAddr), once bound. */
  private rpcPort: RpcPort | undefined;

  constructor(private readonly opts: ServerOptions) {
    this.log = opts.log.child("server");
  }

  /** "http://HOST:PORT" (https:// with TLS) once started. */
  get httpAddress(): string {
    if (!this.where) throw new BerthError("ERR_INTERNAL", "server not started");
    return this.where.url;
  }

  /** "HOST:PORT" the listener is really bound to (e.g. 0.0.0.0:4646), once started. */
  get boundAddress(): string {
    if (!this.where) throw new BerthError("ERR_INTERNAL", "server not started");
    return this.where.bound;
  }

  /**
   * Whether this server runs the leader's loops now ("leader"), and since when (Date.now() once
   * they were all running); tests and the failover benchmark read it.
   */
  get leadership(): { state: GateState; since: number | null } {
    const gate = this.running?.gate;
    return { state: gate?.state ?? "follower", since: gate?.leaderSince ?? null };
  }

  /**
   * Open state → cluster → deps and endpoints → HTTP → listen → join. A failure before the listener
   * exists closes what was opened; from then on, stop() closes everything (the agent calls it).
   */
  async start(): Promise<void> {
    const at = parseAddr(this.opts.httpAddr);
    const store = await openStateStore({
      dataDir: this.opts.dataDir,
      log: this.log.child("state"),
      etcd: this.opts.etcd,
      groupCommit: this.opts.groupCommit,
    });
    // Follows the store's commits from before the first write, so a stream can resume from any.
    const events = new EventBroker(store, this.log.child("events"), this.opts.events);
    events.start();
    const conns = new NodeConnections();
    const cluster = openCluster(this.opts, conns, this.log);
    let parts: ServerParts;
    try {
      parts = assembleServer(this.opts, { store, events, conns, cluster }, this.log);
    } catch (err) {
      events.stop();
      store.close();
      throw err;
    }
    this.running = parts;
    const where = await listen(parts.http, at, this.opts.tls);
    this.where = where;
    if (this.opts.rpcAddr !== undefined)
      this.rpcPort = await openRpcPort(parts.http, parseAddr(this.opts.rpcAddr));
    await cluster.join(
      memberOf(this.opts.member ?? {}, where.url, where.bound, this.advertised(where)),
      parts.gate,
      parts.scheduler,
      store,
    );
    this.log.info("server started", {
      http_bind: where.bound,
      rpc_bind: this.rpcPort?.bound,
      data_dir: this.opts.dataDir ?? ":memory:",
      acl: parts.acl.enabled,
    });
    warnIfExposed(this.log, where.addr, parts.acl.enabled);
    if (this.rpcPort) warnIfExposed(this.log, this.rpcPort.addr, parts.acl.enabled);
  }

  /** What peers dial: `advertise` (its port defaulting to the listener's), else the listeners. */
  private advertised(where: ListenerAddress): { http?: string; rpc?: string } {
    const { http, rpc } = this.opts.advertise ?? {};
    const withPort = (host: string, port: number) => (/:\d+$/.test(host) ? host : `${host}:${port}`);
    return {
      http:
        http !== undefined ? `${new URL(where.url).protocol}//${withPort(http, where.addr.port)}` : undefined,
      rpc: rpc !== undefined ? withPort(rpc, this.rpcPort?.addr.port ?? where.addr.port) : this.rpcPort?.dial,
    };
  }

  /**
   * Orderly stop: first nothing new comes in (agent RPC, node connections, HTTP) and the HTTP routes
   * in flight finish, then the leader gate is closed: every loop that writes is stopped and
   * awaited — node liveness, the volumewatcher, drainer, deployment watcher, GC, the orphan
   * reconciler — and a cluster member resigns (another server leads at once), then the
   * scheduler last (the loops start passes), which waits for its passes in flight, retries of
   * blocked jobs and follow-up timers; only then is the store closed, so no pass meets a closed
   * database.
   */
  async stop(): Promise<void> {
    const p = this.running;
    this.running = undefined;
    await this.rpcPort?.close();
    this.rpcPort = undefined;
    if (p) await stopParts(p);
    this.log.info("server stopped");
  }
}

/** Server.stop's order (see there); `p` is closed exactly once. */
async function stopParts(p: ServerParts): Promise<void> {
  p.events.stop();
  p.unregisterMetrics();
  p.agentRpc.close();
  p.execSockets.close();
  p.conns.closeAll();
  p.http.closeAllConnections();
  await new Promise<void>((resolve) => p.http.close(() => resolve()));
  // Requests already inside a route finish (their clients are gone; their writes are not).
  p.limiter.close();
  // Routes waiting for a leader give up now (ERR_ABORTED) rather than at the end of their hold.
  await p.cluster.releaseWaiters();
  await p.api.drain();
  // The loops stop before the resignation, so two servers' loops never overlap.
  await p.gate.close("server stopping");
  await p.cluster.leave();
  await p.scheduler.stop();
  p.store.close();
}
