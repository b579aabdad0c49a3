/**
 * Where each simulated node dials from. Real nodes are separate hosts, each with its own address,
 * and the server's per-address connection limit (agent config `limits { rpc_max_conns_per_client
 * = 100 }`, as Nomad's) is built for that: it bounds what one host may hold open. N simulated nodes
 * in one process would all come from one address and pass that limit at the 101st node. So when
 * the server is on this host's IPv4 loopback (127.0.0.0/8, where Linux answers every address
 * without any setup), node i dials from its own loopback address, 127.2.0.1, 127.2.0.2, …, and the
 * server counts one connection per simulated node, as it would per real node: a default server
 * takes any number of simulated nodes, and its limit keeps meaning what it means in production.
 * Against a server elsewhere (or `localhost`, which may resolve to ::1, with one loopback address)
 * nodes dial from the OS's choice, and that server's limit must allow N connections from this host.
 */
import net from "node:net";

/** The first simulated node's address; 127.0.0.1 (what every other local client uses) stays apart. */
const BASE = (127 << 24) | (2 << 16);

/** The local address node `i` dials `server` from, or undefined to let the OS pick. */
export function sourceAddressFor(server: string, i: number): string | undefined {
  let host: string;
  try {
    host = new URL(server).hostname;
  } catch {
    return undefined;
  }
  if (net.isIPv4(host) === false || !host.startsWith("127.")) return undefined;
  // 127.2.0.1 onwards: 2^22 addresses before the /8 ends, far more nodes than one process holds.
  const n = BASE + 1 + i;
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}
