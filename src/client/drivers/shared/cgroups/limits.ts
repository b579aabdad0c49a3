/**
 * What a task's `resources` stanza becomes in its cgroup, computed as Nomad's executor does
 * (drivers/shared/executor: memoryLimits, configureCG1/CG2): pure arithmetic, no I/O.
 *
 * - memory: `MemoryMB` is the hard limit; with `MemoryMaxMB` > 0 that is the hard limit and
 *   `MemoryMB` the soft one (v1 memory.soft_limit_in_bytes, v2 memory.low); `MemoryMaxMB` = -1
 *   means no hard limit at all. (Nomad honours memory_max only when the scheduler's memory
 *   oversubscription is enabled; berth always honours it.)
 * - cpu: the task's CPU in MHz is its v1 cpu.shares; v2 cpu.weight is converted from the shares as
 *   runc/opencontainers do (cpuSharesToWeight).
 * - cores: a cpuset of that many whole cores (the scheduler's ReservedCores when it chose them).
 */
import type { AllocatedTaskResources } from "../../../../structs/alloc.js";
import {
  DEFAULT_TASK_CPU_MHZ,
  DEFAULT_TASK_MEMORY_MB,
  type Resources,
} from "../../../../structs/job_stanzas.js";

const MIB = 1024 * 1024;

/** Nomad's MemoryNoLimit: `memory_max = -1`. */
export const MEMORY_NO_LIMIT = -1;

/** The resources a task's process is held to; carried in the driver's start config. */
export interface TaskResources {
  /** CPU bandwidth in MHz (Nomad's CpuShares). */
  cpuShares: number;
  memoryMB: number;
  /** 0: none (MemoryMB is the hard limit); -1: no hard limit; otherwise the hard limit. */
  memoryMaxMB: number;
  /** Whole cores to pin the task to; 0: none. */
  cores: number;
  /** The cores the scheduler reserved (Nomad's ReservedCores); empty: the client picks. */
  reservedCores: number[];
}

/** Cgroup settings for one task (see the module comment). */
export interface CgroupLimits {
  /** Bytes; null: no hard limit. */
  memoryHardBytes: number | null;
  /** Bytes; 0: no soft limit. */
  memorySoftBytes: number;
  /** v1 cpu.shares (2..262144). */
  cpuShares: number;
  /** v2 cpu.weight (1..10000). */
  cpuWeight: number;
  cores: number;
  reservedCores: number[];
}

/**
 * The task's resources from what the scheduler allocated (when it recorded them) or else the
 * task's own `resources`, with Nomad's defaults (100 MHz, 300 MiB) for what neither sets: jobs and
 * allocs stored before resources existed have none.
 */
export function taskResources(
  resources: Resources | null | undefined,
  allocated?: AllocatedTaskResources,
): TaskResources {
  const cores = positive(resources?.Cores) ?? 0;
  const reserved = allocated?.Cpu.ReservedCores ?? [];
  return {
    cpuShares: positive(allocated?.Cpu.CpuShares) ?? positive(resources?.CPU) ?? DEFAULT_TASK_CPU_MHZ,
    memoryMB: positive(allocated?.Memory.MemoryMB) ?? positive(resources?.MemoryMB) ?? DEFAULT_TASK_MEMORY_MB,
    memoryMaxMB: memoryMax(allocated?.Memory.MemoryMaxMB ?? resources?.MemoryMaxMB),
    cores: reserved.length > 0 ? reserved.length : cores,
    reservedCores: [...reserved],
  };
}

export function cgroupLimits(r: TaskResources): CgroupLimits {
  let hard: number | null;
  let soft = 0;
  if (r.memoryMaxMB === MEMORY_NO_LIMIT) {
    hard = null;
    soft = r.memoryMB * MIB;
  } else if (r.memoryMaxMB > 0) {
    hard = r.memoryMaxMB * MIB;
    soft = r.memoryMB * MIB;
  } else {
    hard = r.memoryMB * MIB;
  }
  const shares = Math.min(262_144, Math.max(2, Math.round(r.cpuShares)));
  return {
    memoryHardBytes: hard,
    memorySoftBytes: soft,
    cpuShares: shares,
    cpuWeight: cpuSharesToWeight(shares),
    cores: r.cores,
    reservedCores: r.reservedCores,
  };
}

/**
 * cgroup v1 cpu.shares (2..262144, default 1024) → v2 cpu.weight (1..10000, default 100), as
 * opencontainers/cgroups converts them since v0.0.7 (the version Nomad builds with): a quadratic in
 * log2(shares) through the ranges' ends and their defaults, rounded up. 0 means unset.
 */
export function cpuSharesToWeight(shares: number): number {
  if (shares <= 0) return 0;
  if (shares <= 2) return 1;
  if (shares >= 262_144) return 10_000;
  const l = Math.log2(shares);
  const exponent = (l * l + 125 * l) / 612 - 7 / 34;
  return Math.ceil(10 ** exponent);
}

function positive(n: number | undefined): number | undefined {
  return n !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

function memoryMax(n: number | undefined): number {
  if (n === MEMORY_NO_LIMIT) return MEMORY_NO_LIMIT;
  return positive(n) ?? 0;
}
