/** `berth node eligibility -enable|-disable <node>`: whether the scheduler may place new work on a node. */
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { resolveNode } from "./node_drain.js";

export interface NodeEligibilityArgs extends Parsed {
  node: string;
  eligible: boolean;
}

export const nodeEligibility: Command<NodeEligibilityArgs> = {
  usage: "Usage: berth node eligibility [options] <node>",
  help: "Toggles scheduling eligibility of a node (by ID or unique ID prefix): -enable lets the scheduler place allocations on it, -disable stops new placements while what runs there keeps running. A draining node cannot be made eligible; cancel the drain with `node drain -disable` instead.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      enable: { type: "boolean" },
      disable: { type: "boolean" },
    });
    expectArgs(positionals, 1, 1, "<node>");
    if ((values.enable ?? false) === (values.disable ?? false)) {
      throw new UsageError("exactly one of -enable or -disable is required");
    }
    return { address: values.address, node: positionals[0]!, eligible: values.enable ?? false };
  },
  run: (p, io) =>
    attempt(io, "updating scheduling eligibility", async () => {
      const node = await resolveNode(io, p.node);
      await io.api.nodes.toggleEligibility(node.ID, p.eligible);
      io.stdout(
        `Node ${JSON.stringify(node.ID)} scheduling eligibility set: ${p.eligible ? "eligible" : "ineligible"} for scheduling`,
      );
    }),
};
