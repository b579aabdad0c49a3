/**
 * One berth server of the failover benchmark, in its own process so the benchmark can kill -9 it:
 * node dist/bench/failover_server.js <etcd endpoint> <prefix> <name> <port> <data dir>. It logs
 * to stderr as an agent does ("leader loops running" when its gate started the leader's loops).
 * Until the etcd state store is merged the server keeps its own SQLite file in <data dir>; the
 * election, and so the failover time, does not depend on the store.
 */
import { createLogger } from "../src/internal/log.js";
import { Server } from "../src/server/server.js";

const [endpoint, prefix, name, port, dataDir] = process.argv.slice(2);
if (!endpoint || !prefix || !name || !port || !dataDir) {
  throw new Error("usage: failover_server.js <etcd endpoint> <prefix> <name> <port> <data dir>");
}
const server = new Server({
  dataDir,
  httpAddr: `127.0.0.1:${port}`,
  log: createLogger({ level: "info" }),
  etcd: { endpoints: [endpoint], prefix },
  member: { name },
});
await server.start();
const stop = () => void server.stop().then(() => process.exit(0));
process.once("SIGINT", stop);
process.once("SIGTERM", stop);
