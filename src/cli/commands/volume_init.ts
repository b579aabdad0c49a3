/**
 * `berth volume init [-json] [<filename>]` (Nomad's `volume init`): writes an example CSI volume
 * spec, `volume.hcl` (or `volume.json` with -json), to start from; never overwrites a file. Only CSI
 * volumes exist in berth, so Nomad's `-type` accepts "csi" alone.
 */
import { writeFile } from "node:fs/promises";
import { UsageError, expectArgs, parseCommandArgs } from "../flags.js";
import type { Command, Parsed } from "../command.js";

export interface VolumeInitArgs extends Parsed {
  json: boolean;
  file: string;
}

/** The example in HCL: every setting of a CSI volume spec, in the idioms Nomad's own example uses. */
export const VOLUME_INIT_HCL = `# A CSI volume. "berth volume create volume.hcl" asks the plugin's controller to
# create it; "berth volume register volume.hcl" records storage that already exists.
id        = "db-data"
name      = "db-data"
namespace = "default"
type      = "csi"
plugin_id = "hostpath"

# register only: the storage provider's ID of the existing volume (the volume ID
# is used when it is left out). Leave it out for create.
# external_id = "vol-0123456789"

# create only: start from a snapshot, or from a clone of a volume (not both).
# snapshot_id = "snap-0123456789"
# clone_id    = "vol-0123456789"

# create only: the size range the plugin should provision ("10GiB", "10G",
# "10 GB"; "" leaves it unset).
capacity_min = "1GiB"
capacity_max = "10GiB"

# At least one: how tasks may use the volume.
capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}

capability {
  access_mode     = "single-node-reader-only"
  attachment_mode = "file-system"
}

# How a file-system volume is mounted; mount_flags are secret in the API.
mount_options {
  fs_type     = "ext4"
  mount_flags = ["noatime"]
}

# create only: where the volume may be placed. A node must match one of the
# required topologies; preferred ones are tried first.
topology_request {
  required {
    topology { segments { rack = "R1" } }
    topology { segments { rack = "R2", zone = "us-east-1a" } }
  }
  preferred {
    topology { segments { rack = "R1" } }
  }
}

# Sent to the plugin with every call for this volume; never shown by the API.
secrets {
  example_secret = "change-me"
}

# Plugin-specific settings for create.
parameters {
  skuname = "Premium_LRS"
}

# Plugin-specific settings passed to the node plugin when the volume is mounted.
context {
  endpoint = "http://192.168.1.101:9425"
}
`;

const segments = (s: Record<string, string>) => ({ segments: s });

/** The same example in HCL's JSON form: repeated blocks are lists of objects. */
export const VOLUME_INIT_JSON = `${JSON.stringify(
  {
    id: "db-data",
    name: "db-data",
    namespace: "default",
    type: "csi",
    plugin_id: "hostpath",
    capacity_min: "1GiB",
    capacity_max: "10GiB",
    capability: [
      { access_mode: "single-node-writer", attachment_mode: "file-system" },
      { access_mode: "single-node-reader-only", attachment_mode: "file-system" },
    ],
    mount_options: [{ fs_type: "ext4", mount_flags: ["noatime"] }],
    topology_request: {
      // One required block holding both topologies, as in the HCL: Nomad reads only the first
      // required block with segments, and an object of objects here would be flattened away.
      required: [{ topology: [segments({ rack: "R1" }), segments({ rack: "R2", zone: "us-east-1a" })] }],
      preferred: [{ topology: [segments({ rack: "R1" })] }],
    },
    secrets: [{ example_secret: "change-me" }],
    parameters: [{ skuname: "Premium_LRS" }],
    context: [{ endpoint: "http://192.168.1.101:9425" }],
  },
  null,
  2,
)}\n`;

export const volumeInit: Command<VolumeInitArgs> = {
  usage: "Usage: berth volume init [options] [<filename>]",
  help: 'Creates an example volume specification file to customise: volume.hcl, or volume.json with -json, unless <filename> is given. An existing file is never overwritten. -type takes "csi" only (the default).',
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      json: { type: "boolean", default: false },
      type: { type: "string", default: "csi" },
    });
    expectArgs(positionals, 0, 1, "[<filename>]");
    if (values.type !== "csi")
      throw new UsageError(`-type ${JSON.stringify(values.type)}: berth volumes are "csi" (the only -type)`);
    const json = values.json === true;
    return { address: values.address, json, file: positionals[0] ?? (json ? "volume.json" : "volume.hcl") };
  },
  async run(p, io) {
    try {
      // "wx": created only if absent, in one step, so a file appearing meanwhile is not clobbered.
      await writeFile(p.file, p.json ? VOLUME_INIT_JSON : VOLUME_INIT_HCL, { flag: "wx", mode: 0o660 });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      io.stderr(
        code === "EEXIST"
          ? `Volume specification ${JSON.stringify(p.file)} already exists`
          : `Failed to write ${JSON.stringify(p.file)}: ${err instanceof Error ? err.message : String(err)}`,
      );
      return 1;
    }
    io.stdout(`Example volume specification written to ${p.file}`);
    return 0;
  },
};
