/** Client nodes as registered with the server. */
import type { CSIInfo } from "./plugin.js";

export type NodeStatus = "initializing" | "ready" | "down";

export interface DriverInfo {
  Detected: boolean;
  Healthy: boolean;
  HealthDescription: string;
  /** The driver can bind volumes into a task; the scheduler and volume_hook check it. */
  SupportsMounts: boolean;
}

export interface Node {
  ID: string;
  Name: string;
  Datacenter: string;
  NodeClass: string;
  Status: NodeStatus;
  StatusDescription: string;
  SchedulingEligibility: "eligible" | "ineligible";
  Drivers: Record<string, DriverInfo>;
  /** Keyed by plugin ID. */
  CSIControllerPlugins: Record<string, CSIInfo>;
  CSINodePlugins: Record<string, CSIInfo>;
  /** Unix milliseconds of the last heartbeat. */
  StatusUpdatedAt: number;
  CreateIndex: number;
  ModifyIndex: number;
}
