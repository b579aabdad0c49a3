/**
 * Shared pieces of the server integration tests: an in-process server, a fake node agent's RPC
 * connection with caller-given ClientCSI handlers, and small HTTP helpers.
 */
import assert from "node:assert/strict";
import { WebSocket } from "ws";
import { Server } from "../../../src/server/server.js";
import { RpcPeer } from "../../../src/internal/rpc/peer.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { ClientMethods, ServerMethods } from "../../../src/structs/rpc.js";

export type AgentPeer = RpcPeer<ClientMethods, ServerMethods>;

/** Handlers for the methods the server calls on a node agent, by method name. */
export type ClientHandlers = {
  [M in keyof ClientMethods]?: (
    req: ClientMethods[M][0],
    signal: AbortSignal,
  ) => Promise<ClientMethods[M][1]>;
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- recorded requests of several shapes
export type Call = { method: string; params: any };

/** Starts an in-memory server on a free loopback port, stopped after the test; answers its base URL. */
export async function startServer(t: { after(fn: () => unknown): void }): Promise<string> {
  const server = new Server({
    dataDir: null,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    heartbeatTtlMs: 60_000,
  });
  await server.start();
  t.after(() => server.stop());
  return server.httpAddress;
}

/** Opens a node agent's RPC connection to the server at `base`, answering with `handlers`. */
export async function connectAgent(base: string, handlers: ClientHandlers = {}): Promise<AgentPeer> {
  const ws = new WebSocket(base.replace("http://", "ws://") + "/v1/agent/rpc");
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const peer = new RpcPeer<ClientMethods, ServerMethods>(ws, nullLogger);
  for (const [method, fn] of Object.entries(handlers)) {
    peer.handle(method as keyof ClientMethods, fn as never);
  }
  return peer;
}

/** An HTTP request; a string body is sent as is, any other as JSON. */
export async function http(
  base: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(base + path, {
    method,
    headers: { "Content-Type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- test reads arbitrary answers
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json, index: res.headers.get("x-nomad-index") };
}

export async function getJson<T>(base: string, route: string): Promise<T> {
  const res = await fetch(base + route);
  assert.equal(res.status, 200, `GET ${route}`);
  return (await res.json()) as T;
}

export async function put(base: string, route: string, body: unknown): Promise<void> {
  const res = await fetch(base + route, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.text());
}
