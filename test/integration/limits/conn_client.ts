/**
 * Raw loopback clients for the connection-limit tests: sockets from a chosen source address (Linux
 * routes all of 127/8 to lo, so 127.0.0.2 and 127.0.0.3 are distinct clients of a server on
 * 127.0.0.1), and a GET written by hand on one, so a test controls exactly which connection a
 * request travels on (fetch pools its connections).
 */
import net from "node:net";

export interface RawConn {
  socket: net.Socket;
  /** Everything the server sent, as text, once it closed the connection. */
  closed: Promise<string>;
}

/** Opens a TCP connection to `port` on 127.0.0.1 from `from`; resolves once connected. */
export async function rawConnect(port: number, from: string): Promise<RawConn> {
  const socket = net.connect({ host: "127.0.0.1", port, localAddress: from });
  let text = "";
  socket.setEncoding("utf8");
  socket.on("data", (d: string) => (text += d));
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(text)));
  // A reset (the server destroying the socket with our bytes unread) is a close like any other.
  socket.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return { socket, closed };
}

/** The status line and headers of the first answer on a fresh connection from `from`. */
export async function rawGet(
  port: number,
  from: string,
  route: string,
): Promise<{ status: number; head: string; body: string }> {
  const c = await rawConnect(port, from);
  c.socket.write(`GET ${route} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
  const text = await c.closed;
  const [head = "", body = ""] = text.split("\r\n\r\n", 2);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, head, body };
}
