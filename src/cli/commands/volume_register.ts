/** `berth volume register <path>`: registers storage that already exists (its `external_id`). */
import { volumeFileCommand } from "./volume_file.js";

export const volumeRegister = volumeFileCommand(
  "Usage: berth volume register [options] <path>",
  "Registers the existing CSI volume described in <path> (HCL or JSON; - reads stdin); the spec names the storage provider's ID in external_id.",
  "registering volume",
  async (spec, io) => {
    await io.api.volumes.register(spec);
    io.stdout(`Volume ${JSON.stringify(spec.ID ?? "")} registered`);
  },
);
