/**
 * The HTTP API's node shapes: nodes, their drivers and CSI plugin instances, drain and eligibility.
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

export interface DriverInfo {
  /** What the driver fingerprints; `driver.<name>.mounts` says whether it binds volumes into tasks. */
  Attributes: Record<string, string>;
  Detected: boolean;
  Healthy: boolean;
  HealthDescription: string;
}

export interface CSITopology {
  Segments: Record<string, string>;
}

export interface CSINodeInfo {
  ID: string;
  MaxVolumes: number;
  AccessibleTopology: CSITopology | null;
  RequiresNodeStageVolume: boolean;
  SupportsStats?: boolean;
  SupportsExpand?: boolean;
  SupportsCondition?: boolean;
}

export interface CSIControllerInfo {
  SupportsCreateDelete: boolean;
  SupportsAttachDetach: boolean;
  SupportsListVolumes: boolean;
  SupportsGetCapacity?: boolean;
  SupportsCreateDeleteSnapshot?: boolean;
  SupportsListSnapshots?: boolean;
  SupportsClone?: boolean;
  SupportsReadOnlyAttach?: boolean;
  SupportsExpand?: boolean;
  SupportsListVolumesAttachedNodes?: boolean;
  SupportsCondition?: boolean;
  SupportsGet?: boolean;
  /** berth's: MODIFY_VOLUME, and the plugin's ONLINE expansion (present only when true). */
  SupportsModify?: boolean;
  SupportsOnlineExpand?: boolean;
}

/** One plugin instance on one node. */
export interface CSIInfo {
  PluginID: string;
  AllocID: string;
  Healthy: boolean;
  HealthDescription: string;
  /** RFC 3339 (Nomad's time.Time). */
  UpdateTime: string;
  Provider: string;
  ProviderVersion: string;
  RequiresControllerPlugin: boolean;
  RequiresTopologies: boolean;
  ControllerInfo: CSIControllerInfo | null;
  NodeInfo: CSINodeInfo | null;
}

export interface NodeListStub {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass: string;
  /** "initializing" | "ready" | "down" | "disconnected" */
  Status: string;
  StatusDescription: string;
  /** "eligible" | "ineligible" */
  SchedulingEligibility: string;
  /** True while the node drains. */
  Drain?: boolean;
  Drivers: Record<string, DriverInfo>;
  LastDrain?: DrainMetadata | null;
  CreateIndex: number;
  ModifyIndex: number;
}

export interface Node extends NodeListStub {
  /** Keyed by plugin ID. */
  CSIControllerPlugins: Record<string, CSIInfo>;
  CSINodePlugins: Record<string, CSIInfo>;
  /** The client config's host volumes, keyed by name; absent on nodes registered before them. */
  HostVolumes?: Record<string, { Name: string; Path: string; ReadOnly: boolean }>;
  Attributes?: Record<string, string>;
  Meta?: Record<string, string>;
  /** Set while the node drains. */
  DrainStrategy?: DrainStrategy | null;
}

/** What `POST /v1/node/:id/drain` asks for; null in the request cancels a drain. */
export interface DrainSpec {
  /** Nanoseconds; 0: no deadline; negative: force (stop everything now). */
  Deadline: number;
  IgnoreSystemJobs: boolean;
}

export interface DrainStrategy extends DrainSpec {
  /** RFC 3339; "0001-01-01T00:00:00Z" when there is no deadline. */
  ForceDeadline: string;
  /** RFC 3339. */
  StartedAt: string;
}

export interface DrainMetadata {
  /** RFC 3339. */
  StartedAt: string;
  UpdatedAt: string;
  /** "draining" | "complete" | "canceled" */
  Status: string;
  Meta: Record<string, string> | null;
}

/** The answer to a drain or eligibility update. */
export interface NodeUpdateResponse {
  NodeModifyIndex: number;
  EvalIDs: string[] | null;
  EvalCreateIndex: number;
  Index: number;
}
