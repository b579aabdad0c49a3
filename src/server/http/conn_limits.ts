/**
 * Client-side input limits of the one listener that serves the HTTP API and the agents' RPC
 * upgrade, in the spirit of Nomad's agent `limits` block (issue 10: ~20,000 idle connections from
 * one client made the API unreachable; a request could take 300 s to arrive).
 *
 * - Connections per client address: at most `httpMaxConnsPerClient` open connections from one IP
 *   (Nomad: `http_max_conns_per_client`, default 100, 0 = no limit). One more is answered at once
 *   with `429 Too Many Requests` and closed, as Nomad's connlimit handler does, so a client sees why
 *   rather than a reset, and other addresses are unaffected. A connection that upgrades to the agent
 *   RPC moves from that count to the RPC one (`rpcMaxConnsPerClient`, Nomad's
 *   `rpc_max_conns_per_client`, default 100); over it the upgrade is refused the same way.
 * - Request arrival: the headers within `headersTimeoutMs` and the whole request within
 *   `requestTimeoutMs` of its start (Node answers 408 and closes), so a peer that connects and says
 *   nothing, or trickles bytes, is dropped. These bound only the *arrival* of a request: a blocking
 *   query (`?index=&wait=`, up to 10 min) has arrived in full before it waits, and its answer is
 *   not bounded. Idle keep-alive connections are closed after `keepAliveTimeoutMs`.
 * - Open connections in all: at most `maxOpenConns` (0 = no cap), derived at start from the
 *   process's open-file limit (internal/fd_limit.ts) so connections never take the descriptors the
 *   store needs; one more is answered `503` (ERR_TOO_MANY_CONNECTIONS) and closed, so a node agent
 *   moves on to another server instead of being reset. Agent RPC connections may fill the cap only
 *   up to `apiHeadroom` below it (an upgrade past that is refused the same way): a fleet bigger
 *   than the limit allows must not lock the operator's own API calls out.
 * - RPC handshake: an upgraded agent connection must send its first frame (Node.Register) within
 *   `rpcHandshakeTimeoutMs` (Nomad's `rpc_handshake_timeout`, default 5 s, 0 = no limit), else it
 *   is closed; real agents register the moment they connect.
 */
