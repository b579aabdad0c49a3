/**
 * `berth server members [-detailed] [-json]`: the live servers, with Nomad's columns
 * (command/server_members.go): Name, Address, Port, Status, Leader, Raft Version, Build,
 * Datacenter, Region; `-detailed` adds Protocol and the tags. berth elects its leader through an
 * etcd lease, not Raft, so Raft Version is "-". A member is the leader when its address and port
 * are what `/v1/status/leader` answers, as Nomad decides it.
 */
import type { AgentMember } from "../../api/index.js";
import type { Command, Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { table } from "../format.js";
import { fetchAndPrint, OUTPUT_FLAGS, outputArgs, type OutputArgs } from "../output_format.js";

export interface ServerMembersArgs extends Parsed, OutputArgs {
  detailed: boolean;
}

function isLeader(m: AgentMember, leader: string): boolean {
  const host = m.Addr.includes(":") ? `[${m.Addr}]` : m.Addr;
  return leader !== "" && `${host}:${m.Tags.port ?? m.Port}` === leader;
}

export function membersTable(members: AgentMember[], leader: string, detailed: boolean): string[] {
  const head = detailed
    ? [
        "Name",
        "Address",
        "Port",
        "Status",
        "Leader",
        "Protocol",
        "Raft Version",
        "Build",
        "Datacenter",
        "Region",
        "Tags",
      ]
    : ["Name", "Address", "Port", "Status", "Leader", "Raft Version", "Build", "Datacenter", "Region"];
  const rows = members.map((m) => {
    const tags = Object.entries(m.Tags)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    const base = [m.Name, m.Addr, String(m.Port), m.Status, String(isLeader(m, leader))];
    const rest = [m.Tags.raft_vsn ?? "-", m.Tags.build ?? "", m.Tags.dc ?? "", m.Tags.region ?? ""];
    return detailed ? [...base, String(m.ProtocolCur), ...rest, tags] : [...base, ...rest];
  });
  return table([head, ...rows]);
}

export const serverMembers: Command<ServerMembersArgs> = {
  usage: "Usage: berth server members [-detailed] [-json] [-t <template>] [options]",
  help: "Lists the live servers of the cluster and which one leads (Nomad's columns; berth elects its leader through an etcd lease, so Raft Version is \"-\"). -detailed adds the protocol and every tag (id, started, leader_since on the leader); -json prints the members as JSON and -t formats them with a Go template (as Nomad's: the list of GET /v1/agent/members, each with the tag Leader=true|false).",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      detailed: { type: "boolean" },
      ...OUTPUT_FLAGS,
    });
    expectArgs(positionals, 0, 0, "");
    return { address: values.address, detailed: values.detailed ?? false, ...outputArgs(values) };
  },
  run: (p, io) =>
    fetchAndPrint(
      io,
      p,
      "querying servers",
      async () => {
        const [members, leader] = await Promise.all([io.api.agent.members(), io.api.status.leader()]);
        return { leader, members: members.Members };
      },
      ({ leader, members }) => membersTable(members, leader, p.detailed),
      // Nomad's -json and -t: the members, each tagged Leader=true|false.
      ({ leader, members }) =>
        members.map((m) => ({ ...m, Tags: { ...m.Tags, Leader: String(isLeader(m, leader)) } })),
    ),
};
