/** `berth volume create <path>`: creates storage through the volume's controller plugin. */
import { withProgress } from "../progress.js";
import { volumeFileCommand } from "./volume_file.js";

export type { VolumeFileArgs } from "./volume_file.js";

export const volumeCreate = volumeFileCommand(
  "Usage: berth volume create [options] <path>",
  "Creates the CSI volume described in <path> (HCL or JSON; - reads stdin) through its plugin's controller, and registers it.",
  "creating volume",
  async (spec, io) => {
    const what = `Creating volume ${JSON.stringify(spec.ID ?? "")}`;
    const created = await withProgress(io, { what }, () => io.api.volumes.create(spec));
    for (const v of created) io.stdout(`Created external volume ${v.ExternalID} with ID ${v.ID}`);
  },
);
