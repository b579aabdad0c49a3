/**
 * What the scale test and the scale benchmark share: an in-process server on loopback with a SQLite
 * store in a temp dir and no per-address connection limits (every simulated node dials from
 * 127.0.0.1), and the HTTP calls they make to it.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { nullLogger } from "../../../src/internal/log.js";
import { Server } from "../../../src/server/server.js";

export interface ScaleServer {
  server: Server;
  base: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * `seed` writes into the state dir before the server opens it (the bench fills the volume table
 * that way, unmeasured).
 */
export async function startScaleServer(
  opts: { heartbeatTtlMs?: number; seed?: (dir: string) => Promise<void> } = {},
): Promise<ScaleServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-scale-"));
  const server = new Server({
    dataDir: dir,
    httpAddr: "127.0.0.1:0",
    log: nullLogger,
    ...(opts.heartbeatTtlMs ? { heartbeatTtlMs: opts.heartbeatTtlMs } : {}),
    limits: { httpMaxConnsPerClient: 0, rpcMaxConnsPerClient: 0 },
  });
  try {
    await opts.seed?.(dir);
    await server.start();
  } catch (err) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    server,
    base: server.httpAddress,
    dir,
    stop: async () => {
      try {
        await server.stop();
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

async function send(method: string, base: string, route: string, body?: unknown): Promise<unknown> {
  const res = await fetch(base + route, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
  return text ? (JSON.parse(text) as unknown) : null;
}

export const put = (base: string, route: string, body: unknown) => send("PUT", base, route, body);
export const del = (base: string, route: string) => send("DELETE", base, route);
export const get = <T>(base: string, route: string) => send("GET", base, route) as Promise<T>;

/** Registers volume `id` of `pluginId` (an existing volume, as `volume register` does). */
export function registerVolume(base: string, id: string, pluginId: string): Promise<unknown> {
  return put(base, `/v1/volume/csi/${encodeURIComponent(id)}`, {
    Volumes: [
      {
        ID: id,
        Name: id,
        PluginID: pluginId,
        ExternalID: `ext-${id}`,
        RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
      },
    ],
  });
}

/**
 * A service job of `count` allocs on simulated nodes, each claiming its own volume
 * `source[N]` (per_alloc); `node` pins every alloc to one node by name.
 */
export function perAllocJob(id: string, source: string, count: number, node?: string) {
  return {
    Job: {
      ID: id,
      Type: "service",
      ...(node ? { Constraints: [{ LTarget: "${node.unique.name}", RTarget: node, Operand: "=" }] } : {}),
      TaskGroups: [
        {
          Name: "g",
          Count: count,
          Volumes: {
            data: {
              Type: "csi",
              Source: source,
              PerAlloc: true,
              AccessMode: "single-node-writer",
              AttachmentMode: "file-system",
            },
          },
          Tasks: [
            {
              Name: "t",
              Driver: "mock_driver",
              Config: {},
              VolumeMounts: [{ Volume: "data", Destination: "/data" }],
            },
          ],
        },
      ],
    },
  };
}

export interface ApiVolume {
  ID: string;
  Schedulable: boolean;
  ReadAllocs: Record<string, null>;
  WriteAllocs: Record<string, null>;
  PastClaims?: Record<string, unknown>;
  WriteClaims?: Record<string, unknown>;
}

export interface ApiPlugin {
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
}

export interface ApiAlloc {
  ID: string;
  Name: string;
  NodeID: string;
  ClientStatus: string;
  DesiredStatus: string;
}
