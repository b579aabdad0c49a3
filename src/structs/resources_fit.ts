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

/**
 * Adds the alloc's resources into `u`; an alloc placed before resources existed uses nothing.
 * Read defensively: stored allocs are checked structurally only, and one odd record must not make
 * placement throw for every job on its node (a part that is not a number counts as nothing).
 */
function addInto(u: Usage, r: AllocatedResources | undefined): void {
  const tasks = r?.Tasks;
  if (!tasks || typeof tasks !== "object") return;
  for (const name of Object.keys(tasks)) {
    const t = tasks[name];
    const cpu = t?.Cpu?.CpuShares;
    const mem = t?.Memory?.MemoryMB;
    if (typeof cpu === "number" && Number.isFinite(cpu)) u.cpu += cpu;
    if (typeof mem === "number" && Number.isFinite(mem)) u.memoryMB += mem;
    const cores = t?.Cpu?.ReservedCores;
    if (Array.isArray(cores)) for (const c of cores) if (typeof c === "number") u.cores.push(c);
  }
}

/** An alloc's usage. */
export function usageOf(r: AllocatedResources | undefined): Usage {
  const u: Usage = { cpu: 0, memoryMB: 0, cores: [] };
  addInto(u, r);
  return u;
}

const sums = new WeakMap<readonly unknown[], { counted: number; usage: Usage }>();

/**
 * The sum of the allocs' usage. A list that only grows (a node's proposed allocs during a plan) is
 * summed incrementally: each alloc is added once.
 */
export function usageOfAllocs(allocs: readonly Pick<Allocation, "AllocatedResources">[]): Usage {
  let s = sums.get(allocs);
  if (!s || s.counted > allocs.length) {
    s = { counted: 0, usage: { cpu: 0, memoryMB: 0, cores: [] } };
    sums.set(allocs, s);
  }
  for (; s.counted < allocs.length; s.counted++) addInto(s.usage, allocs[s.counted]!.AllocatedResources);
  return s.usage;
}

const capacities = new WeakMap<object, Usage | null>();

/**
 * What the node offers the scheduler: NodeResources less ReservedResources; null when unknown.
 * Remembered per node record (records are never changed in place).
 */
export function nodeCapacity(node: Pick<Node, "NodeResources" | "ReservedResources">): Usage | null {
  let cap = capacities.get(node);
  if (cap !== undefined) return cap;
  const res = node.NodeResources;
  const rsv = node.ReservedResources;
  cap = res
    ? {
        cpu: res.Cpu.CpuShares - (rsv?.Cpu.CpuShares ?? 0),
        memoryMB: res.Memory.MemoryMB - (rsv?.Memory.MemoryMB ?? 0),
        cores: res.Cpu.ReservableCpuCores,
      }
    : null;
  capacities.set(node, cap);
  return cap;
}

function groupDiskMB(group: TaskGroup): number {
  const size = group.EphemeralDisk?.SizeMB;
  return typeof size === "number" && size >= 0 ? size : DEFAULT_EPHEMERAL_DISK_MB;
}

export type FitResult = { fit: true; util: Usage } | { fit: false; dimension: string };

function mhzPerCore(node: Pick<Node, "NodeResources">): number {
  const cpu = node.NodeResources?.Cpu;
  return cpu && cpu.TotalCpuCores > 0 ? cpu.CpuShares / cpu.TotalCpuCores : 0;
}

/**
 * Whether one alloc of the group fits on the node beside `used` (its live allocs): each task's
 * Resources with Nomad's defaults (CPU 100 MHz, 300 MiB), a task's `cores` as that many free
 * reservable cores (their share of the node's MHz as its CPU). The refusal names Nomad's
 * dimension: "cores" (not enough free cores), "cpu", "memory". A node without NodeResources is not
 * bin-packed: everything fits. Numbers only (no allocation): it runs for every feasible node.
 */
export function fitGroup(
  node: Pick<Node, "NodeResources" | "ReservedResources">,
  used: Usage,
  group: TaskGroup,
): FitResult {
  const cap = nodeCapacity(node);
  let cpu = used.cpu;
  let memoryMB = used.memoryMB;
  let cores = 0;
  for (const task of group.Tasks) {
    const r = task.Resources;
    const wantCores = r?.Cores ?? 0;
    if (wantCores > 0 && cap) {
      cores += wantCores;
      cpu += Math.floor(wantCores * mhzPerCore(node));
    } else cpu += r?.CPU ?? DEFAULT_TASK_CPU_MHZ;
    memoryMB += r?.MemoryMB ?? DEFAULT_TASK_MEMORY_MB;
  }
  if (cap) {
    if (cores > 0) {
      const taken = new Set(used.cores);
      if (cap.cores.filter((c) => !taken.has(c)).length < cores) return { fit: false, dimension: "cores" };
    }
    if (cap.cpu < cpu) return { fit: false, dimension: "cpu" };
    if (cap.memoryMB < memoryMB) return { fit: false, dimension: "memory" };
  }
  return { fit: true, util: { cpu, memoryMB, cores: used.cores } };
}

/**
 * The AllocatedResources of an alloc of the group placed on the node (which fitGroup said fits):
 * the lowest free reservable cores for each task that asks for cores, in task order.
 */
export function allocateGroup(
  node: Pick<Node, "NodeResources" | "ReservedResources">,
  used: Usage,
  group: TaskGroup,
): AllocatedResources {
  const cap = nodeCapacity(node);
  const taken = new Set(used.cores);
  const free = (cap?.cores ?? []).filter((c) => !taken.has(c));
  const resources: AllocatedResources = { Tasks: {}, Shared: { DiskMB: groupDiskMB(group) } };
  for (const task of group.Tasks) {
    const r = task.Resources ?? {};
    const wantCores = r.Cores ?? 0;
    let cpu = r.CPU ?? DEFAULT_TASK_CPU_MHZ;
    let cores: number[] | null = null;
    if (wantCores > 0 && cap) {
      cores = free.splice(0, wantCores);
      cpu = Math.floor(wantCores * mhzPerCore(node));
    }
    resources.Tasks[task.Name] = {
      Cpu: { CpuShares: cpu, ReservedCores: cores },
      Memory: { MemoryMB: r.MemoryMB ?? DEFAULT_TASK_MEMORY_MB, MemoryMaxMB: r.MemoryMaxMB ?? 0 },
    };
  }
  return resources;
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
