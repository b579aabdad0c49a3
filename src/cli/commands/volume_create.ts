/** `berth volume create <path>`: creates storage through the volume's controller plugin. */
import { parseVolumeSpec } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { fail, type Command, type Parsed } from "../command.js";
import type { CommandIO } from "../io.js";

export interface VolumeFileArgs extends Parsed {
  file: string;
}

export const volumeCreate: Command<VolumeFileArgs> = {
  usage: "Usage: berth volume create [options] <path>",
  help: "Creates the CSI volume described in <path> (HCL or JSON; - reads stdin) through its plugin's controller, and registers it.",
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {});
    expectArgs(positionals, 1, 1, "<path>");
    return { address: values.address, file: positionals[0]! };
  },
  async run(p: VolumeFileArgs, io: CommandIO) {
    let spec;
    try {
      spec = await parseVolumeSpec(p.file, await io.readFile(p.file));
    } catch (err) {
      return fail(io, `parsing volume file ${p.file}`, err);
    }
    try {
      const created = await io.api.createVolume(spec);
      for (const v of created) io.stdout(`Created external volume ${v.ExternalID} with ID ${v.ID}`);
      return 0;
    } catch (err) {
      return fail(io, "creating volume", err);
    }
  },
};
