/**
 * `berth operator raft list-peers [-json]`: the servers that may lead and which one does, since
 * when. berth has no Raft — its leader holds an etcd lease (src/server/leader/election.ts) — but
 * a Nomad operator looks for the leader under this name, so berth answers it here, with Nomad's
 * first columns (command/operator_raft_list.go: Node, ID, Address, State, Voter) and, instead of
 * RaftProtocol, "Leader Since": when the current leader's term began (RFC 3339, UTC).
 */
import type { AgentMember } from "../../api/index.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { json, table } from "../format.js";

export interface OperatorRaftArgs extends Parsed {
  json: boolean;
}

export interface PeerRow {
  Node: string;
  ID: string;
  Address: string;
  Leader: boolean;
  /** Every server may lead (all hold a lease and campaign). */
  Voter: boolean;
  /** When the leader's term began (RFC 3339); "" on the others. */
  LeaderSince: string;
}

export function peerRows(members: AgentMember[], leader: string): PeerRow[] {
  return members.map((m) => {
    const host = m.Addr.includes(":") ? `[${m.Addr}]` : m.Addr;
    const address = `${host}:${m.Tags.port ?? m.Port}`;
    const leads = leader !== "" && address === leader;
    return {
      Node: m.Name,
      ID: m.Tags.id ?? "",
      Address: address,
      Leader: leads,
      Voter: true,
      LeaderSince: leads ? (m.Tags.leader_since ?? "") : "",
    };
  });
}

export const operatorRaft: Command<OperatorRaftArgs> = {
  usage: "Usage: berth operator raft list-peers [-json] [options]",
  help: "Lists the servers that take part in the leader election and which one leads, since when. berth has no Raft: its servers elect a leader through an etcd lease; the command keeps Nomad's name so an operator finds the leader where Nomad shows it. -json prints the rows as JSON.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, { json: { type: "boolean" } });
    expectArgs(positionals, 1, 1, "list-peers");
    if (positionals[0] !== "list-peers") {
      throw new UsageError(`unknown subcommand ${JSON.stringify(positionals[0])} (want list-peers)`);
    }
    return { address: values.address, json: values.json ?? false };
  },
  run(p, io) {
    return attempt(io, "querying servers", async () => {
      const [members, leader] = await Promise.all([io.api.agent.members(), io.api.status.leader()]);
      const rows = peerRows(members.Members, leader);
      if (p.json) {
        io.stdout(json(rows));
        return;
      }
      const lines = table([
        ["Node", "ID", "Address", "State", "Voter", "Leader Since"],
        ...rows.map((r) => [
          r.Node,
          r.ID,
          r.Address,
          r.Leader ? "leader" : "follower",
          String(r.Voter),
          r.LeaderSince || "-",
        ]),
      ]);
      for (const line of lines) io.stdout(line);
      if (leader === "") io.stdout("No leader: the servers cannot see one (is etcd reachable?)");
    });
  },
};
