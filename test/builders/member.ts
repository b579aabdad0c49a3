/** A server member record for election tests: name `n` is `n.global` at http://n. */
import type { ServerMember } from "../../src/server/leader/keys.js";

export function memberNamed(name: string): ServerMember {
  return {
    ID: `id-${name}`,
    Name: `${name}.global`,
    Region: "global",
    Datacenter: "dc1",
    HTTPAddr: `http://${name}`,
    RPCAddr: `${name}:1`,
    StartTime: Date.now(),
  };
}
