/**
 * The only fields the strict decoder accepts beyond the `api` package's structs, each with the
 * reason. Everything else berth answers must be a field of the Go struct, with its Go type.
 */
import type { ExtraFields } from "./go_decode.js";

/**
 * Fields Nomad's own server sends that its `api` structs lack (the server marshals
 * nomad/structs types; the Go client ignores the rest). berth may send them as Nomad does.
 */
export const NOMAD_SERVER_FIELDS: ExtraFields = {
  // structs.CSIInfo has the plugin's GetPluginInfo answer; api.CSIInfo does not.
  CSIInfo: { Provider: "string", ProviderVersion: "string" },
  // structs.CSIPlugin's JobDescriptions (namespace → job ID → {Namespace, ID, Expected}); berth's
  // description also carries the job's Version.
  CSIPlugin: {
    ControllerJobs: "map[string]map[string]interface{}",
    NodeJobs: "map[string]map[string]interface{}",
  },
  // structs.AllocListStub has the alloc's DesiredTransition; api.AllocationListStub does not.
  AllocationListStub: { DesiredTransition: "DesiredTransition" },
  // Write answers embed structs.WriteMeta/QueryMeta, whose index is "Index" (api: LastIndex).
  CSIVolumeCreateResponse: { Index: "uint64" },
  CSIVolumeRegisterResponse: { Index: "uint64" },
  JobRegisterResponse: { Index: "uint64" },
};

/**
 * berth's own additions that its CLI and tests still read from these answers, kept until they move
 * to routes of their own (a known gap, listed in the report of issue 11's HTTP slice). Nomad never
 * serialises the claim maps (`json:"-"`); berth shows them for `volume status`'s releases.
 */
export const BERTH_EXTENSIONS: ExtraFields = {
  // Whether the driver can bind volumes into a task (berth's scheduler checks it; `node status`).
  DriverInfo: { SupportsMounts: "bool" },
  // The alloc this one replaced (Nomad has it on the full Allocation only); the CLI's reschedule
  // lines read it from the stubs of `job status`.
  AllocationListStub: { PreviousAllocation: "string" },
  CSIVolume: {
    ReadClaims: "map[string]interface{}",
    WriteClaims: "map[string]interface{}",
    PastClaims: "map[string]interface{}",
  },
};

/** Both sets, for a client that accepts exactly these. */
export function acceptedExtras(...sets: ExtraFields[]): ExtraFields {
  const out: ExtraFields = {};
  for (const set of sets) for (const [t, fs] of Object.entries(set)) out[t] = { ...out[t], ...fs };
  return out;
}
