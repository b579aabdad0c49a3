/** `berth volume deregister [-force] <volume>`: forgets a volume; the storage itself stays. */
import { expectArgs, parseCommandArgs } from "../flags.js";
import { attempt, type Command, type Parsed } from "../command.js";

export interface VolumeDeregisterArgs extends Parsed {
  id: string;
  force: boolean;
}

export const volumeDeregister: Command<VolumeDeregisterArgs> = {
  usage: "Usage: berth volume deregister [options] <volume>",
  help: "Removes the volume from berth without deleting its storage. -force deregisters it even while allocations still claim it (not while one still runs): claims are released first, and one that no controller can detach is dropped with a warning naming the node where the volume may still be attached.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, { force: { type: "boolean" } });
    expectArgs(positionals, 1, 1, "<volume>");
    return { address: values.address, id: positionals[0]!, force: values.force ?? false };
  },
  run: (p, io) =>
    attempt(io, "deregistering volume", async () => {
      const warnings = await io.api.volumes.deregister(p.id, { force: p.force });
      for (const w of warnings) io.stderr(`Warning: ${w}`);
      io.stdout(`Successfully deregistered volume ${JSON.stringify(p.id)}!`);
    }),
};
