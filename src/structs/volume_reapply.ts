/**
 * What applying a volume spec again to an existing volume asks for (issue 33 item 7), decided with
 * no I/O: which immutable fields it would change (refused), whether its mutable parameters change
 * (ControllerModifyVolume), and whether an expansion may run now given the plugin's expansion
 * capability (ONLINE: while published; otherwise only while nobody uses the volume).
 *
 * Used by `volume create` of an existing ID and by `volume register` of an existing volume
 * (server/rpc/volume_reapply.ts), so both take the same decisions.
 */
import type { CSIControllerInfo } from "./csi_terms.js";
import type { CSIVolume, VolumeClaim } from "./volume.js";

/** One immutable field a spec would change: `field` is the spec's field name (e.g. `Parameters`). */
export interface ImmutableChange {
  field: string;
  message: string;
}

/**
 * The immutable fields `spec` would change on `prev`. A field the spec leaves unset (empty) keeps
 * the stored value, as Nomad's CSIVolume.Merge reads it; the validator's default Name (= ID) is
 * "unset". MutableParameters and the capacity are not here: they are what a re-apply may change.
 */
export function immutableFieldChanges(prev: CSIVolume, spec: CSIVolume): ImmutableChange[] {
  const out: ImmutableChange[] = [];
  const changed = (field: string, was: string, now: string) =>
    out.push({
      field,
      message: `cannot be changed on an existing volume (it is ${JSON.stringify(was)}, the spec says ${JSON.stringify(now)})`,
    });
  if (spec.Name !== "" && spec.Name !== spec.ID && spec.Name !== prev.Name)
    changed("Name", prev.Name, spec.Name);
  if (spec.ExternalID !== "" && spec.ExternalID !== prev.ExternalID)
    changed("ExternalID", prev.ExternalID, spec.ExternalID);
  if (spec.PluginID !== prev.PluginID) changed("PluginID", prev.PluginID, spec.PluginID);
  if (spec.SnapshotID !== "" && spec.SnapshotID !== prev.SnapshotID)
    changed("SnapshotID", prev.SnapshotID, spec.SnapshotID);
  if (spec.CloneID !== "" && spec.CloneID !== prev.CloneID) changed("CloneID", prev.CloneID, spec.CloneID);
  if (Object.keys(spec.Parameters).length > 0 && !sameStringMap(spec.Parameters, prev.Parameters)) {
    out.push({
      field: "Parameters",
      message:
        "cannot be changed on an existing volume: put parameters the plugin can change in mutable_parameters",
    });
  }
  return out;
}

/**
 * The mutable parameters to send with ControllerModifyVolume, or null when there is nothing to do:
 * the spec sets none (unset keeps the stored ones, as for Parameters) or the same ones as stored.
 */
export function mutableParametersChange(prev: CSIVolume, spec: CSIVolume): Record<string, string> | null {
  const wanted = spec.MutableParameters ?? {};
  if (Object.keys(wanted).length === 0) return null;
  return sameStringMap(wanted, prev.MutableParameters ?? {}) ? null : { ...wanted };
}

export type ExpansionDecision =
  /** Expand through a controller that advertises `requires`. */
  | { kind: "expand"; requires: "SupportsExpand" | "SupportsOnlineExpand" }
  /** Refused before any plugin call: `message` tells the operator what to do. */
  | { kind: "refuse"; message: string };

/**
 * Whether `vol` may be expanded now. A volume nobody uses (no claim, live or releasing) expands
 * offline through any controller with EXPAND_VOLUME. A volume in use expands only through a
 * controller whose plugin advertises ONLINE expansion (CSI: a plugin without it must not be asked
 * to expand a published volume; no capability at all is read as offline, as Kubernetes' resizer
 * does). Otherwise the answer is a refusal naming the users: berth does not stop them itself —
 * stopping an allocation is the operator's decision (it takes a service down, and a job's
 * replacement would claim the volume again at once), so the operator stops the jobs and repeats
 * the request. A plugin with no EXPAND_VOLUME at all is left to the controller call's own
 * "does not support Expand" answer.
 */
export function decideExpansion(
  vol: Pick<CSIVolume, "ID" | "PluginID" | "ReadClaims" | "WriteClaims" | "PastClaims">,
  controllers: readonly (CSIControllerInfo | null)[],
): ExpansionDecision {
  const users = claimsOf(vol);
  if (users.length === 0) return { kind: "expand", requires: "SupportsExpand" };
  if (controllers.some((c) => c?.SupportsOnlineExpand === true))
    return { kind: "expand", requires: "SupportsOnlineExpand" };
  if (!controllers.some((c) => c?.SupportsExpand === true))
    return { kind: "expand", requires: "SupportsExpand" };
  const allocs = [...new Set(users.map((c) => c.AllocationID))].sort();
  return {
    kind: "refuse",
    message:
      `volume ${JSON.stringify(vol.ID)} is in use by ${allocs.length === 1 ? "allocation" : "allocations"} ${allocs.join(", ")} ` +
      `and plugin ${JSON.stringify(vol.PluginID)} expands volumes only offline (it does not advertise ONLINE volume expansion): ` +
      `stop the jobs using it (berth volume status ${vol.ID}), wait until its claims are released, then run the same request again`,
  };
}

function claimsOf(vol: Pick<CSIVolume, "ReadClaims" | "WriteClaims" | "PastClaims">): VolumeClaim[] {
  return [
    ...Object.values(vol.ReadClaims),
    ...Object.values(vol.WriteClaims),
    ...Object.values(vol.PastClaims),
  ];
}

function sameStringMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}
