/**
 * Volumes from the jobspec (issue 33; Nomad #11195/#11227, Kubernetes' PVC templates): a group's
 * csi `volume` block with a `create { … }` block (JSON `Create`) names what `volume create` needs.
 * The volume (`Source`, or `Source[N]` per alloc index with PerAlloc) is created by the leader on
 * the alloc's first placement, where the alloc runs (WaitForFirstConsumer), and marked
 * `CreatedBy` its job; a purge of the job deletes it once unclaimed when `OnPurge = "delete"`.
 * Pure: validation, the create spec of one placement, and what a plan would create.
 */
import { validationError } from "./errors.js";
import { checkFields } from "./job_fields.js";
import type { Job, TaskGroup, VolumeCreateSpec, VolumeRequest } from "./job.js";
import { asObject, optString } from "./json_check.js";
import {
  VOLUME_ON_PURGE,
  newVolume,
  type CSIVolume,
  type Topology,
  type TopologyRequest,
  type VolumeOnPurge,
} from "./volume.js";
import { validateVolumeSpec } from "./volume_validate.js";

export const VOLUME_CREATE_FIELDS = new Set([
  "PluginID",
  "RequestedCapabilities",
  "RequestedCapacityMin",
  "RequestedCapacityMax",
  "Parameters",
  "RequestedTopologies",
  "SnapshotID",
  "CloneID",
  "OnPurge",
  "Secrets",
]);

/**
 * The `Create` of a csi volume request `req` (its other fields already checked), or undefined when
 * none is written. Capabilities default to the request's access and attachment mode; a written
 * list must offer them. Secrets are refused: a job is stored and answered as written, so a secret
 * in it would be stored and shown in plain text (use `volume create` for a volume that needs one).
 */
export function volumeCreateSpec(
  field: string,
  input: unknown,
  req: VolumeRequest,
): VolumeCreateSpec | undefined {
  if (input === undefined || input === null) return undefined;
  const c = asObject(field, input);
  checkFields(field, c, VOLUME_CREATE_FIELDS);
  if (req.Type !== "csi") throw validationError(field, "only a csi volume can be created from the jobspec");
  if (c.Secrets !== undefined && c.Secrets !== null) {
    throw validationError(
      `${field}.Secrets`,
      "secrets are not accepted in a jobspec volume's create block (a job is stored and shown in plain text): create the volume with `berth volume create` instead",
    );
  }
  const defaultCaps =
    req.AccessMode !== "" && req.AttachmentMode !== ""
      ? [{ AccessMode: req.AccessMode, AttachmentMode: req.AttachmentMode }]
      : undefined;
  // The volume spec's own rules (capabilities, capacity range, snapshot xor clone, topology).
  const spec = validateVolumeSpec(
    {
      ID: req.PerAlloc ? `${req.Source}[0]` : req.Source,
      PluginID: c.PluginID,
      RequestedCapabilities: c.RequestedCapabilities ?? defaultCaps,
      RequestedCapacityMin: c.RequestedCapacityMin,
      RequestedCapacityMax: c.RequestedCapacityMax,
      Parameters: c.Parameters,
      RequestedTopologies: c.RequestedTopologies,
      SnapshotID: c.SnapshotID,
      CloneID: c.CloneID,
    },
    "create",
    field,
  );
  const offered = spec.RequestedCapabilities.some(
    (cap) =>
      (req.AccessMode === "" || cap.AccessMode === req.AccessMode) &&
      (req.AttachmentMode === "" || cap.AttachmentMode === req.AttachmentMode),
  );
  if (!offered) {
    throw validationError(
      `${field}.RequestedCapabilities`,
      `no capability offers the volume's access_mode ${JSON.stringify(req.AccessMode)} and attachment_mode ${JSON.stringify(req.AttachmentMode)}`,
    );
  }
  const OnPurge = optString(`${field}.OnPurge`, c.OnPurge, "retain");
  if (!(VOLUME_ON_PURGE as readonly string[]).includes(OnPurge)) {
    throw validationError(`${field}.OnPurge`, `must be "delete" or "retain", got ${JSON.stringify(OnPurge)}`);
  }
  return {
    PluginID: spec.PluginID,
    RequestedCapabilities: spec.RequestedCapabilities,
    RequestedCapacityMin: spec.RequestedCapacityMin,
    RequestedCapacityMax: spec.RequestedCapacityMax,
    Parameters: spec.Parameters,
    RequestedTopologies: spec.RequestedTopologies,
    SnapshotID: spec.SnapshotID,
    CloneID: spec.CloneID,
    OnPurge: OnPurge as VolumeOnPurge,
  };
}

