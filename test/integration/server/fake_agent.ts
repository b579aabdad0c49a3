/**
 * Shared pieces of the server integration tests: an in-process server, a fake node agent's RPC
 * connection with caller-given ClientCSI handlers, and small HTTP helpers.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { WebSocket } from "ws";
import { Server } from "../../../src/server/server.js";
import { RpcPeer, type CallOptions } from "../../../src/internal/rpc/peer.js";
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

/** Each fake node's secret, by node ID: every connection of a test process registers with it. */
const fakeNodeSecrets = new Map<string, string>();

/** The secret the fake agents of this process prove node `nodeId` with (made on first use). */
export function fakeNodeSecret(nodeId: string): string {
  let s = fakeNodeSecrets.get(nodeId);
  if (s === undefined) {
    s = randomUUID();
    fakeNodeSecrets.set(nodeId, s);
  }
  return s;
}

export interface ConnectOptions {
  /**
   * The Node.SecretID its Node.Register calls carry when they carry none: by default the node's
   * own (fakeNodeSecret), as a real agent keeps it; `null` sends none, a string sends that one
   * (a rogue agent).
   */
  secret?: string | null;
  /** The local address to connect from (another loopback address is another client). */
  localAddress?: string;
}

/**
 * Opens a node agent's RPC connection to the server at `base`, answering with `handlers`. Its
 * Node.Register calls prove the node's identity as a real agent does (see ConnectOptions).
 */
export async function connectAgent(
  base: string,
  handlers: ClientHandlers = {},
  opts: ConnectOptions = {},
): Promise<AgentPeer> {
  const ws = new WebSocket(
    base.replace("http://", "ws://") + "/v1/agent/rpc",
    opts.localAddress ? { localAddress: opts.localAddress } : {},
  );
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  const peer = new RpcPeer<ClientMethods, ServerMethods>(ws, nullLogger);
  for (const [method, fn] of Object.entries(handlers)) {
    peer.handle(method as keyof ClientMethods, fn as never);
  }
  const call = peer.call.bind(peer);
  peer.call = (method: keyof ServerMethods, params: unknown, o?: CallOptions) =>
    call(method, method === "Node.Register" ? withSecret(params, opts) : (params as never), o);
  return peer;
}

function withSecret(params: unknown, opts: ConnectOptions): never {
  const node = (params as { Node?: unknown } | null)?.Node;
  if (node === null || typeof node !== "object" || "SecretID" in node) return params as never;
  const id = (node as { ID?: unknown }).ID;
  const secret = opts.secret === undefined ? fakeNodeSecret(String(id)) : opts.secret;
  if (secret === null) return params as never;
  return { ...(params as object), Node: { ...node, SecretID: secret } } as never;
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
  return {
    status: res.status,
    text,
    json,
    index: res.headers.get("x-nomad-index"),
    code: res.headers.get("x-berth-error-code"),
  };
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
