/**
 * A symmetric request/response peer over one WebSocket. Either side may call methods the other has
 * registered; each call carries an id, may be cancelled (the remote handler's signal aborts), and
 * fails with a coded error. When the socket closes, every pending call fails with
 * ERR_RPC_UNAVAILABLE and every running handler's signal aborts.
 */
import { performance } from "node:perf_hooks";
import type { WebSocket } from "ws";
import { BerthError, asBerthError, fromWire, type WireError } from "../../structs/errors.js";
import type { Logger } from "../log.js";

/** A map of method name → [request, response]; interfaces such as ServerMethods satisfy it. */
type MethodMap<T> = { [K in keyof T]: [unknown, unknown] };

type Frame =
  | { t: "req"; id: number; method: string; params: unknown }
  | { t: "res"; id: number; result: unknown }
  | { t: "err"; id: number; error: WireError }
  | { t: "cancel"; id: number };

export interface CallOptions {
  signal?: AbortSignal;
  /** Milliseconds before the call fails with ERR_RPC_TIMEOUT (and is cancelled remotely). */
  timeoutMs?: number;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  cleanup: () => void;
}

export class RpcPeer<Local extends MethodMap<Local>, Remote extends MethodMap<Remote>> {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly running = new Map<number, AbortController>();
  private readonly handlers = new Map<string, (params: unknown, signal: AbortSignal) => Promise<unknown>>();
  private readonly closeListeners: (() => void)[] = [];
  private closed = false;
  /** The socket is corked until the end of this tick (see corkForTick). */
  private corked = false;
  private heardAt = performance.now();

  constructor(
    private readonly socket: WebSocket,
    private readonly log: Logger,
  ) {
    socket.on("message", (data: Buffer) => {
      this.heardAt = performance.now();
      this.onMessage(data);
    });
    socket.on("pong", () => (this.heardAt = performance.now()));
    socket.on("close", () => this.onClose());
    socket.on("error", (err) => {
      this.log.debug("rpc socket error", { error: err });
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  handle<M extends keyof Local & string>(
    method: M,
    fn: (req: Local[M][0], signal: AbortSignal) => Promise<Local[M][1]>,
  ): void {
    this.handlers.set(method, fn);
  }

  onClosed(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  call<M extends keyof Remote & string>(
    method: M,
    params: Remote[M][0],
    opts: CallOptions = {},
  ): Promise<Remote[M][1]> {
    if (this.closed) {
      return Promise.reject(new BerthError("ERR_RPC_UNAVAILABLE", `rpc ${method}: connection closed`));
    }
    if (opts.signal?.aborted) {
      return Promise.reject(new BerthError("ERR_ABORTED", `rpc ${method}: cancelled`));
    }
    const id = this.nextId++;
    return new Promise<Remote[M][1]>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        this.sendFrame({ t: "cancel", id });
        settle();
        reject(new BerthError("ERR_ABORTED", `rpc ${method}: cancelled`));
      };
      const settle = () => {
        this.pending.delete(id);
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener("abort", onAbort);
      };
      if (opts.timeoutMs !== undefined) {
        timer = setTimeout(() => {
          this.sendFrame({ t: "cancel", id });
          settle();
          reject(new BerthError("ERR_RPC_TIMEOUT", `rpc ${method}: no answer within ${opts.timeoutMs}ms`));
        }, opts.timeoutMs);
      }
      opts.signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, {
        resolve: (v) => resolve(v),
        reject,
        cleanup: settle,
      });
      this.sendFrame({ t: "req", id, method, params });
    });
  }

  close(): void {
    this.socket.close();
    this.onClose();
  }

  /**
   * Drops the connection at once, without the WebSocket closing handshake: for a peer that stopped
   * answering (hung, paused or cut off), whose half of the handshake would never come.
   */
  terminate(): void {
    this.socket.terminate();
    this.onClose();
  }

  /** Sends a WebSocket ping; the other side's pong updates lastHeardAt (a liveness probe). */
  ping(): void {
    if (this.closed) return;
    try {
      this.socket.ping();
    } catch (err) {
      this.log.debug("rpc ping failed", { error: err });
    }
  }

  /** When a frame (or a pong) last arrived from the other side (performance.now()). */
  get lastHeardAt(): number {
    return this.heardAt;
  }

  private sendFrame(frame: Frame): void {
    if (this.closed) return;
    this.corkForTick();
    try {
      this.socket.send(JSON.stringify(frame));
    } catch (err) {
      this.log.debug("rpc send failed", { error: err });
    }
  }

  /**
   * Frames sent in one tick leave in one write: the TCP socket under the WebSocket is corked at the
   * first frame and uncorked once the tick's work (its microtasks included) is done. A group
   * commit answers a whole batch of calls at once, and without this each answer (and each call it
   * leads to) was its own writev system call, about a fifth of the server's time on the claim path
   * (bench/claims.ts). Order and content are unchanged; a frame waits at most until the end of the
   * tick it was sent in. ws keeps its socket as `_socket` (not in its typings): without one (or a
   * socket that cannot cork) frames are written one by one as before.
   */
  private corkForTick(): void {
    if (this.corked) return;
    const raw = (this.socket as unknown as { _socket?: { cork?: () => void; uncork?: () => void } })._socket;
    if (typeof raw?.cork !== "function" || typeof raw.uncork !== "function") return;
    raw.cork();
    this.corked = true;
    process.nextTick(() => {
      this.corked = false;
      raw.uncork!();
    });
  }

  private onMessage(data: Buffer): void {
    let frame: Frame;
    try {
      frame = JSON.parse(data.toString("utf8")) as Frame;
    } catch {
      this.log.warn("rpc: dropping a malformed frame");
      return;
    }
    switch (frame.t) {
      case "req":
        void this.serve(frame.id, frame.method, frame.params);
        return;
      case "cancel":
        this.running.get(frame.id)?.abort(new BerthError("ERR_ABORTED", "cancelled by caller"));
        return;
      case "res": {
        const p = this.pending.get(frame.id);
        if (!p) return;
        p.cleanup();
        p.resolve(frame.result);
        return;
      }
      case "err": {
        const p = this.pending.get(frame.id);
        if (!p) return;
        p.cleanup();
        p.reject(fromWire(frame.error));
        return;
      }
    }
  }

  private async serve(id: number, method: string, params: unknown): Promise<void> {
    const handler = this.handlers.get(method);
    if (!handler) {
      this.sendFrame({
        t: "err",
        id,
        error: { code: "ERR_NOT_FOUND", message: `unknown rpc method ${method}` },
      });
      return;
    }
    const ac = new AbortController();
    this.running.set(id, ac);
    try {
      const result = await handler(params, ac.signal);
      this.sendFrame({ t: "res", id, result: result ?? {} });
    } catch (err) {
      const e = asBerthError(err);
      if (e.code === "ERR_INTERNAL") this.log.error(`rpc ${method} failed`, { error: e.message });
      this.sendFrame({ t: "err", id, error: e.toJSON() });
    } finally {
      this.running.delete(id);
    }
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      p.cleanup();
      p.reject(new BerthError("ERR_RPC_UNAVAILABLE", `rpc call ${id}: connection closed`));
    }
    this.pending.clear();
    for (const ac of this.running.values()) ac.abort(new BerthError("ERR_ABORTED", "connection closed"));
    this.running.clear();
    for (const l of this.closeListeners.splice(0)) l();
  }
}
