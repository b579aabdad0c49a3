/**
 * A loopback TCP proxy for fault tests: `drop` silently discards everything in both directions (no
 * reset, no close: a pause or a silent network drop as the far side sees it); `stall` holds every
 * byte back and delivers it, in order, when the stall ends (a slow answer, nothing lost).
 */
import net from "node:net";

export interface TcpProxy {
  endpoint: string;
  drop(on: boolean): void;
  stall(on: boolean): void;
  close(): Promise<void>;
}

export async function tcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  let dropping = false;
  let stalled = false;
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  const pass = (to: net.Socket) => (d: Buffer) => {
    if (dropping) return;
    if (stalled) held.push(() => void to.write(d));
    else to.write(d);
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("error", () => undefined);
      s.on("close", () => sockets.delete(s));
    }
    client.on("data", pass(upstream));
    upstream.on("data", pass(client));
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const addr = server.address() as net.AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${addr.port}`,
    drop: (on) => (dropping = on),
    stall: (on) => {
      stalled = on;
      if (!on) for (const deliver of held.splice(0)) deliver();
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
