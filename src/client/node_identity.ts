/**
 * The node's stable identity: a UUID created on first start and kept in the data dir, so a
 * restarted agent is the same node to the server (its allocs and claims stay its own).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { newUuid } from "../structs/ids.js";
import type { Node } from "../structs/node.js";
import type { CSIInfo } from "../structs/plugin.js";
import type {
  ClientHostVolumeConfig,
  DriverInfo,
  NodeReservedResources,
  NodeResources,
} from "../structs/node.js";
import { hostAttributes } from "./fingerprint/host.js";
import { fingerprintResources, type ResourceOverrides } from "./fingerprint/resources.js";

export async function loadOrCreateNodeId(clientDir: string): Promise<string> {
  const file = path.join(clientDir, "node-id");
  try {
    const id = (await fs.readFile(file, "utf8")).trim();
    if (id) return id;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const id = newUuid();
  await fs.mkdir(clientDir, { recursive: true });
  await fs.writeFile(file + ".tmp", id + "\n");
  await fs.rename(file + ".tmp", file);
  return id;
}

export function buildNode(args: {
  id: string;
  name: string;
  datacenter?: string;
  nodeClass?: string;
  drivers: Record<string, DriverInfo>;
  hostVolumes?: Record<string, ClientHostVolumeConfig>;
  attributes?: Record<string, string>;
  meta?: Record<string, string>;
  resources?: NodeResources;
  reserved?: NodeReservedResources;
  controllers: Record<string, CSIInfo>;
  nodes: Record<string, CSIInfo>;
}): Node {
  return {
    ID: args.id,
    Name: args.name,
    Datacenter: args.datacenter ?? "dc1",
    NodeClass: args.nodeClass ?? "",
    Status: "ready",
    StatusDescription: "",
    SchedulingEligibility: "eligible",
    Drivers: args.drivers,
    CSIControllerPlugins: args.controllers,
    CSINodePlugins: args.nodes,
    HostVolumes: args.hostVolumes ?? {},
    Attributes: args.attributes ?? {},
    Meta: args.meta ?? {},
    ...(args.resources ? { NodeResources: args.resources } : {}),
    ...(args.reserved ? { ReservedResources: args.reserved } : {}),
    StatusUpdatedAt: Date.now(),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/**
 * The node's attributes under Nomad's names (host.ts, resources.ts) plus `driver.NAME` = "1" for
 * each detected, healthy driver as Nomad sets it, and its NodeResources.
 */
export function fingerprintNode(
  drivers: Record<string, DriverInfo>,
  dataDir: string,
  overrides: ResourceOverrides = {},
): { attributes: Record<string, string>; resources?: NodeResources } {
  const res = fingerprintResources(dataDir, overrides);
  const attributes = { ...hostAttributes(), ...res.attributes };
  for (const [name, d] of Object.entries(drivers))
    if (d.Detected && d.Healthy) attributes[`driver.${name}`] = "1";
  return res.resources ? { attributes, resources: res.resources } : { attributes };
}
