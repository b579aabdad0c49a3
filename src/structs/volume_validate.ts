/**
 * Volume specs (Nomad's JSON volume shape, as `PUT /v1/volume/csi/:id` and `.../create` take them)
 * → CSIVolume records. Pure: the HTTP layer and the volume endpoint both call it, and a refused
 * spec never reaches the state store.
 */
import { validationError } from "./errors.js";
import { checkId } from "./ids.js";
import { checkMountGroup } from "./mount_group.js";
import {
  checkBytes,
  checkMountFlags,
  checkStringMap,
  MAX_EXTERNAL_ID_BYTES,
  MAX_VOLUME_NAME_BYTES,
} from "./volume_limits.js";
import {
  asObject,
  oneOf,
  optArray,
  optNumber,
  optObject,
  optString,
  optStringArray,
  optStringMap,
  type JsonObject,
} from "./json_check.js";
import {
  ACCESS_MODES,
  ATTACHMENT_MODES,
  newVolume,
  type CSIVolume,
  type MountOptions,
  type Topology,
  type TopologyRequest,
  type VolumeCapability,
} from "./volume.js";

export type VolumeSpecPurpose = "register" | "create";

export interface VolumeSpecOptions {
  /**
   * Whether the size bounds of volume_limits.ts apply (default true). False for a record already
   * stored (the quarantine check at open): a bound added later, or a plugin's large Context, must
   * not quarantine a volume that exists.
   */
  bounded?: boolean;
}

/** `prefix` names the spec in errors, e.g. `Volumes[0]`. */
export function validateVolumeSpec(
  input: unknown,
  purpose: VolumeSpecPurpose,
  prefix = "Volume",
  opts: VolumeSpecOptions = {},
): CSIVolume {
  const bounded = opts.bounded ?? true;
  const spec = asObject(prefix, input);
  const f = (name: string) => `${prefix}.${name}`;
  const ID = checkId(f("ID"), spec.ID);
  const Namespace = checkId(f("Namespace"), spec.Namespace ?? "default");
  const PluginID = checkId(f("PluginID"), spec.PluginID);
  // Register does not require an external ID, as Nomad's server does not: the register endpoint
  // keeps the stored one, or uses the volume ID (Nomad's CSIVolume.RemoteID()).
  const ExternalID = optString(f("ExternalID"), spec.ExternalID, "");
  const Name = optString(f("Name"), spec.Name, "") || ID;
  const RequestedCapabilities = capabilities(spec, prefix);
  const { RequestedCapacityMin, RequestedCapacityMax } = capacityRange(spec, f);
  const { SnapshotID, CloneID } = contentSource(spec, f);
  const secrets = optStringMap(f("Secrets"), spec.Secrets);
  const Parameters = optStringMap(f("Parameters"), spec.Parameters);
  const MutableParameters = optStringMap(f("MutableParameters"), spec.MutableParameters);
  const Context = optStringMap(f("Context"), spec.Context);
  if (bounded) {
    checkBytes(f("ExternalID"), ExternalID, MAX_EXTERNAL_ID_BYTES);
    checkBytes(f("Name"), Name, MAX_VOLUME_NAME_BYTES);
    // The name reaches the plugin, which names the storage by it: refused before any call.
    if (hasControlCharacter(Name)) throw validationError(f("Name"), "contains control characters");
    checkStringMap(f("Secrets"), secrets);
    checkStringMap(f("Parameters"), Parameters);
    checkStringMap(f("MutableParameters"), MutableParameters);
    checkStringMap(f("Context"), Context);
  }
  const vol = newVolume({
    ID,
    Name,
    Namespace,
    PluginID,
    ExternalID,
    RequestedCapabilities,
    MountOptions: mountOptions(f("MountOptions"), spec.MountOptions, bounded),
    Secrets: Object.keys(secrets).length > 0 ? secrets : null,
    Parameters,
    Context,
    Capacity: optNumber(f("Capacity"), spec.Capacity, 0, { integer: true, min: 0 }),
    RequestedCapacityMin,
    RequestedCapacityMax,
    SnapshotID,
    CloneID,
    Topologies: topologies(f("Topologies"), spec.Topologies),
    RequestedTopologies: topologyRequest(f("RequestedTopologies"), spec.RequestedTopologies),
  });
  // Absent unless set, so a volume without them keeps Nomad's answer shape.
  if (Object.keys(MutableParameters).length > 0) vol.MutableParameters = MutableParameters;
  return vol;
}

