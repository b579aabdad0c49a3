/**
 * CSI snapshots and externally listed volumes as the API shows them (Nomad's CSISnapshot and
 * CSIVolumeExternalStub JSON). The server keeps no snapshot records: the plugin is the source of
 * truth, so these are request/answer shapes only. Secrets are accepted on requests and never
 * answered (see redactSnapshot).
 */
export interface CSISnapshot {
  /** The plugin's snapshot ID. */
  ID: string;
  /** The plugin's ID of the volume the snapshot was taken from. */
  ExternalSourceVolumeID: string;
  SizeBytes: number;
  /** Unix seconds. */
  CreateTime: number;
  IsReady: boolean;
  /** berth's volume ID (on create requests and answers; empty in plugin listings). */
  SourceVolumeID: string;
  PluginID: string;
  Name: string;
  Secrets: Record<string, string> | null;
  Parameters: Record<string, string> | null;
}

export interface CSISnapshotCreateRequest {
  Snapshots: CSISnapshot[];
}

export interface CSIVolumeExternalStub {
  ExternalID: string;
  CapacityBytes: number;
  VolumeContext: Record<string, string>;
  CloneID: string;
  SnapshotID: string;
  PublishedExternalNodeIDs: string[];
  IsAbnormal: boolean;
  Status: string;
}

/** Answers never carry secrets: Nomad answers `Secrets: null` too. */
export function redactSnapshot(s: CSISnapshot): CSISnapshot {
  return { ...s, Secrets: null };
}
