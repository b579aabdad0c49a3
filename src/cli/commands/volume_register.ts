/** `berth volume register <path>`: registers storage that already exists (its `external_id`). */
import { parseVolumeSpec } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { fail, type Command } from "../command.js";
import type { CommandIO } from "../io.js";
import type { VolumeFileArgs } from "./volume_create.js";

export const volumeRegister: Command<VolumeFileArgs> = {
  usage: "Usage: berth volume register [options] <path>",
  help: "Registers the existing CSI volume described in <path> (HCL or JSON; - reads stdin); the spec names the storage provider's ID in external_id.",
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
      await io.api.registerVolume(spec);
      io.stdout(`Volume ${JSON.stringify(spec.ID ?? "")} registered`);
      return 0;
    } catch (err) {
      return fail(io, "registering volume", err);
    }
  },
};