/** The group's csi volume requests that create their volume. */
export function createRequestsOf(
  group: Pick<TaskGroup, "Volumes">,
): (VolumeRequest & { Create: VolumeCreateSpec })[] {
  return Object.values(group.Volumes).filter(
    (r): r is VolumeRequest & { Create: VolumeCreateSpec } => r.Type === "csi" && r.Create !== undefined,
  );
}

/**
 * The topology a first-consumer create asks for: a volume reachable from the node the alloc was
 * placed on (its node plugin's accessible topology, required and preferred), as Kubernetes'
 * WaitForFirstConsumer does with strict topology. The placement already met the job's own
 * `required` topologies (new_volume_feasible.ts). A node plugin that reports no topology leaves
 * the job's request as written.
 */
export function firstConsumerTopology(
  written: TopologyRequest | null,
  nodeTopology: Topology | null | undefined,
): TopologyRequest | null {
  if (!nodeTopology || Object.keys(nodeTopology.Segments).length === 0) return written;
  const here = { Segments: { ...nodeTopology.Segments } };
  return { Required: [here], Preferred: [{ Segments: { ...here.Segments } }] };
}

/** The `volume create` spec of request `req` of `group` for the alloc with index `index`. */
export function createSpecFor(
  job: Pick<Job, "ID" | "Namespace">,
  group: string,
  req: VolumeRequest & { Create: VolumeCreateSpec },
  index: number,
  nodeTopology: Topology | null | undefined,
): CSIVolume {
  const c = req.Create;
  const id = req.PerAlloc ? `${req.Source}[${index}]` : req.Source;
  return newVolume({
    ID: id,
    Name: id,
    Namespace: job.Namespace,
    PluginID: c.PluginID,
    RequestedCapabilities: c.RequestedCapabilities.map((x) => ({ ...x })),
    RequestedCapacityMin: c.RequestedCapacityMin,
    RequestedCapacityMax: c.RequestedCapacityMax,
    Parameters: { ...c.Parameters },
    SnapshotID: c.SnapshotID,
    CloneID: c.CloneID,
    RequestedTopologies: firstConsumerTopology(c.RequestedTopologies, nodeTopology),
    CreatedBy: { JobID: job.ID, TaskGroup: group, Volume: req.Name, OnPurge: c.OnPurge },
  });
}

/** A volume a plan would create (the plan API's `CreatedVolumes`). */
export interface PlannedVolumeCreate {
  Namespace: string;
  ID: string;
  PluginID: string;
  TaskGroup: string;
  Volume: string;
  OnPurge: VolumeOnPurge;
}

/**
 * The volumes `job` would create once its allocs are placed: every `Source` (or `Source[N]` for
 * N < Count with PerAlloc) of a creating request that does not exist yet. A stopped job creates none.
 */
export function plannedVolumeCreates(
  job: Job,
  exists: (namespace: string, id: string) => boolean,
): PlannedVolumeCreate[] {
  if (job.Stop) return [];
  const out: PlannedVolumeCreate[] = [];
  const seen = new Set<string>();
  for (const g of job.TaskGroups) {
    if (g.Count <= 0) continue;
    for (const req of createRequestsOf(g)) {
      const ids = req.PerAlloc
        ? Array.from({ length: g.Count }, (_, i) => `${req.Source}[${i}]`)
        : [req.Source];
      for (const id of ids) {
        if (seen.has(id) || exists(job.Namespace, id)) continue;
        seen.add(id);
        out.push({
          Namespace: job.Namespace,
          ID: id,
          PluginID: req.Create.PluginID,
          TaskGroup: g.Name,
          Volume: req.Name,
          OnPurge: req.Create.OnPurge,
        });
      }
    }
  }
  return out;
}
