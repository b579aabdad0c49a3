/**
 * Checks the answer a node agent returns for a controller call (ClientCSI.Controller*) before the
 * server uses or stores any of it. A node is trusted only to be itself (its node secret); what it
 * reports on a plugin's behalf is data from the network, as a registration is (node_validate.ts):
 * a rogue or broken agent once answered ControllerCreateVolume with an empty external ID and the
 * server recorded a volume with no storage behind it.
 *
 * Contract: `checkControllerAnswer(method, answer)` returns the answer with only the fields berth
 * reads, each checked, or throws ERR_CSI_BAD_ANSWER naming the field (`ExternalVolumeID`,
 * `Entries[3].CapacityBytes`, ...). Values are never echoed: a context or snapshot ID may carry
 * something secret, and a rogue answer may be huge. Methods whose answer is empty or not read
 * pass through.
 *
 * Limits: the CSI spec caps a string at 128 bytes and a string map at 4 KiB ("Size Limits");
 * plugins in the field overstep both (IDs that encode a server and a path), so berth allows
 * MAX_ID_BYTES for an ID and MAX_MAP_BYTES for a map, far above the spec and far below what could
 * bloat a record.
 */
import { BerthError } from "./errors.js";
import { isObject } from "./json_check.js";
import type { ClientMethods, ExternalVolumeInfo, SnapshotInfo } from "./rpc.js";
import type { Topology } from "./volume.js";
import { MAX_EXTERNAL_ID_BYTES } from "./volume_limits.js";

/** The bound a registered volume's external ID has (volume_limits.ts): one limit for both ways in. */
const MAX_ID_BYTES = MAX_EXTERNAL_ID_BYTES;
const MAX_MAP_BYTES = 16 * 1024;
/** Topologies per answer, and entries per list page: far above what a plugin returns. */
const MAX_TOPOLOGIES = 1024;
const MAX_PAGE_ENTRIES = 10_000;
const MAX_MESSAGE_BYTES = 4096;

function bad(field: string, problem: string): BerthError {
  return new BerthError("ERR_CSI_BAD_ANSWER", `the node's answer is malformed: ${field} ${problem}`, {
    field,
  });
}

/** A plugin's identifier: non-empty, at most MAX_ID_BYTES, no control characters. */
function id(field: string, v: unknown): string {
  if (typeof v !== "string") throw bad(field, "must be a string");
  if (v === "") throw bad(field, "is empty");
  if (Buffer.byteLength(v, "utf8") > MAX_ID_BYTES) throw bad(field, `is longer than ${MAX_ID_BYTES} bytes`);
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (/[\u0000-\u001f\u007f]/.test(v)) throw bad(field, "contains control characters");
  return v;
}

/** A string that may be empty (a paging token), bounded like an ID. */
function optToken(field: string, v: unknown): string {
  if (v === undefined || v === null || v === "") return "";
  return id(field, v);
}

/** Bytes, as CSI's int64 capacity: a non-negative safe integer; 0 is "unknown". */
function bytes(field: string, v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    throw bad(field, "must be a non-negative integer number of bytes");
  return v;
}

function bool(field: string, v: unknown): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== "boolean") throw bad(field, "must be a boolean");
  return v;
}

/** A string→string map (absent: empty) of at most MAX_MAP_BYTES, keys non-empty. */
function stringMap(field: string, v: unknown): Record<string, string> {
  if (v === undefined || v === null) return {};
  if (!isObject(v) || Array.isArray(v)) throw bad(field, "must be an object of string values");
  const out: Record<string, string> = {};
  let size = 0;
  for (const [k, val] of Object.entries(v)) {
    if (typeof val !== "string") throw bad(`${field}.${k}`, "must be a string");
    if (k === "" || k === "__proto__") throw bad(field, "has an invalid key");
    size += Buffer.byteLength(k, "utf8") + Buffer.byteLength(val, "utf8");
    if (size > MAX_MAP_BYTES) throw bad(field, `is larger than ${MAX_MAP_BYTES} bytes`);
    out[k] = val;
  }
  return out;
}

function array(field: string, v: unknown, max: number): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(field, "must be an array");
  if (v.length > max) throw bad(field, `has more than ${max} entries`);
  return v;
}

function topologies(field: string, v: unknown): Topology[] {
  return array(field, v, MAX_TOPOLOGIES).map((t, i) => {
    if (!isObject(t)) throw bad(`${field}[${i}]`, "must be an object");
    const Segments = stringMap(`${field}[${i}].Segments`, t.Segments);
    if (Object.keys(Segments).length === 0) throw bad(`${field}[${i}].Segments`, "is empty");
    return { Segments };
  });
}

function snapshot(field: string, v: unknown): SnapshotInfo {
  if (!isObject(v)) throw bad(field, "must be an object");
  const createTime = v.CreateTime ?? 0;
  if (typeof createTime !== "number" || !Number.isSafeInteger(createTime) || createTime < 0)
    throw bad(`${field}.CreateTime`, "must be a non-negative integer (Unix seconds)");
  return {
    ID: id(`${field}.ID`, v.ID),
    ExternalSourceVolumeID: optToken(`${field}.ExternalSourceVolumeID`, v.ExternalSourceVolumeID),
    SizeBytes: bytes(`${field}.SizeBytes`, v.SizeBytes),
    CreateTime: createTime,
    IsReady: bool(`${field}.IsReady`, v.IsReady),
  };
}

