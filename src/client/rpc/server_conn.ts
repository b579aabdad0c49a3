/**
 * The node agent's one connection to a server. The agent always dials out (nodes never accept
 * inbound connections); server → node calls (ClientCSI.*) come back over the same socket. Given
 * several servers (`-servers a,b,c`), it holds one connection at a time: it dials the first, and
 * when a dial fails or the connection is lost it moves on to the next in the list (round robin),
 * waiting a capped, jittered backoff that grows while dials keep failing and starts over once a
 * connection is made; so when a server dies its agents spread over the others within seconds.
 * `onConnect` runs on every new socket (the agent re-registers there, and the server it reached
 * records that it now holds the node's connection). Running tasks and their mounts are untouched
 * by any of this. Calls made while disconnected wait for the next connection up to
 * their own timeout or signal, then fail with ERR_RPC_UNAVAILABLE, which callers treat as transient.
 *
 * A server that stops answering is left as if its connection had closed (Nomad's client does the
 * same on any RPC failure, timeouts included): a hung or paused server, or a network path that
 * drops packets without a reset, keeps the socket open, so waiting for a close would strand the
 * node there until the servers mark it down. A call that times out without a frame from the server
 * since it was sent triggers a probe (a WebSocket ping, answered by the server's socket layer
 * whatever the call was waiting on); no pong within PROBE_MS and the connection is dropped and the
 * next server dialled. The node agent fails over at once when a heartbeat fails, unanswered or
 * refused by a server that cannot vouch for the node (`failOver`): so a node reaches a healthy
 * server within a heartbeat interval and timeout plus one dial (HANDSHAKE_MS at worst for a hung
 * server next in the list), inside its heartbeat TTL.
 */
import { performance } from "node:perf_hooks";
import { WebSocket } from "ws";
import { anySignal, sleep } from "../../internal/abort.js";
import { backoffDelay } from "../../internal/backoff.js";
import type { Logger } from "../../internal/log.js";
import { RpcPeer, type CallOptions } from "../../internal/rpc/peer.js";
import { BerthError, ERROR_CODES, isBerthError, type ErrorCode } from "../../structs/errors.js";
import type { ClientMethods, ServerMethods } from "../../structs/rpc.js";
import type { ClientTls } from "../../internal/tls.js";
import { tlsDialOptions } from "./tls_dial.js";

export type ServerPeer = RpcPeer<ClientMethods, ServerMethods>;

export interface ServerConnectionOptions {
  /** The servers' HTTP addresses, e.g. http://127.0.0.1:4646, in the order they are tried. */
  servers: string[];
  log: Logger;
  /** Registers this agent's handlers on a fresh peer, before any frame is exchanged. */
  installHandlers: (peer: ServerPeer) => void;
  /** Runs on each new connection (e.g. Node.Register); a failure drops the connection and redials. */
  onConnect: (peer: ServerPeer, signal: AbortSignal) => Promise<void>;
  /** Dial wss:// with these (agent config `tls`); see tlsDialOptions. */
  tls?: ClientTls;
  /** The local address to dial from (ClientSeams.localAddress); absent: the OS picks. */
  localAddress?: string;
}

/** Wait before redialling after the server refused this node's identity. */
const REFUSED_RETRY_MS = 60_000;

function isRefusal(err: unknown): err is BerthError {
  return (
    isBerthError(err) && (err.code === "ERR_PERMISSION_DENIED" || err.code === "ERR_TOO_MANY_CONNECTIONS")
  );
}

/** The error code of a refused upgrade, from its X-Berth-Error-Code header. */
function codeOf(header: string | string[] | undefined): ErrorCode {
  const v = Array.isArray(header) ? header[0] : header;
  return (ERROR_CODES as readonly string[]).includes(v ?? "") ? (v as ErrorCode) : "ERR_RPC_UNAVAILABLE";
}

/** How long a probed server has to answer a ping before the node moves on. */
export const PROBE_MS = 2_000;
/** A dial whose WebSocket upgrade is not answered within this goes on to the next server. */
const HANDSHAKE_MS = 5_000;

/** Default wait for a connection when a call gives neither timeout nor signal. */
const DEFAULT_CONNECT_WAIT_MS = 30_000;

export class ServerConnection {
  private peer: ServerPeer | null = null;
  private readonly stopped = new AbortController();
  private waiters: (() => void)[] = [];
  private loop: Promise<void> | null = null;
  /** Peers with a probe in flight. */
  private readonly probing = new WeakSet<ServerPeer>();
  /** The index in `servers` of the server dialled last. */
  private current = 0;

  constructor(private readonly opts: ServerConnectionOptions) {
    if (opts.servers.length === 0) throw new BerthError("ERR_VALIDATION", "no server address to dial");
  }

  /** The address of the server this agent is connected to (or dials next). */
  get serverAddr(): string {
    return this.opts.servers[this.current % this.opts.servers.length]!;
  }

  start(): void {
    this.loop ??= this.dialLoop();
  }

  async stop(): Promise<void> {
    this.stopped.abort(new BerthError("ERR_ABORTED", "agent stopping"));
    this.peer?.close();
    this.wakeWaiters();
    await this.loop;
  }

  /** Drops the current socket so the dial loop connects (and registers) afresh. */
  reconnect(): void {
    this.peer?.close();
  }

  get connected(): boolean {
    return this.peer?.isOpen === true;
  }

