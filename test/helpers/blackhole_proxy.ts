/**
 * A blackholing TCP proxy on loopback, for partition tests: one listener forwards to one upstream
 * (e.g. a node agent's view of one server). `partition()` stops forwarding bytes in both directions
 * WITHOUT closing any socket, as a network that drops packets does (no FIN, no RST reaches either
 * side): reads stop, so what a side sends stays in kernel buffers and its peer hears nothing; a
 * close of one side is held back too, and a connection accepted meanwhile is held silent (no
 * upstream dial). `heal()` delivers what was held, in order, and resumes — as TCP retransmission
 * would after a partition shorter than its give-up time. A proxy never drops bytes in the middle of
 * a stream: TCP does not either.
 *
 * `liveConnections()` says which connections are open end to end right now, newest first, so a
 * test can tell which upstream a node agent currently talks through (`NodeProxies.connectedTo`).
 * `close()` destroys every socket and the listener.
 */
import net from "node:net";
import { freePort } from "./agent_process.js";

/** What one direction of a pipe holds back while partitioned. */
interface Held {
  chunks: Buffer[];
  ended: boolean;
  closed: boolean;
}

/** One accepted connection and its upstream side. */
interface Pipe {
  id: number;
  openedAt: number;
  client: net.Socket;
  upstream: net.Socket | null;
  /** The upstream socket finished connecting. */
  connected: boolean;
  closed: boolean;
  /** Delivers what each direction held and resumes reading (run by heal()). */
  release: (() => void)[];
}

export interface LiveConnection {
  id: number;
  openedAt: number;
}

export class BlackholeProxy {
  private server: net.Server | null = null;
  private readonly pipes = new Set<Pipe>();
  /** Dials of connections accepted while partitioned, run by heal(). */
  private readonly pendingDials = new Set<() => void>();
  private cut = false;
  private nextId = 1;
  /** Connections accepted so far (a test can see a node redial). */
  accepted = 0;

  private constructor(
    readonly port: number,
    readonly upstream: { host: string; port: number },
    readonly label: string,
  ) {}

  /** Listens on a free loopback port and forwards to `upstream` ("host:port"). */
  static async start(upstream: string, label = upstream): Promise<BlackholeProxy> {
    const [host, port] = splitHostPort(upstream);
    const listen = await freePort();
    const proxy = new BlackholeProxy(listen, { host, port }, label);
    await proxy.listen();
    return proxy;
  }

  /** "127.0.0.1:PORT", as a node agent's `-servers` takes it. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  get partitioned(): boolean {
    return this.cut;
  }

  partition(): void {
    this.cut = true;
    for (const p of this.pipes) {
      p.client.pause();
      p.upstream?.pause();
    }
  }

  heal(): void {
    if (!this.cut) return;
    this.cut = false;
    for (const p of [...this.pipes]) for (const r of p.release) r();
    for (const d of [...this.pendingDials]) d();
    this.pendingDials.clear();
  }

  /** Connections open on both sides now (upstream connected), newest first. */
  liveConnections(): LiveConnection[] {
    return [...this.pipes]
      .filter((p) => p.connected && !p.closed && !p.client.destroyed && p.upstream?.destroyed === false)
      .sort((a, b) => b.openedAt - a.openedAt || b.id - a.id)
      .map((p) => ({ id: p.id, openedAt: p.openedAt }));
  }

  async close(): Promise<void> {
    for (const p of this.pipes) {
      p.client.destroy();
      p.upstream?.destroy();
    }
    this.pipes.clear();
    this.pendingDials.clear();
    const srv = this.server;
    this.server = null;
    if (srv) await new Promise<void>((resolve) => srv.close(() => resolve()));
  }

