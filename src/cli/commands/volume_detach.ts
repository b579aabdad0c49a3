/** `berth volume detach <volume> <node>`: releases a volume from a node whose allocs have stopped. */
import { expectArgs, parseCommandArgs } from "../flags.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { getByIdOrPrefix } from "../prefix.js";
import { withProgress } from "../progress.js";
import { claimProgress } from "./volume_progress.js";

export interface VolumeDetachArgs extends Parsed {
  id: string;
  node: string;
}

export const volumeDetach: Command<VolumeDetachArgs> = {
  usage: "Usage: berth volume detach [options] <volume> <node>",
  help: "Unmounts the volume on the node (NodeUnpublish/NodeUnstage) for allocations there that have stopped, then releases their claims (ControllerUnpublish when the plugin needs it). Refused while a running allocation on that node uses the volume. The node may be given by an ID prefix. A detach that takes longer than 2 s shows each claim's release step on stderr until it is done.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectArgs(positionals, 2, 2, "<volume> <node>");
    return { address: values.address, id: positionals[0]!, node: positionals[1]! };
  },
  run: (p, io) =>
    attempt(io, "detaching volume", async () => {
      const node = await getByIdOrPrefix(
        p.node,
        "node",
        (id) => io.api.getNode(id),
        (prefix) => io.api.listNodes({ prefix }),
      );
      const what = `Detaching volume ${JSON.stringify(p.id)} from node ${JSON.stringify(node.ID)}`;
      const watch = claimProgress(io, p.id, node.ID);
      await withProgress(io, { what, watch }, () => io.api.detachVolume(p.id, node.ID));
      io.stdout(`Successfully detached volume ${JSON.stringify(p.id)} from node ${JSON.stringify(node.ID)}!`);
    }),
};