  async call<M extends keyof ServerMethods>(
    method: M,
    req: ServerMethods[M][0],
    opts: CallOptions = {},
  ): Promise<ServerMethods[M][1]> {
    const peer = await this.waitForPeer(opts);
    const sentAt = performance.now();
    try {
      return await peer.call(method, req, opts);
    } catch (err) {
      // Only this side's own timeout says anything about the server; an error it answered does not.
      if (isBerthError(err) && err.code === "ERR_RPC_TIMEOUT" && peer.lastHeardAt < sentAt) {
        void this.probe(peer, `${String(method)} timed out`);
      }
      throw err;
    }
  }

  /**
   * Leaves the current server for the next one: `reason` says why (logged). Used when the server
   * answered but cannot serve this node (its heartbeat refused for want of contact with the
   * cluster), and by the probe.
   */
  failOver(reason: string): void {
    const peer = this.peer;
    if (!peer?.isOpen) return;
    this.opts.log.warn("leaving an unresponsive server for the next", {
      server: this.serverAddr,
      next: this.opts.servers[(this.current + 1) % this.opts.servers.length],
      reason,
    });
    peer.terminate();
  }

  /** Pings `peer`; if nothing at all comes back within PROBE_MS, fails over (once per peer). */
  private async probe(peer: ServerPeer, reason: string): Promise<void> {
    if (this.probing.has(peer) || this.peer !== peer) return;
    this.probing.add(peer);
    try {
      const pingedAt = performance.now();
      peer.ping();
      await sleep(PROBE_MS, this.stopped.signal).catch(() => undefined);
      if (this.peer === peer && peer.isOpen && peer.lastHeardAt < pingedAt) {
        this.failOver(`${reason}; no answer to a ping within ${PROBE_MS} ms`);
      }
    } finally {
      this.probing.delete(peer);
    }
  }

  private async waitForPeer(opts: CallOptions): Promise<ServerPeer> {
    const limit = anySignal([opts.signal, this.stopped.signal], opts.timeoutMs ?? DEFAULT_CONNECT_WAIT_MS);
    while (!this.peer?.isOpen) {
      if (limit.aborted) {
        throw new BerthError("ERR_RPC_UNAVAILABLE", `not connected to server ${this.serverAddr}`);
      }
      await new Promise<void>((resolve) => {
        const done = () => {
          limit.removeEventListener("abort", done);
          resolve();
        };
        this.waiters.push(done);
        limit.addEventListener("abort", done, { once: true });
      });
    }
    return this.peer;
  }

  private wakeWaiters(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private async dialLoop(): Promise<void> {
    const signal = this.stopped.signal;
    let refused = false;
    for (let attempt = 0; !signal.aborted;) {
      try {
        const peer = await this.dial(signal);
        await this.opts.onConnect(peer, signal);
        this.peer = peer;
        attempt = 0;
        this.opts.log.info("connected to server", { server: this.serverAddr });
        this.wakeWaiters();
        await new Promise<void>((resolve) => peer.onClosed(resolve));
        this.peer = null;
        if (!signal.aborted) {
          this.opts.log.warn("lost connection to server; dialling the next", {
            server: this.serverAddr,
            next: this.opts.servers[(this.current + 1) % this.opts.servers.length],
          });
        }
      } catch (err) {
        if (signal.aborted) break;
        if (isRefusal(err)) {
          refused = true;
          // A refusal is the node's identity (its secret) or, with TLS, its certificate: the
          // server's reason is in `error`.
          this.opts.log.error(
            err.code === "ERR_PERMISSION_DENIED"
              ? "the server refused this node; if it refused the node's identity and this data dir was restored or copied from another node, remove client/node-id and client/secret-id to join as a new node"
              : "the server refuses connections from this address for now",
            { server: this.serverAddr, code: err.code, error: err.message },
          );
        } else {
          this.opts.log.warn("cannot connect to server", { server: this.serverAddr, error: err });
        }
      }
      this.current = (this.current + 1) % this.opts.servers.length;
      // A refusal does not heal by redialling fast (and every refused authentication counts
      // against this address on the server, node_auth_limit.ts), so wait a minute.
      const delay = Math.max(backoffDelay(attempt++, 250, 10_000), refused ? REFUSED_RETRY_MS : 0);
      refused = false;
      await sleep(delay, signal).catch(() => undefined);
    }
  }

  private dial(signal: AbortSignal): Promise<ServerPeer> {
    const url = new URL("/v1/agent/rpc", this.serverAddr);
    url.protocol = url.protocol === "https:" || this.opts.tls ? "wss:" : "ws:";
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, {
        handshakeTimeout: HANDSHAKE_MS,
        ...tlsDialOptions(this.opts.tls),
        ...(this.opts.localAddress ? { localAddress: this.opts.localAddress } : {}),
      });
      const peer: ServerPeer = new RpcPeer<ClientMethods, ServerMethods>(socket, this.opts.log);
      this.opts.installHandlers(peer);
      const onAbort = () => socket.terminate();
      signal.addEventListener("abort", onAbort, { once: true });
      socket.once("open", () => {
        signal.removeEventListener("abort", onAbort);
        resolve(peer);
      });
      // An upgrade the server answers with an HTTP error (e.g. 429 after too many failed
      // authentications from this address) is reported with the server's code and text.
      socket.once("unexpected-response", (_req, res) => {
        signal.removeEventListener("abort", onAbort);
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.length < 16 && chunks.push(c));
        res.once("end", () => {
          const code = codeOf(res.headers["x-berth-error-code"]);
          const text = Buffer.concat(chunks).toString("utf8").trim().slice(0, 500);
          reject(new BerthError(code, `server refused the agent connection (${res.statusCode}): ${text}`));
          socket.terminate();
        });
        res.once("error", (err) => {
          reject(err);
          socket.terminate();
        });
      });
      socket.once("error", (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      });
    });
  }
}