function externalVolume(field: string, v: unknown): ExternalVolumeInfo {
  if (!isObject(v)) throw bad(field, "must be an object");
  const nodes = array(`${field}.PublishedExternalNodeIDs`, v.PublishedExternalNodeIDs, MAX_PAGE_ENTRIES);
  const status = v.Status ?? "";
  if (typeof status !== "string" || Buffer.byteLength(status) > MAX_MESSAGE_BYTES)
    throw bad(`${field}.Status`, `must be a string of at most ${MAX_MESSAGE_BYTES} bytes`);
  return {
    ExternalID: id(`${field}.ExternalID`, v.ExternalID),
    CapacityBytes: bytes(`${field}.CapacityBytes`, v.CapacityBytes),
    VolumeContext: stringMap(`${field}.VolumeContext`, v.VolumeContext),
    CloneID: optToken(`${field}.CloneID`, v.CloneID),
    SnapshotID: optToken(`${field}.SnapshotID`, v.SnapshotID),
    PublishedExternalNodeIDs: nodes.map((n, i) => id(`${field}.PublishedExternalNodeIDs[${i}]`, n)),
    IsAbnormal: bool(`${field}.IsAbnormal`, v.IsAbnormal),
    Status: status,
  };
}

type Checkers = {
  [M in keyof ClientMethods]?: (answer: unknown) => ClientMethods[M][1];
};

const CHECKERS: Checkers = {
  "ClientCSI.ControllerCreateVolume": (a) => {
    const o = object(a);
    return {
      ExternalVolumeID: id("ExternalVolumeID", o.ExternalVolumeID),
      CapacityBytes: bytes("CapacityBytes", o.CapacityBytes),
      VolumeContext: stringMap("VolumeContext", o.VolumeContext),
      Topologies: topologies("Topologies", o.Topologies),
    };
  },
  "ClientCSI.ControllerPublishVolume": (a) => ({
    PublishContext: stringMap("PublishContext", object(a).PublishContext),
  }),
  "ClientCSI.ControllerExpandVolume": (a) => {
    const o = object(a);
    return {
      CapacityBytes: bytes("CapacityBytes", o.CapacityBytes),
      NodeExpansionRequired: bool("NodeExpansionRequired", o.NodeExpansionRequired),
    };
  },
  "ClientCSI.ControllerCreateSnapshot": (a) => snapshot("Snapshot", a),
  "ClientCSI.ControllerListSnapshots": (a) => {
    const o = object(a);
    return {
      Entries: array("Entries", o.Entries, MAX_PAGE_ENTRIES).map((e, i) => snapshot(`Entries[${i}]`, e)),
      NextToken: optToken("NextToken", o.NextToken),
    };
  },
  "ClientCSI.ControllerListVolumes": (a) => {
    const o = object(a);
    return {
      Entries: array("Entries", o.Entries, MAX_PAGE_ENTRIES).map((e, i) =>
        externalVolume(`Entries[${i}]`, e),
      ),
      NextToken: optToken("NextToken", o.NextToken),
    };
  },
  "ClientCSI.ControllerGetCapacity": (a) => {
    const o = object(a);
    const opt = (f: string, v: unknown) => (v === undefined || v === null ? null : bytes(f, v));
    return {
      AvailableCapacity: bytes("AvailableCapacity", o.AvailableCapacity),
      MaximumVolumeSize: opt("MaximumVolumeSize", o.MaximumVolumeSize),
      MinimumVolumeSize: opt("MinimumVolumeSize", o.MinimumVolumeSize),
    };
  },
  "ClientCSI.ControllerGetVolume": (a) => {
    const o = object(a);
    const nodes = array("PublishedExternalNodeIDs", o.PublishedExternalNodeIDs, MAX_PAGE_ENTRIES);
    const answer = {
      ExternalID: optToken("ExternalID", o.ExternalID),
      PublishedExternalNodeIDs: nodes.map((n, i) => id(`PublishedExternalNodeIDs[${i}]`, n)),
    };
    const c = o.Condition;
    if (c === undefined || c === null) return { ...answer, Condition: null };
    if (!isObject(c)) throw bad("Condition", "must be an object");
    const message = c.Message ?? "";
    if (typeof message !== "string" || Buffer.byteLength(message) > MAX_MESSAGE_BYTES)
      throw bad("Condition.Message", `must be a string of at most ${MAX_MESSAGE_BYTES} bytes`);
    return { ...answer, Condition: { Abnormal: bool("Condition.Abnormal", c.Abnormal), Message: message } };
  },
};

function object(a: unknown): Record<string, unknown> {
  if (!isObject(a) || Array.isArray(a)) throw bad("answer", "must be an object");
  return a;
}

/** The checked answer of `method` (see the file comment); throws ERR_CSI_BAD_ANSWER naming the field. */
export function checkControllerAnswer<M extends keyof ClientMethods>(
  method: M,
  answer: unknown,
): ClientMethods[M][1] {
  const check = CHECKERS[method];
  return check ? check(answer) : (answer as ClientMethods[M][1]);
}
