/**
 * Where a server keeps its state when several servers share it: etcd (server/state/etcd/etcd_store.ts).
 *
 *   server {
 *     etcd {
 *       endpoints = ["http://127.0.0.1:2379", "http://127.0.0.1:22379"]  # client URLs of the members
 *       prefix    = "/berth"                                            # every key lives under it
 *     }
 *   }
 *
 * or `-etcd-endpoints=http://127.0.0.1:2379[,…]` (the flag's list replaces the file's). Without
 * either the server keeps its state in the embedded SQLite file (the default, and `-dev`'s).
 * Nomad has no such block (it runs Raft): the names follow etcd's own (`--endpoints`).
 */
import type { Body } from "../api/specs/body.js";
import { BerthError } from "../structs/errors.js";
import { DEFAULT_ETCD_PREFIX, type EtcdSettings } from "../server/state/open_store.js";

export interface EtcdFileSetting {
  endpoints?: string[];
  prefix?: string;
}

/** The `server { etcd { … } }` block. */
export function parseEtcdBlock(b: Body): EtcdFileSetting {
  const out: EtcdFileSetting = {};
  const endpoints = b.stringList("endpoints");
  if (endpoints !== undefined) {
    const bad = endpoints.find((e) => endpointProblem(e) !== undefined);
    if (bad !== undefined) throw b.error(`endpoints: ${JSON.stringify(bad)} ${endpointProblem(bad)!}`);
    if (endpoints.length === 0) throw b.error("endpoints must name at least one etcd client URL");
    out.endpoints = endpoints;
  }
  const prefix = b.string("prefix");
  if (prefix !== undefined) {
    const problem = prefixProblem(prefix);
    if (problem) throw b.error(`prefix: ${JSON.stringify(prefix)} ${problem}`);
    out.prefix = prefix;
  }
  b.finish();
  return out;
}

/**
 * The settings the server runs with: the flag's endpoints over the file's; undefined when neither
 * names any (SQLite). Endpoints without a server role are an error: only a server keeps state.
 */
export function resolveEtcd(
  flag: string | undefined,
  file: EtcdFileSetting | undefined,
  server: boolean,
): EtcdSettings | undefined {
  let endpoints = file?.endpoints;
  if (flag !== undefined) {
    endpoints = flag
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
    const bad = endpoints.find((e) => endpointProblem(e) !== undefined);
    if (bad !== undefined) {
      throw new BerthError(
        "ERR_VALIDATION",
        `-etcd-endpoints: ${JSON.stringify(bad)} ${endpointProblem(bad)!}`,
      );
    }
    if (endpoints.length === 0) {
      throw new BerthError("ERR_VALIDATION", "-etcd-endpoints: name at least one etcd client URL");
    }
  }
  if (endpoints === undefined) {
    if (file?.prefix !== undefined) {
      throw new BerthError("ERR_VALIDATION", "server etcd: prefix is set but no endpoints are");
    }
    return undefined;
  }
  if (!server) {
    throw new BerthError(
      "ERR_VALIDATION",
      "-etcd-endpoints (or server { etcd }) needs -server: only a server keeps state",
    );
  }
  return { endpoints, prefix: file?.prefix ?? DEFAULT_ETCD_PREFIX };
}

function endpointProblem(e: string): string | undefined {
  let url: URL;
  try {
    url = new URL(e);
  } catch {
    return "is not a URL like http://127.0.0.1:2379";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must start with http:// or https://";
  if (url.port === "") return "must name a port (etcd's client port is usually 2379)";
  if (url.pathname !== "/" || url.search !== "" || url.username !== "")
    return "must be only scheme://host:port";
  return undefined;
}

function prefixProblem(p: string): string | undefined {
  if (!p.startsWith("/")) return 'must start with "/"';
  if (p.length < 2 || p.endsWith("/")) return 'must name a path, e.g. "/berth", without a trailing "/"';
  return undefined;
}
