/**
 * A group volume's `create { … }` block (berth's volumes from the jobspec, issue 33) → the API's
 * `Create`. The keys are `volume create`'s (plugin_id, capacity_min, capacity_max, capability,
 * parameters, secrets, topology_request, snapshot_id, clone_id) plus `on_purge`. Syntax only: the
 * server checks the values (and refuses `secrets`, which this passes on so its error names it).
 */
import type { Body } from "./body.js";
import type { VolumeCreateRequest } from "../types.js";

export function volumeCreateFrom(b: Body): VolumeCreateRequest {
  const out: VolumeCreateRequest = { PluginID: b.string("plugin_id") ?? "" };
  const min = b.size("capacity_min");
  if (min !== undefined) out.RequestedCapacityMin = min;
  const max = b.size("capacity_max");
  if (max !== undefined) out.RequestedCapacityMax = max;
  const caps = b.blocks("capability").map((c) => {
    const cap = {
      AccessMode: c.string("access_mode") ?? "",
      AttachmentMode: c.string("attachment_mode") ?? "",
    };
    c.finish();
    return cap;
  });
  if (caps.length > 0) out.RequestedCapabilities = caps;
  const parameters = b.stringMap("parameters");
  if (parameters !== undefined) out.Parameters = parameters;
  const secrets = b.stringMap("secrets");
  if (secrets !== undefined) out.Secrets = secrets;
  const topo = b.block("topology_request");
  if (topo) {
    out.RequestedTopologies = {
      Required: topologies(topo.block("required")),
      Preferred: topologies(topo.block("preferred")),
    };
    topo.finish();
  }
  for (const [key, field] of [
    ["snapshot_id", "SnapshotID"],
    ["clone_id", "CloneID"],
    ["on_purge", "OnPurge"],
  ] as const) {
    const v = b.string(key);
    if (v !== undefined) out[field] = v;
  }
  b.finish();
  return out;
}

/** `required|preferred { topology { segments { k = "v" } } … }`; null when not written. */
function topologies(b: Body | undefined): { Segments: Record<string, string> }[] | null {
  if (!b) return null;
  const out = b.blocks("topology").map((t) => {
    const Segments = t.stringMap("segments") ?? {};
    t.finish();
    return { Segments };
  });
  b.finish();
  return out;
}
