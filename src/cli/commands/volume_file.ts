/**
 * What `volume create` and `volume register` share: one <path> argument naming a volume spec, and
 * Nomad's `-detach` / `-verbose` / `-policy-override`, accepted so scripts run unchanged: Nomad acts
 * on them only for dynamic host volumes (monitoring their creation); a CSI volume is created or
 * registered before the command returns either way.
 */
import { parseVolumeSpec, type CSIVolumeSpec } from "../../api/index.js";
import { expectArgs, parseCommandArgs } from "../flags.js";
import { submitSpec, type Command, type Parsed } from "../command.js";
import type { CommandIO } from "../io.js";

export interface VolumeFileArgs extends Parsed {
  file: string;
}

/** A command that parses the volume file, then hands the spec to `submit` (which prints on success). */
export function volumeFileCommand(
  usage: string,
  help: string,
  doing: string,
  submit: (spec: CSIVolumeSpec, io: CommandIO) => Promise<void>,
): Command<VolumeFileArgs> {
  return {
    usage,
    help,
    parse(argv) {
      const { values, positionals } = parseCommandArgs(argv, {
        detach: { type: "boolean" },
        verbose: { type: "boolean" },
        "policy-override": { type: "boolean" },
      });
      expectArgs(positionals, 1, 1, "<path>");
      return { address: values.address, file: positionals[0]! };
    },
    run: (p, io) =>
      submitSpec(io, {
        file: p.file,
        kind: "volume",
        // Keys Nomad ignores are ignored here too, but said on stderr so a typo does not pass unseen.
        parse: (file, text) => parseVolumeSpec(file, text, { warn: (m) => io.stderr(`Warning: ${m}`) }),
        doing,
        submit: (spec) => submit(spec, io),
      }),
  };
}
