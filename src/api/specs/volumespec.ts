/**
 * Nomad's HCL volume spec (for `volume create` and `volume register`) → the API's volume. Only the
 * keys the spec sets appear in the result, so the server's defaults apply to the rest.
 */
import { Body } from "./body.js";
import { decodeHcl } from "./hcl.js";
import { mountOptionsFrom } from "./jobspec.js";
import type { CSITopology, CSITopologyRequest, CSIVolumeSpec, VolumeCapability } from "../types.js";

export async function parseVolumeHcl(file: string, text: string): Promise<CSIVolumeSpec> {
  return volumeFromDecoded(file, await decodeHcl(file, text));
}

/** A volume from decoded HCL: hcl2json's output, or HCL's JSON syntax (`{"id": "demo", ...}`). */
export function volumeFromDecoded(file: string, decoded: Record<string, unknown>): CSIVolumeSpec {
  const b = Body.of(file, "", decoded);
  const type = b.string("type");
  if (type !== undefined && type !== "csi") throw b.error(`type must be "csi", got ${JSON.stringify(type)}`);
  const mountOptions = b.block("mount_options");
  const topology = b.block("topology_request");
  const capabilities = b.blocks("capability").map(capabilityFrom);
  const vol: CSIVolumeSpec = {
    ID: b.string("id"),
    Name: b.string("name"),
    Namespace: b.string("namespace"),
    ExternalID: b.string("external_id"),
    PluginID: b.string("plugin_id"),
    RequestedCapabilities: capabilities.length > 0 ? capabilities : undefined,
    MountOptions: mountOptions ? mountOptionsFrom(mountOptions) : undefined,
    Secrets: b.stringMap("secrets"),
    Parameters: b.stringMap("parameters"),
    Context: b.stringMap("context"),
    RequestedCapacityMin: b.size("capacity_min"),
    RequestedCapacityMax: b.size("capacity_max"),
    SnapshotID: b.string("snapshot_id"),
    CloneID: b.string("clone_id"),
    RequestedTopologies: topology ? topologyRequestFrom(topology) : undefined,
  };
  b.finish();
  return Object.fromEntries(Object.entries(vol).filter(([, v]) => v !== undefined));
}

function capabilityFrom(b: Body): VolumeCapability {
  const c = { AccessMode: b.string("access_mode") ?? "", AttachmentMode: b.string("attachment_mode") ?? "" };
  b.finish();
  return c;
}

function topologyRequestFrom(b: Body): CSITopologyRequest {
  const req = {
    Required: topologiesFrom(b.block("required")),
    Preferred: topologiesFrom(b.block("preferred")),
  };
  b.finish();
  return req;
}

function topologiesFrom(b: Body | undefined): CSITopology[] | null {
  if (!b) return null;
  const list = b.blocks("topology").map((t) => {
    const segments = { Segments: t.stringMap("segments") ?? {} };
    t.finish();
    return segments;
  });
  b.finish();
  return list;
}
