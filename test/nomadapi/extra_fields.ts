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
  // berth's own (issue 33; Nomad has neither): MODIFY_VOLUME and the ONLINE expansion capability,
  // present only when the plugin advertises them (structs/csi_terms.ts).
  CSIControllerInfo: { SupportsModify: "bool", SupportsOnlineExpand: "bool" },
  // structs.AllocatedCpuResources has the cores a task reserved; api.AllocatedCpuResources does not.
  AllocatedCpuResources: { ReservedCores: "[]uint16" },
  // structs.AllocListStub has the alloc's DesiredTransition; api.AllocationListStub does not.
  AllocationListStub: { DesiredTransition: "DesiredTransition" },
  // Write answers embed structs.WriteMeta/QueryMeta, whose index is "Index" (api: LastIndex).
  CSIVolumeCreateResponse: { Index: "uint64" },
  CSIVolumeRegisterResponse: { Index: "uint64" },
  JobRegisterResponse: { Index: "uint64" },
};
