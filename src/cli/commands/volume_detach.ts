/**
 * `berth volume detach <volume> <node>`: releases a volume from a node whose allocs have stopped.
 * The node is an ID, a unique ID prefix, or a node's exact name, resolved as the server resolves
 * it (volume_detach.ts resolveNode): one that matches several nodes is refused, naming them.
 */
import { hasErrorCode, type ApiClient } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { withProgress } from "../progress.js";
import { claimProgress } from "./volume_progress.js";

export interface VolumeDetachArgs extends Parsed {
  id: string;
  node: string;
}

export const volumeDetach: Command<VolumeDetachArgs> = {
  usage: "Usage: berth volume detach [options] <volume> <node>",
  help: "Unmounts the volume on the node (NodeUnpublish/NodeUnstage) for allocations there that have stopped, then releases their claims (ControllerUnpublish when the plugin needs it). Refused while a running allocation on that node uses the volume. The node may be given by an ID, an ID prefix or its name. A detach that takes longer than 2 s shows each claim's release step on stderr until it is done.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectArgs(positionals, 2, 2, "<volume> <node>");
    return { address: values.address, id: positionals[0]!, node: positionals[1]! };
  },
  run: (p, io) =>
    attempt(io, "detaching volume", async () => {
      const node = await resolveNode(io.api.nodes, p.node);
      const what = `Detaching volume ${JSON.stringify(p.id)} from node ${JSON.stringify(node.ID)}`;
      const watch = claimProgress(io, p.id, node.ID);
      await withProgress(io, { what, watch }, () => io.api.volumes.detach(p.id, node.ID));
      io.stdout(`Successfully detached volume ${JSON.stringify(p.id)} from node ${JSON.stringify(node.ID)}!`);
    }),
};

/** The node `ref` names: by ID, else the one node whose ID starts with it or whose name is it. */
async function resolveNode(nodes: ApiClient["nodes"], ref: string): Promise<{ ID: string }> {
  try {
    return await nodes.info(ref);
  } catch (err) {
    if (!hasErrorCode(err, "ERR_NOT_FOUND")) throw err;
    const matches = (await nodes.list()).filter((n) => n.ID.startsWith(ref) || n.Name === ref);
    if (matches.length === 1) return matches[0]!;
    if (matches.length === 0) throw err;
    const which = matches.map((n) => `${n.ID} (${n.Name})`).sort();
    throw new Error(
      `node ${JSON.stringify(ref)} matches ${matches.length} nodes by ID prefix or name: ${which.join(", ")}; give a node ID`,
      { cause: err },
    );
  }
}
