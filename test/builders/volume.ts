/** A registered CSI volume record (plugin p1, single-node-writer, file-system). */
import { newVolume, type CSIVolume } from "../../src/structs/volume.js";

export function makeVolume(id: string, over: Partial<CSIVolume> = {}): CSIVolume {
  return newVolume({
    ID: id,
    PluginID: "p1",
    ExternalID: `ext-${id}`,
    RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
    ...over,
  });
}
