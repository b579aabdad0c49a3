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

/**
 * The node's secret (Nomad's Node.SecretID, kept in `secret-id` beside `node-id` as Nomad keeps it
 * in its state dir): a random UUID made on first start, readable by root only. The agent presents
 * it in every Node.Register; the server binds it to the node ID at the first one and refuses any
 * later registration of that ID without it. Losing it (or copying node-id to another machine
 * without it) makes the server refuse this node: remove both files to join as a new node.
 */
export async function loadOrCreateNodeSecret(clientDir: string): Promise<string> {
  const file = path.join(clientDir, "secret-id");
  try {
    const secret = (await fs.readFile(file, "utf8")).trim();
    if (secret) {
      // A file written looser (by hand, or restored from a backup) is tightened, never read wider.
      if (((await fs.stat(file)).mode & 0o077) !== 0) await fs.chmod(file, 0o600);
      return secret;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const secret = newUuid();
  await fs.mkdir(clientDir, { recursive: true });
  const tmp = file + ".tmp";
  await fs.rm(tmp, { force: true });
  // Created 0600 from the start (no window where another user could read it); fsynced before the
  // rename so a crash cannot leave an empty secret-id behind a registration that bound the secret.
  const fh = await fs.open(tmp, "wx", 0o600);
  try {
    await fh.writeFile(secret + "\n");
    await fh.sync();
  } finally {
    await fh.close();
  }
  await fs.rename(tmp, file);
  return secret;
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
    NodeResources: args.resources,
    ReservedResources: args.reserved,
    StatusUpdatedAt: Date.now(),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/**
 * The node's attributes under Nomad's names (host.ts, resources.ts) plus `driver.NAME` = "1" for
 * each detected, healthy driver as Nomad sets it (with the driver's own attributes, e.g.
 * `driver.docker.version`), and its NodeResources.
 */
export function fingerprintNode(
  drivers: Record<string, DriverInfo>,
  dataDir: string,
  overrides: ResourceOverrides = {},
): { attributes: Record<string, string>; resources?: NodeResources } {
  const res = fingerprintResources(dataDir, overrides);
  const attributes = { ...hostAttributes(), ...res.attributes };
  for (const [name, d] of Object.entries(drivers)) {
    if (d.Detected && d.Healthy) Object.assign(attributes, d.Attributes, { [`driver.${name}`]: "1" });
  }
  return res.resources ? { attributes, resources: res.resources } : { attributes };
}