import type { Server as HttpServer, IncomingMessage, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { Logger } from "../../internal/log.js";
import { MAX_HEADER_BYTES } from "../wire/body_limit.js";
import {
  connectionAllowance,
  descriptorReserve,
  openFileLimit,
  type OpenFileLimit,
} from "../../internal/fd_limit.js";

export interface ConnLimits {
  /** Open HTTP connections per client IP; 0 disables the limit. */
  httpMaxConnsPerClient: number;
  /** Open agent RPC connections per client IP; 0 disables the limit. */
  rpcMaxConnsPerClient: number;
  /** How long an upgraded RPC connection may stay silent before its first frame; 0 disables. */
  rpcHandshakeTimeoutMs: number;
  /** How long a request's headers may take to arrive (Node's headersTimeout). */
  headersTimeoutMs: number;
  /** How long a whole request (headers and body) may take to arrive (Node's requestTimeout). */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection is kept open. */
  keepAliveTimeoutMs: number;
  /** Open connections in all (HTTP and agent RPC); 0 disables the cap. */
  maxOpenConns: number;
}

export const DEFAULT_CONN_LIMITS: Readonly<ConnLimits> = {
  httpMaxConnsPerClient: 100,
  rpcMaxConnsPerClient: 100,
  rpcHandshakeTimeoutMs: 5_000,
  headersTimeoutMs: 10_000,
  // Bodies are capped in size (wire/http_io.ts readJson); half a minute is ample for any of them.
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxOpenConns: 0,
};

const FULL_BODY =
  "the server is at its open-file limit and takes no more connections; retry or use another server\n";

/** At the open-file cap: the whole answer, as TOO_MANY. */
const FULL =
  "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
  `X-Berth-Error-Code: ERR_TOO_MANY_CONNECTIONS\r\nContent-Length: ${Buffer.byteLength(FULL_BODY)}\r\n\r\n` +
  FULL_BODY;

const TOO_MANY_BODY = "too many open connections from your address; close some and retry\n";

/** Too many connections: the whole answer, written straight to the socket before it is closed. */
const TOO_MANY =
  "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n" +
  `X-Berth-Error-Code: ERR_TOO_MANY_CONNECTIONS\r\nContent-Length: ${Buffer.byteLength(TOO_MANY_BODY)}\r\n\r\n` +
  TOO_MANY_BODY;

/**
 * The connection cap the process's open-file limit allows (0 where it cannot be read), said once at
 * start: at warn when it is low enough to cap a fleet (fewer than 10,000 connections), so an
 * operator learns it from the log, not from node 998's "unable to open database file".
 */
export function connectionCap(log: Logger, limit: OpenFileLimit | undefined = openFileLimit()): number {
  const cap = connectionAllowance(limit);
  if (!limit) return 0;
  const fields = {
    open_file_limit: limit.soft,
    max_connections: cap,
    kept_for_files: descriptorReserve(limit.soft),
  };
  if (cap < 10_000)
    log.warn(
      `open-file limit ${limit.soft}: this server takes at most ${cap} connections, of which at most ${cap - apiHeadroom(cap)} node agents (${apiHeadroom(cap)} kept for API clients); raise LimitNOFILE to serve more nodes`,
      fields,
    );
  else log.info("open-file limit read; connections capped below it", fields);
  return cap;
}

/** Open connections by client address, for one kind of connection. */
class AddressCounts {
  private readonly counts = new Map<string, number>();

  constructor(private readonly limit: number) {}

  /** Counts one more connection from `addr` unless that would pass the limit. */
  tryAdd(addr: string): boolean {
    const n = this.counts.get(addr) ?? 0;
    if (this.limit > 0 && n >= this.limit) return false;
    this.counts.set(addr, n + 1);
    return true;
  }

  remove(addr: string): void {
    const n = (this.counts.get(addr) ?? 0) - 1;
    if (n <= 0) this.counts.delete(addr);
    else this.counts.set(addr, n);
  }
}

export class ConnLimiter {
  private readonly http: AddressCounts;
  private readonly rpc: AddressCounts;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Open connections in all (for maxOpenConns), and those upgraded to agent RPC. */
  private open = 0;
  private rpcOpen = 0;
  /** When the cap was last logged (at most once a minute). */
  private loggedFullAt = Number.NEGATIVE_INFINITY;
  /** Open sockets' entries by the peer's address and port, for a TLS wrapper to find its TCP socket's. */
  private readonly byPeer = new Map<string, { kind: "http" | "rpc" }>();

  constructor(
    private readonly limits: ConnLimits,
    private readonly log: Logger,
  ) {
    this.http = new AddressCounts(limits.httpMaxConnsPerClient);
    this.rpc = new AddressCounts(limits.rpcMaxConnsPerClient);
  }

  /** Options for `http.createServer`: the timeouts, checked often enough to hold to the second. */
  serverOptions(): ServerOptions {
    return {
      headersTimeout: this.limits.headersTimeoutMs,
      requestTimeout: this.limits.requestTimeoutMs,
      keepAliveTimeout: this.limits.keepAliveTimeoutMs,
      maxHeaderSize: MAX_HEADER_BYTES,
      // Node checks the two request timeouts only this often (30 s by default, which would let a
      // silent connection live up to 40 s under a 10 s header timeout).
      connectionsCheckingInterval: Math.max(
        50,
        Math.min(1_000, Math.floor(this.limits.headersTimeoutMs / 4)),
      ),
    };
  }

  /**
   * Applies the limits to `server` (made with `serverOptions()`). Its listeners go before any
   * other, so a refused connection never reaches the HTTP parser and a refused upgrade never
   * reaches the RPC server.
   */
  attach(server: HttpServer): void {
    // Before the HTTP server's own listener, so a refused socket is never handed to its parser.
    server.prependListener("connection", (socket: Socket) => this.onConnection(socket));
    server.prependListener("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.onUpgrade(req, socket as Socket, head),
    );
    // With TLS (server/tls_listener.ts) the HTTP parser and the upgrade see a TLSSocket wrapping the
    // TCP socket counted above: the wrapper shares that socket's entry, so its upgrade moves the
    // count to RPC and gets the handshake timeout as a plain socket's does.
    server.prependListener("secureConnection", (tlsSocket: Socket) => {
      const conn = this.byPeer.get(peerKey(tlsSocket));
      if (conn) connKind.set(tlsSocket, conn);
    });
  }

  /** Stops the handshake timers (the sockets themselves are closed by the server's stop). */
  close(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private onConnection(socket: Socket): void {
    const addr = socket.remoteAddress;
    if (addr === undefined) {
      socket.destroy();
      return;
    }
    if (this.limits.maxOpenConns > 0 && this.open >= this.limits.maxOpenConns) {
      this.refuseFull(socket, addr);
      return;
    }
    if (!this.http.tryAdd(addr)) {
      this.refuse(socket, addr, "http");
      return;
    }
    // Counted as HTTP until it upgrades (see onUpgrade), uncounted when it closes.
    const conn = { kind: "http" as "http" | "rpc" };
    connKind.set(socket, conn);
    const key = peerKey(socket);
    this.byPeer.set(key, conn);
    this.open++;
    socket.once("close", () => {
      this.open--;
      if (conn.kind === "rpc") this.rpcOpen--;
      (conn.kind === "http" ? this.http : this.rpc).remove(addr);
      if (this.byPeer.get(key) === conn) this.byPeer.delete(key);
    });
  }

  private onUpgrade(_req: IncomingMessage, socket: Socket, head: Buffer): void {
    const addr = socket.remoteAddress;
    const conn = connKind.get(socket);
    if (addr === undefined || conn === undefined || conn.kind !== "http") return;
    const cap = this.limits.maxOpenConns;
    if (cap > 0 && this.rpcOpen >= cap - apiHeadroom(cap)) {
      this.refuseFull(socket, addr);
      return;
    }
    if (!this.rpc.tryAdd(addr)) {
      // The later listener (the RPC server) finds the socket closed and does not accept it.
      this.refuse(socket, addr, "rpc");
      return;
    }
    this.http.remove(addr);
    conn.kind = "rpc";
    this.rpcOpen++;
    if (this.limits.rpcHandshakeTimeoutMs > 0 && head.length === 0) this.awaitFirstFrame(socket, addr);
  }

  /** Closes an upgraded socket that has read nothing since the upgrade when the timeout fires. */
  private awaitFirstFrame(socket: Socket, addr: string): void {
    const readAtUpgrade = socket.bytesRead;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (socket.destroyed || socket.bytesRead > readAtUpgrade) return;
      this.log.warn("agent RPC connection sent nothing within the handshake timeout; closing it", {
        client: addr,
        timeoutMs: this.limits.rpcHandshakeTimeoutMs,
      });
      socket.destroy();
    }, this.limits.rpcHandshakeTimeoutMs);
    this.timers.add(timer);
    socket.once("close", () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    });
  }

  private refuseFull(socket: Socket, addr: string): void {
    const now = Date.now();
    if (now - this.loggedFullAt > 60_000) {
      this.loggedFullAt = now;
      this.log.warn("at the open-file limit's connection cap; refusing connections (raise LimitNOFILE)", {
        client: addr,
        max_open_conns: this.limits.maxOpenConns,
      });
    }
    socket.end(FULL);
    socket.destroy();
  }

  private refuse(socket: Socket, addr: string, kind: "http" | "rpc"): void {
    this.log.warn("too many connections from one client; refusing", {
      client: addr,
      kind,
      limit: kind === "http" ? this.limits.httpMaxConnsPerClient : this.limits.rpcMaxConnsPerClient,
    });
    // Written and destroyed in one go: the short answer fits a fresh socket's send buffer, so it
    // leaves at once (Nomad gives it a 10 ms write deadline), and a destroyed socket is never read,
    // so no request on it reaches a route. Should the write not go out, the client sees a reset.
    socket.end(TOO_MANY);
    socket.destroy();
  }
}

/** Connections of the open-file cap kept for API clients: agents never take them. */
export function apiHeadroom(cap: number): number {
  return Math.min(Math.floor(cap / 2), Math.max(16, Math.floor(cap / 16)));
}

/** Which count an accepted socket is in; it moves from HTTP to RPC when the socket upgrades. */
const connKind = new WeakMap<Socket, { kind: "http" | "rpc" }>();

function peerKey(socket: Socket): string {
  return `${socket.remoteAddress ?? ""}|${socket.remotePort ?? ""}`;
}
