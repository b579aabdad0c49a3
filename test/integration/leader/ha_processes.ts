/**
 * Real-process pieces of the several-servers acceptance tests: `berth agent -server
 * -etcd-endpoints=…` processes on loopback sharing one etcd, who they say leads, and node agents
 * given a list of those servers. Every process runs under the caller's temp dir, so the caller's
 * cleanup (killProcessGroupsUnder(dir)) ends whatever a failing test left.
 */
import path from "node:path";
import { AgentProcess, eventually, freePort, getJson } from "../../helpers/agent_process.js";

export interface ServerProcess {
  name: string;
  /** host:port, as /v1/status/leader names a server. */
  host: string;
  /** http://host:port */
  base: string;
  log: string;
  proc: AgentProcess;
}

/** `n` servers named s0…, each with its own data dir and log under `dir`, on one etcd. */
export async function startServers(
  dir: string,
  etcdEndpoint: string,
  n: number,
  extraArgs: string[] = [],
): Promise<ServerProcess[]> {
  const out: ServerProcess[] = [];
  for (let i = 0; i < n; i++) {
    const port = await freePort();
    const name = `s${i}`;
    const log = path.join(dir, `${name}.log`);
    const proc = new AgentProcess(
      [
        "-server",
        "-data-dir",
        path.join(dir, name),
        "-http-addr",
        `127.0.0.1:${port}`,
        `-node-name=${name}`,
        `-etcd-endpoints=${etcdEndpoint}`,
        ...extraArgs,
      ],
      log,
    );
    out.push({ name, host: `127.0.0.1:${port}`, base: `http://127.0.0.1:${port}`, log, proc });
  }
  return out;
}

/** The leader `base` names (host:port), or undefined while it knows none or does not answer. */
export async function leaderOf(base: string): Promise<string | undefined> {
  try {
    const l = await getJson<string>(base, "/v1/status/leader");
    return l === "" ? undefined : l;
  } catch {
    return undefined;
  }
}

/** Waits until every running server of `servers` names the same leader, one of them; returns it. */
export async function agreedLeader(servers: ServerProcess[], timeoutMs = 30_000): Promise<ServerProcess> {
  const live = servers.filter((s) => s.proc.running);
  return eventually(
    `the servers ${live.map((s) => s.name).join(", ")} to agree on a leader among them`,
    async () => {
      const seen = await Promise.all(live.map((s) => leaderOf(s.base)));
      if (!seen.every((l) => l !== undefined && l === seen[0])) return undefined;
      return live.find((s) => s.host === seen[0]);
    },
    timeoutMs,
    50,
  );
}

/** A node agent `name` (data dir `dir/<name lower-cased>`) that dials `servers` in this order. */
export function nodeAgent(dir: string, name: string, servers: ServerProcess[]): AgentProcess {
  const lower = name.toLowerCase();
  return new AgentProcess(
    [
      "-client",
      "-data-dir",
      path.join(dir, lower),
      `-servers=${servers.map((s) => s.host).join(",")}`,
      `-node-name=${name}`,
    ],
    path.join(dir, `${lower}.log`),
  );
}

/** Waits until every node of `names` is ready, as `base` sees it. */
export async function nodesReady(base: string, names: string[], timeoutMs = 30_000): Promise<void> {
  await eventually(
    `nodes ${names.join(", ")} to be ready`,
    async () => {
      const nodes = await getJson<{ Name: string; Status: string }[]>(base, "/v1/nodes");
      const ready = new Set(nodes.filter((n) => n.Status === "ready").map((n) => n.Name));
      return names.every((n) => ready.has(n)) ? true : undefined;
    },
    timeoutMs,
  );
}