  private listen(): Promise<void> {
    const srv = net.createServer({ allowHalfOpen: true, pauseOnConnect: true }, (c) => this.accept(c));
    this.server = srv;
    return new Promise((resolve, reject) => {
      srv.once("error", reject);
      srv.listen(this.port, "127.0.0.1", () => {
        srv.off("error", reject);
        resolve();
      });
    });
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    const pipe: Pipe = {
      id: this.nextId++,
      openedAt: Date.now(),
      client,
      upstream: null,
      connected: false,
      closed: false,
      release: [],
    };
    this.pipes.add(pipe);
    client.on("error", () => undefined);
    // A connection accepted while partitioned is held silent: no upstream dial until the heal.
    const dial = () => {
      if (client.destroyed) {
        this.forget(pipe);
        return;
      }
      const up = net.connect({ host: this.upstream.host, port: this.upstream.port, allowHalfOpen: true });
      pipe.upstream = up;
      up.on("error", () => undefined);
      up.once("connect", () => {
        pipe.connected = true;
      });
      pipe.release.push(this.forward(pipe, client, up), this.forward(pipe, up, client));
    };
    if (this.cut) this.pendingDials.add(dial);
    else dial();
  }

  private forget(pipe: Pipe): void {
    pipe.closed = true;
    this.pipes.delete(pipe);
  }

  /**
   * Copies `from` to `to`, holding bytes, end and close while partitioned. Returns what heal()
   * runs: deliver what was held, in order, then read on.
   */
  private forward(pipe: Pipe, from: net.Socket, to: net.Socket): () => void {
    const held: Held = { chunks: [], ended: false, closed: false };
    const closeOther = () => {
      this.forget(pipe);
      // What was already written still reaches the other side, then it closes.
      to.end();
      to.destroySoon();
    };
    from.on("data", (chunk: Buffer) => {
      if (this.cut) {
        held.chunks.push(chunk);
        from.pause();
        return;
      }
      if (!to.write(chunk)) {
        from.pause();
        to.once("drain", () => {
          if (!this.cut) from.resume();
        });
      }
    });
    from.on("end", () => {
      if (this.cut) held.ended = true;
      else to.end();
    });
    from.on("close", () => {
      if (this.cut) held.closed = true;
      else closeOther();
    });
    if (this.cut) from.pause();
    else from.resume();
    return () => {
      for (const c of held.chunks.splice(0)) to.write(c);
      if (held.ended) to.end();
      if (held.closed) closeOther();
      else if (!from.destroyed) from.resume();
    };
  }
}

/**
 * A node agent's proxies, one per server (by the server's name): its `-servers` list, a partition
 * from every server at once, and which server it is connected to now.
 */
export class NodeProxies {
  constructor(readonly byServer: Map<string, BlackholeProxy>) {}

  /** One proxy per server (`name` → "host:port"), in the given order. */
  static async start(node: string, servers: { name: string; host: string }[]): Promise<NodeProxies> {
    const m = new Map<string, BlackholeProxy>();
    for (const s of servers) m.set(s.name, await BlackholeProxy.start(s.host, `${node}→${s.name}`));
    return new NodeProxies(m);
  }

  /** The `-servers=` value: the proxies' addresses in server order. */
  get serversFlag(): string {
    return [...this.byServer.values()].map((p) => p.address).join(",");
  }

  partition(): void {
    for (const p of this.byServer.values()) p.partition();
  }

  heal(): void {
    for (const p of this.byServer.values()) p.heal();
  }

  /** The servers this node has a live connection to, the newest connection first. */
  connectedTo(): string[] {
    return [...this.byServer.entries()]
      .flatMap(([name, p]) => p.liveConnections().map((c) => ({ name, ...c })))
      .sort((a, b) => b.openedAt - a.openedAt || b.id - a.id)
      .map((c) => c.name);
  }

  async close(): Promise<void> {
    for (const p of this.byServer.values()) await p.close();
  }
}

function splitHostPort(s: string): [string, number] {
  const i = s.lastIndexOf(":");
  const port = Number(s.slice(i + 1));
  if (i <= 0 || !Number.isInteger(port)) throw new Error(`not host:port: ${JSON.stringify(s)}`);
  return [s.slice(0, i), port];
}
