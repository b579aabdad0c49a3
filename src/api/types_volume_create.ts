/**
 * A group volume's `create` block as the HTTP API carries it (JSON `Create` inside a task group's
 * `Volumes` entry; berth's volumes from the jobspec, issue 33). The field names are the volume's own
 * (see CSIVolume). Part of the API's own DTOs (see types.ts); same conventions.
 */

export interface VolumeCreateRequest {
  PluginID: string;
  /** Defaults to the volume request's access_mode and attachment_mode. */
  RequestedCapabilities?: { AccessMode: string; AttachmentMode: string }[];
  RequestedCapacityMin?: number;
  RequestedCapacityMax?: number;
  Parameters?: Record<string, string>;
  /** Refused by the server (a job is stored in plain text); present so the refusal names it. */
  Secrets?: Record<string, string>;
  RequestedTopologies?: {
    Required: { Segments: Record<string, string> }[] | null;
    Preferred: { Segments: Record<string, string> }[] | null;
  } | null;
  SnapshotID?: string;
  CloneID?: string;
  /** "delete" | "retain" (the default): what a purge of the job does to the volumes it created. */
  OnPurge?: string;
}

/** A volume `job plan` says would be created (JobPlanResponse.CreatedVolumes). */
export interface PlannedVolumeCreate {
  Namespace: string;
  ID: string;
  PluginID: string;
  TaskGroup: string;
  Volume: string;
  OnPurge: string;
}

/** Set on a volume a job created from its jobspec (CSIVolume.CreatedBy). */
export interface VolumeCreatedBy {
  JobID: string;
  TaskGroup: string;
  Volume: string;
  OnPurge: string;
}
