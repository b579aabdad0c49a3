/**
 * The HTTP API's CSI plugin shapes: plugins and the jobs that run them.
 * Part of the API's own DTOs (see types.ts); same conventions.
 */

import type { AllocationListStub } from "./types_alloc.js";
import type { CSIInfo } from "./types_node.js";

export interface CSIPlugin {
  ID: string;
  Provider: string;
  Version: string;
  ControllerRequired: boolean;
  /** Keyed by node ID. */
  Controllers: Record<string, CSIInfo>;
  Nodes: Record<string, CSIInfo>;
  /** Namespace → job ID → the job that runs the plugin's controller / node side. */
  ControllerJobs?: Record<string, Record<string, CSIJobDescription>>;
  NodeJobs?: Record<string, Record<string, CSIJobDescription>>;
  Allocations: AllocationListStub[];
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  CreateIndex: number;
  ModifyIndex: number;
  /** Unix nanoseconds: first written, last changed (0 on records from before berth kept them). */
  CreateTime: number;
  ModifyTime: number;
  /**
   * berth, on `?capacity=true` only: what the leader's GetCapacity poll last measured per topology
   * segment; null: never measured.
   */
  Capacity?: CSIPluginCapacity | null;
}

/** berth's plugin capacity (GET /v1/plugin/csi/:id?capacity=true `Capacity`). */
export interface CSIPluginCapacity {
  Entries: CSICapacityEntry[];
  /** The last poll's failure, "" when it succeeded. */
  LastError: string;
  ModifyIndex: number;
}

export interface CSICapacityEntry {
  /** The topology segment; empty: the plugin as a whole. */
  Segments: Record<string, string>;
  AvailableBytes: number;
  MaximumVolumeSize: number | null;
  MinimumVolumeSize: number | null;
  /** Unix ms. */
  MeasuredAt: number;
  StaleAt: number;
  /** Past StaleAt: placement treats the segment's capacity as unknown. */
  Stale: boolean;
}

/** Nomad's JobDescription: a job that runs a plugin and how many of its allocs do. */
export interface CSIJobDescription {
  Namespace: string;
  ID: string;
  Version: number;
  Expected: number;
}

export interface CSIPluginListStub {
  ID: string;
  Provider: string;
  ControllerRequired: boolean;
  ControllersHealthy: number;
  ControllersExpected: number;
  NodesHealthy: number;
  NodesExpected: number;
  CreateIndex: number;
  ModifyIndex: number;
}
