/** `berth volume delete [-secret k=v]... <volume>`: deletes the storage through the controller plugin. */
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { attempt, type Command, type Parsed } from "../command.js";
import { withProgress } from "../progress.js";

export interface VolumeDeleteArgs extends Parsed {
  id: string;
  secrets: Record<string, string>;
}

export const volumeDelete: Command<VolumeDeleteArgs> = {
  usage: "Usage: berth volume delete [options] <volume>",
  help: "Deletes the volume's storage through its controller plugin and deregisters it. -secret key=value (repeatable) passes secrets to the plugin's DeleteVolume call.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, { secret: { type: "string", multiple: true } });
    expectArgs(positionals, 1, 1, "<volume>");
    const secrets: Record<string, string> = {};
    for (const s of values.secret ?? []) {
      const eq = s.indexOf("=");
      // The header format is k=v,k2=v2, so neither part may hold a comma. The message never echoes
      // the argument: it is a secret.
      if (eq <= 0 || s.slice(0, eq).includes(",") || s.slice(eq + 1).includes(",")) {
        throw new UsageError("-secret must be key=value, with no comma in the key or the value");
      }
      secrets[s.slice(0, eq)] = s.slice(eq + 1);
    }
    return { address: values.address, id: positionals[0]!, secrets };
  },
  run: (p, io) =>
    attempt(io, "deleting volume", async () => {
      const what = `Deleting volume ${JSON.stringify(p.id)}`;
      await withProgress(io, { what }, () => io.api.volumes.delete(p.id, { secrets: p.secrets }));
      io.stdout(`Successfully deleted volume ${JSON.stringify(p.id)}!`);
    }),
};
