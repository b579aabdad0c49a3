/**
 * Resources bin-packing as Nomad's structs.AllocsFit and ScoreFitBinPack do it, over the parts
 * berth fills (CPU MHz shares, reserved cores, memory MiB). A node's room is its NodeResources less
 * its ReservedResources; what is used is the sum of the AllocatedResources of its live allocs plus
 * the one being placed. Disk is recorded (Shared.DiskMB) but not bin-packed: berth does not manage
 * an alloc's ephemeral disk. Pure.
 */
import type { AllocatedResources, Allocation } from "./alloc.js";
import type { TaskGroup } from "./job.js";
import { DEFAULT_TASK_CPU_MHZ, DEFAULT_TASK_MEMORY_MB } from "./job_stanzas.js";
import type { Node } from "./node.js";

/** Nomad's default ephemeral_disk size (MiB), recorded when the group sets none. */
export const DEFAULT_EPHEMERAL_DISK_MB = 300;

/** The flattened sums Nomad compares (its ComparableResources). */
export interface Usage {
  cpu: number;
  memoryMB: number;
  cores: number[];
}

const ZERO: Usage = { cpu: 0, memoryMB: 0, cores: [] };

/** An alloc's usage; an alloc placed before resources existed uses nothing. */
export function usageOf(r: AllocatedResources | undefined): Usage {
  if (!r) return ZERO;
  let cpu = 0;
  let memoryMB = 0;
  const cores: number[] = [];
  for (const t of Object.values(r.Tasks)) {
    cpu += t.Cpu.CpuShares;
    memoryMB += t.Memory.MemoryMB;
    cores.push(...(t.Cpu.ReservedCores ?? []));
  }
  return { cpu, memoryMB, cores };
}

function add(a: Usage, b: Usage): Usage {
  return { cpu: a.cpu + b.cpu, memoryMB: a.memoryMB + b.memoryMB, cores: [...a.cores, ...b.cores] };
}

/** The sum of the allocs' usage. */
export function usageOfAllocs(allocs: Pick<Allocation, "AllocatedResources">[]): Usage {
  return allocs.reduce((u, a) => add(u, usageOf(a.AllocatedResources)), ZERO);
}

/** What the node offers the scheduler: NodeResources less ReservedResources; null when unknown. */
export function nodeCapacity(node: Pick<Node, "NodeResources" | "ReservedResources">): Usage | null {
  const res = node.NodeResources;
  if (!res) return null;
  const rsv = node.ReservedResources;
  return {
    cpu: res.Cpu.CpuShares - (rsv?.Cpu.CpuShares ?? 0),
    memoryMB: res.Memory.MemoryMB - (rsv?.Memory.MemoryMB ?? 0),
    cores: res.Cpu.ReservableCpuCores,
  };
}

function groupDiskMB(group: TaskGroup): number {
  const size = group.EphemeralDisk?.SizeMB;
  return typeof size === "number" && size >= 0 ? size : DEFAULT_EPHEMERAL_DISK_MB;
}

export type FitResult =
  { fit: true; resources: AllocatedResources; util: Usage } | { fit: false; dimension: string };

/**
 * Whether one alloc of the group fits on the node beside `used` (its live allocs), and the
 * resources it gets: each task's Resources with Nomad's defaults (CPU 100 MHz, 300 MiB), a task's
 * `cores` as that many free reservable cores (their share of the node's MHz as its CPU). The
 * refusal names Nomad's dimension: "cores" (not enough free cores), "cpu", "memory".
 */
export function fitGroup(
  node: Pick<Node, "NodeResources" | "ReservedResources">,
  used: Usage,
  group: TaskGroup,
): FitResult {
  const cap = nodeCapacity(node);
  const taken = new Set(used.cores);
  const free = (cap?.cores ?? []).filter((c) => !taken.has(c));
  const mhzPerCore =
    node.NodeResources && node.NodeResources.Cpu.TotalCpuCores > 0
      ? node.NodeResources.Cpu.CpuShares / node.NodeResources.Cpu.TotalCpuCores
      : 0;
  const resources: AllocatedResources = { Tasks: {}, Shared: { DiskMB: groupDiskMB(group) } };
  for (const task of group.Tasks) {
    const r = task.Resources ?? {};
    const wantCores = r.Cores ?? 0;
    let cpu = r.CPU ?? DEFAULT_TASK_CPU_MHZ;
    let cores: number[] | null = null;
    // A node without NodeResources is not bin-packed: no cores to hand out, none refused.
    if (wantCores > 0 && cap) {
      if (free.length < wantCores) return { fit: false, dimension: "cores" };
      cores = free.splice(0, wantCores);
      cpu = Math.floor(wantCores * mhzPerCore);
    }
    const memoryMB = r.MemoryMB ?? DEFAULT_TASK_MEMORY_MB;
    resources.Tasks[task.Name] = {
      Cpu: { CpuShares: cpu, ReservedCores: cores },
      Memory: { MemoryMB: memoryMB, MemoryMaxMB: r.MemoryMaxMB ?? 0 },
    };
  }
  const util = add(used, usageOf(resources));
  if (cap) {
    if (cap.cpu < util.cpu) return { fit: false, dimension: "cpu" };
    if (cap.memoryMB < util.memoryMB) return { fit: false, dimension: "memory" };
  }
  return { fit: true, resources, util };
}

/** Nomad's binPackingMaxFitScore: the score of a perfect fit. */
const MAX_FIT = 18;

/**
 * Nomad's ScoreFitBinPack normalised to 0..1 (its "binpack" score): 20 − (10^freeCpu + 10^freeMem),
 * bounded to 0..18, over 18. Fuller nodes score higher. Null for a node without NodeResources.
 */
export function binPackScore(
  node: Pick<Node, "NodeResources" | "ReservedResources">,
  util: Usage,
): number | null {
  const cap = nodeCapacity(node);
  if (!cap || cap.cpu <= 0 || cap.memoryMB <= 0) return null;
  const freeCpu = 1 - util.cpu / cap.cpu;
  const freeMem = 1 - util.memoryMB / cap.memoryMB;
  const score = 20 - (10 ** freeCpu + 10 ** freeMem);
  return Math.min(MAX_FIT, Math.max(0, score)) / MAX_FIT;
}
