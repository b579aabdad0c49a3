/**
 * One leader elector in a child process, so a test can kill -9 it (a leader that dies without
 * resigning). Usage: node elector_child.js <etcd endpoint> <prefix> <name> <ttlSec>. It prints one
 * JSON line per event: {"event":"gain","revision":"…"} and {"event":"lose","reason":"…"}.
 * Without arguments it does nothing (the suite's runner loads every file under dist/test).
 */
import { openEtcd } from "../../src/server/leader/cluster.js";
import { LeaderElection } from "../../src/server/leader/election.js";
import { haKeys } from "../../src/server/leader/keys.js";
import { nullLogger } from "../../src/internal/log.js";
import { memberNamed } from "../builders/member.js";

const [endpoint, prefix, name, ttl] = process.argv.slice(2);
if (endpoint && prefix && name && ttl) {
  const election = new LeaderElection({
    client: openEtcd([endpoint]),
    keys: haKeys(prefix),
    self: memberNamed(name),
    ttlSec: Number(ttl),
    log: nullLogger,
    onGain: (term) => process.stdout.write(JSON.stringify({ event: "gain", revision: term.revision }) + "\n"),
    onLose: (reason) => process.stdout.write(JSON.stringify({ event: "lose", reason }) + "\n"),
  });
  election.start();
  process.stdout.write(JSON.stringify({ event: "started" }) + "\n");
}
