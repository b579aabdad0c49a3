/**
 * A tiny real HTTP server on 127.0.0.1:0 that answers canned responses by "METHOD /path" (query
 * ignored) and records every request; an unknown route answers like the server does for a missing
 * object (404, ERR_NOT_FOUND), standing in for a berth agent in API and CLI tests.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Recorded {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** `json` is sent as JSON, `text` as plain text (the server's error format); status defaults to 200. */
export interface Reply {
  status?: number;
  json?: unknown;
  text?: string;
  /** Extra response headers, e.g. the server's X-Berth-Error-Code. */
  headers?: Record<string, string>;
}

/** What the real server answers for a missing object: 404 with its code. */
export const NOT_FOUND: Reply = {
  status: 404,
  text: "not found",
  headers: { "X-Berth-Error-Code": "ERR_NOT_FOUND" },
};

export interface FakeApi {
  address: string;
  requests: Recorded[];
  close(): Promise<void>;
}

export async function startFakeApi(
  routes: Record<string, Reply | ((req: Recorded) => Reply)>,
): Promise<FakeApi> {
  const requests: Recorded[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rec: Recorded = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(rec);
      const key = `${rec.method} ${rec.url.split("?")[0]}`;
      const route = routes[key];
      const reply: Reply = typeof route === "function" ? route(rec) : (route ?? NOT_FOUND);
      if (reply.json !== undefined) {
        res.writeHead(reply.status ?? 200, { ...reply.headers, "Content-Type": "application/json" });
        res.end(JSON.stringify(reply.json));
      } else {
        res.writeHead(reply.status ?? 200, { ...reply.headers, "Content-Type": "text/plain" });
        res.end(reply.text ?? "");
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}

/** An address nothing listens on: a port we bound and released. */
export async function deadAddress(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

/** A list route that honours `?prefix=` on IDs, as the server's list routes do. */
export function prefixListed(items: { ID: string }[]): (req: Recorded) => Reply {
  return (req) => {
    const prefix = new URL(req.url, "http://fake").searchParams.get("prefix") ?? "";
    return { json: items.filter((i) => i.ID.startsWith(prefix)) };
  };
}