/** The requested capacity range: each bound an integer ≥ 0, the minimum not above a set maximum. */
function capacityRange(spec: JsonObject, f: (name: string) => string) {
  const RequestedCapacityMin = optNumber(f("RequestedCapacityMin"), spec.RequestedCapacityMin, 0, {
    integer: true,
    min: 0,
  });
  const RequestedCapacityMax = optNumber(f("RequestedCapacityMax"), spec.RequestedCapacityMax, 0, {
    integer: true,
    min: 0,
  });
  if (RequestedCapacityMax > 0 && RequestedCapacityMin > RequestedCapacityMax) {
    throw validationError(
      f("RequestedCapacityMin"),
      `${RequestedCapacityMin} is larger than RequestedCapacityMax ${RequestedCapacityMax}`,
    );
  }
  return { RequestedCapacityMin, RequestedCapacityMax };
}

/** What a created volume is made from: a snapshot or a clone, not both ("" for none). */
function contentSource(spec: JsonObject, f: (name: string) => string) {
  const SnapshotID = optString(f("SnapshotID"), spec.SnapshotID, "");
  const CloneID = optString(f("CloneID"), spec.CloneID, "");
  if (SnapshotID !== "" && CloneID !== "") {
    throw validationError(f("SnapshotID"), "a volume is created from a snapshot or a clone, not both");
  }
  return { SnapshotID, CloneID };
}

/**
 * `RequestedCapabilities`, or the legacy top-level `AccessMode`/`AttachmentMode` pair older Nomad
 * specs carry. At least one capability is required: a claim must match one.
 */
function capabilities(spec: JsonObject, prefix: string): VolumeCapability[] {
  const field = `${prefix}.RequestedCapabilities`;
  const list = optArray(field, spec.RequestedCapabilities);
  if (list.length === 0 && (spec.AccessMode !== undefined || spec.AttachmentMode !== undefined)) {
    return [capability(prefix, { AccessMode: spec.AccessMode, AttachmentMode: spec.AttachmentMode })];
  }
  if (list.length === 0) throw validationError(field, "at least one capability is required");
  return list.map((c, i) => capability(`${field}[${i}]`, c));
}

function capability(field: string, input: unknown): VolumeCapability {
  const c = asObject(field, input);
  return {
    AccessMode: oneOf(`${field}.AccessMode`, c.AccessMode, ACCESS_MODES, "access mode"),
    AttachmentMode: oneOf(`${field}.AttachmentMode`, c.AttachmentMode, ATTACHMENT_MODES, "attachment mode"),
  };
}

/** `bounded`: whether volume_limits.ts's bounds on MountFlags apply (see VolumeSpecOptions). */
export function mountOptions(field: string, input: unknown, bounded = true): MountOptions | null {
  const m = optObject(field, input);
  if (!m) return null;
  return {
    // Go's JSON decoder matches field names case-insensitively, so Nomad reads "FsType" too (older
    // berth clients wrote that).
    FSType: optString(`${field}.FSType`, m.FSType ?? m.FsType, ""),
    MountFlags: mountFlags(`${field}.MountFlags`, m.MountFlags, bounded),
    ...checkMountGroup(field, m.MountGroup, m.MountGroupPolicy),
  };
}

function mountFlags(field: string, input: unknown, bounded: boolean): string[] {
  const flags = optStringArray(field, input, []);
  if (bounded) checkMountFlags(field, flags);
  return flags;
}

function topology(field: string, input: unknown): Topology {
  const t = asObject(field, input);
  return { Segments: optStringMap(`${field}.Segments`, t.Segments) };
}

function topologies(field: string, input: unknown): Topology[] {
  return optArray(field, input).map((t, i) => topology(`${field}[${i}]`, t));
}

function topologyRequest(field: string, input: unknown): TopologyRequest | null {
  const r = optObject(field, input);
  if (!r) return null;
  const Required = r.Required == null ? null : topologies(`${field}.Required`, r.Required);
  const Preferred = r.Preferred == null ? null : topologies(`${field}.Preferred`, r.Preferred);
  return { Required, Preferred };
}

/**
 * Refuses a request that names one volume (namespace + ID) twice: its specs would race each other
 * (register: the last silently won; create: the second met the first's storage). The error names
 * the later spec's ID field and the earlier spec it repeats.
 */
export function checkDistinctVolumes(
  vols: readonly Pick<CSIVolume, "ID" | "Namespace">[],
  prefix = "Volumes",
): void {
  const seen = new Map<string, number>();
  vols.forEach((v, i) => {
    const key = `${v.Namespace}\u0000${v.ID}`;
    const first = seen.get(key);
    if (first !== undefined) {
      throw validationError(
        `${prefix}[${i}].ID`,
        `volume ${JSON.stringify(v.ID)} in namespace ${JSON.stringify(v.Namespace)} is already ${prefix}[${first}] of this request`,
      );
    }
    seen.set(key, i);
  });
}

/** A C0 control character or DEL anywhere in `s`. */
function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}
