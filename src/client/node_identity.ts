/**
 * The node's stable identity: a UUID created on first start and kept in the data dir, so a
 * restarted agent is the same node to the server (its allocs and claims stay its own).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { newUuid } from "../structs/ids.js";
import type { Node } from "../structs/node.js";
import type { CSIInfo } from "../structs/plugin.js";
import type { ClientHostVolumeConfig, DriverInfo } from "../structs/node.js";

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
  drivers: Record<string, DriverInfo>;
  hostVolumes?: Record<string, ClientHostVolumeConfig>;
  attributes?: Record<string, string>;
  meta?: Record<string, string>;
  controllers: Record<string, CSIInfo>;
  nodes: Record<string, CSIInfo>;
}): Node {
  return {
    ID: args.id,
    Name: args.name,
    Datacenter: args.datacenter ?? "dc1",
    NodeClass: "",
    Status: "ready",
    StatusDescription: "",
    SchedulingEligibility: "eligible",
    Drivers: args.drivers,
    CSIControllerPlugins: args.controllers,
    CSINodePlugins: args.nodes,
    HostVolumes: args.hostVolumes ?? {},
    Attributes: args.attributes ?? {},
    Meta: args.meta ?? {},
    StatusUpdatedAt: Date.now(),
    CreateIndex: 0,
    ModifyIndex: 0,
  };
}

/** Go's GOARCH names, which Nomad's `${attr.cpu.arch}` reports. */
const GO_ARCH: Record<string, string> = { x64: "amd64", ia32: "386", arm64: "arm64", arm: "arm" };

/**
 * The node's attributes under Nomad's names (`${attr.kernel.name}`, …): the ones berth can tell
 * without probing hardware, plus `driver.NAME` = "1" for each healthy driver as Nomad sets it.
 */
export function fingerprintAttributes(drivers: Record<string, DriverInfo>): Record<string, string> {
  const attrs: Record<string, string> = {
    "kernel.name": os.platform(),
    "kernel.version": os.release(),
    "kernel.arch": os.machine(),
    "os.name": os.platform(),
    "cpu.arch": GO_ARCH[os.arch()] ?? os.arch(),
    "cpu.numcores": String(os.cpus().length),
    "memory.totalbytes": String(os.totalmem()),
    "unique.hostname": os.hostname(),
  };
  for (const [name, d] of Object.entries(drivers)) if (d.Detected && d.Healthy) attrs[`driver.${name}`] = "1";
  return attrs;
}
