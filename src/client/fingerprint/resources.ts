/**
 * The node's CPU, memory and disk, as Nomad's cpu, memory and storage fingerprinters report them:
 * attributes (`cpu.numcores`, `cpu.frequency` in MHz, `cpu.totalcompute` = cores × MHz,
 * `cpu.modelname`, `memory.totalbytes`, `unique.storage.volume`, `unique.storage.bytestotal`) and
 * Node.NodeResources (CPU shares in MHz, the usable cores, MemoryMB, DiskMB of the data dir's
 * filesystem). The client config's `cpu_total_compute`, `memory_total_mb` and `disk_total_mb`
 * override what was measured, as in Nomad. `reserved { cpu, memory, disk }` becomes
 * Node.ReservedResources.
 */
import fs from "node:fs";
import os from "node:os";
import type { NodeReservedResources, NodeResources } from "../../structs/node.js";
import { parseMountinfo, SELF_MOUNTINFO } from "../../internal/mountinfo.js";

/** Client config overrides (Nomad's client `cpu_total_compute`, `memory_total_mb`, `disk_total_mb`). */
export interface ResourceOverrides {
  cpuTotalCompute?: number;
  memoryTotalMB?: number;
  diskTotalMB?: number;
}

/** Client config `reserved { cpu, memory, disk }`: MHz, MiB, MiB. */
export interface ReservedSetting {
  cpu?: number;
  memory?: number;
  disk?: number;
}

const MIB = 1024 * 1024;

/**
 * The cores' frequency in MHz: what the kernel reports per core, else the cpufreq maximum, else
 * /proc/cpuinfo's "cpu MHz" (virtual machines often report 0 per core). 0 when none tells.
 */
export function cpuMhz(cpus: Pick<os.CpuInfo, "speed">[], read: (file: string) => string | null): number {
  const speed = cpus[0]?.speed ?? 0;
  if (speed > 0) return speed;
  const khz = Number(read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")?.trim());
  if (Number.isFinite(khz) && khz > 0) return Math.floor(khz / 1000);
  const m = /^cpu MHz\s*:\s*([0-9.]+)/m.exec(read("/proc/cpuinfo") ?? "");
  return m ? Math.floor(Number(m[1])) : 0;
}

/** One core's MHz on this host (cpuMhz), what usage's TotalTicks are counted in. */
export function hostCoreMhz(): number {
  return cpuMhz(os.cpus(), readText);
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/** The filesystem holding `dir`: its device (from /proc/self/mountinfo's longest prefix) and size. */
function storage(dir: string): { volume: string; totalBytes: number } | null {
  let st: ReturnType<typeof fs.statfsSync>;
  try {
    st = fs.statfsSync(dir);
  } catch {
    return null;
  }
  let volume = "";
  let best = -1;
  for (const { mountPoint, source } of parseMountinfo(readText(SELF_MOUNTINFO) ?? "")) {
    const inside =
      dir === mountPoint || dir.startsWith(mountPoint.endsWith("/") ? mountPoint : mountPoint + "/");
    if (inside && mountPoint.length > best) {
      best = mountPoint.length;
      volume = source;
    }
  }
  return { volume, totalBytes: st.blocks * st.bsize };
}

export interface ResourceFingerprint {
  attributes: Record<string, string>;
  /** Absent when the CPU's frequency cannot be told and no cpu_total_compute is configured. */
  resources?: NodeResources;
}

export function fingerprintResources(dataDir: string, o: ResourceOverrides = {}): ResourceFingerprint {
  const cpus = os.cpus();
  const cores = cpus.length;
  const mhz = cpuMhz(cpus, readText);
  const total = o.cpuTotalCompute ?? cores * mhz;
  const memBytes = o.memoryTotalMB !== undefined ? o.memoryTotalMB * MIB : os.totalmem();
  const disk = storage(dataDir);
  const diskBytes = o.diskTotalMB !== undefined ? o.diskTotalMB * MIB : (disk?.totalBytes ?? 0);
  const attributes: Record<string, string> = {
    "cpu.numcores": String(cores),
    "cpu.reservablecores": String(cores),
    "memory.totalbytes": String(memBytes),
  };
  if (cpus[0]?.model) attributes["cpu.modelname"] = cpus[0].model;
  if (mhz > 0) attributes["cpu.frequency"] = String(mhz);
  if (total > 0) {
    attributes["cpu.totalcompute"] = String(total);
    attributes["cpu.usablecompute"] = String(total);
  }
  if (disk) {
    attributes["unique.storage.volume"] = disk.volume;
    attributes["unique.storage.bytestotal"] = String(diskBytes);
  }
  if (total <= 0) return { attributes };
  return {
    attributes,
    resources: {
      Cpu: {
        CpuShares: total,
        TotalCpuCores: cores,
        ReservableCpuCores: Array.from({ length: cores }, (_, i) => i),
      },
      Memory: { MemoryMB: Math.floor(memBytes / MIB) },
      Disk: { DiskMB: Math.floor(diskBytes / MIB) },
    },
  };
}

export function reservedResources(r: ReservedSetting = {}): NodeReservedResources {
  return {
    Cpu: { CpuShares: r.cpu ?? 0 },
    Memory: { MemoryMB: r.memory ?? 0 },
    Disk: { DiskMB: r.disk ?? 0 },
  };
}
