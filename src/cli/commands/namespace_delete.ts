/** `berth namespace delete <namespace>`: refused by the server while jobs, allocs or volumes live there. */
import { attempt, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs } from "../flags.js";

export interface NamespaceDeleteArgs extends Parsed {
  name: string;
}

export const namespaceDelete: Command<NamespaceDeleteArgs> = {
  usage: "Usage: berth namespace delete [options] <namespace>",
  help: "Deletes a namespace. The default namespace cannot be deleted, nor one that still has non-terminal jobs or allocations, or any CSI volume.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectArgs(positionals, 1, 1, "<namespace>");
    return { address: values.address, name: positionals[0]! };
  },
  run: (p, io) =>
    attempt(io, "deleting namespace", async () => {
      await io.api.namespaces.delete(p.name);
      io.stdout(`Successfully deleted namespace ${JSON.stringify(p.name)}!`);
    }),
};
