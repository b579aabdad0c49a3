/**
 * The fallback for `privileged = true` where the daemon cannot grant it: `Privileged` asks runc for
 * every capability the kernel knows, and a host whose bounding set lacks some (a nested sandbox,
 * some CI hosts) refuses the start ("unable to apply caps: operation not permitted"). The task then
 * gets what the host can give: the capabilities of the bounding set, every host device, and no
 * seccomp/AppArmor confinement (container_spec.ts); the driver says so in a task event.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { PrivilegedFallback } from "./container_spec.js";

/**
 * Capability names by number (linux/capability.h) up to CAP_AUDIT_READ (37): the ones every Docker
 * release since 2015 knows. Later ones (PERFMON, BPF, CHECKPOINT_RESTORE) are refused as unknown by
 * Docker 20.10, so they are left out.
 */
const CAP_NAMES = [
  "CHOWN",
  "DAC_OVERRIDE",
  "DAC_READ_SEARCH",
  "FOWNER",
  "FSETID",
  "KILL",
  "SETGID",
  "SETUID",
  "SETPCAP",
  "LINUX_IMMUTABLE",
  "NET_BIND_SERVICE",
  "NET_BROADCAST",
  "NET_ADMIN",
  "NET_RAW",
  "IPC_LOCK",
  "IPC_OWNER",
  "SYS_MODULE",
  "SYS_RAWIO",
  "SYS_CHROOT",
  "SYS_PTRACE",
  "SYS_PACCT",
  "SYS_ADMIN",
  "SYS_BOOT",
  "SYS_NICE",
  "SYS_RESOURCE",
  "SYS_TIME",
  "SYS_TTY_CONFIG",
  "MKNOD",
  "LEASE",
  "AUDIT_WRITE",
  "AUDIT_CONTROL",
  "SETFCAP",
  "MAC_OVERRIDE",
  "MAC_ADMIN",
  "SYSLOG",
  "WAKE_ALARM",
  "BLOCK_SUSPEND",
  "AUDIT_READ",
];

/** The daemon's refusal of `Privileged` on such a host (runc's message, through containerd). */
export function isPrivilegeRefusal(message: string): boolean {
  return /unable to apply caps|apply caps.*operation not permitted/i.test(message);
}

/** The names of the capabilities set in a `CapBnd:` hex mask (of /proc/<pid>/status). Pure. */
export function capabilitiesOf(capBndHex: string): string[] {
  const mask = BigInt(`0x${capBndHex.trim()}`);
  return CAP_NAMES.filter((_, bit) => (mask >> BigInt(bit)) & 1n);
}

/** The devices Docker makes in every container: listing them again would clash. */
const DOCKER_DEFAULT_DEVICES = new Set([
  "/dev/null",
  "/dev/zero",
  "/dev/full",
  "/dev/random",
  "/dev/urandom",
  "/dev/tty",
  "/dev/console",
  "/dev/ptmx",
  "/dev/fuse",
]);
/** Dirs of /dev the container has its own of. */
const SKIPPED_DIRS = new Set(["/dev/pts", "/dev/shm", "/dev/mqueue", "/dev/hugepages"]);

/** What the fallback grants on this host: the bounding set's capabilities and its devices. */
export async function privilegedFallback(): Promise<PrivilegedFallback> {
  const status = await fs.readFile("/proc/self/status", "utf8");
  const capBnd = /^CapBnd:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? "0";
  return { capAdd: capabilitiesOf(capBnd), devices: await hostDevices("/dev", 2) };
}

/** Character and block devices below `dir` (to `depth` levels), sorted. */
async function hostDevices(dir: string, depth: number): Promise<string[]> {
  const out: string[] = [];
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isCharacterDevice() || e.isBlockDevice()) {
      if (!DOCKER_DEFAULT_DEVICES.has(p)) out.push(p);
    } else if (e.isDirectory() && depth > 1 && !SKIPPED_DIRS.has(p)) {
      out.push(...(await hostDevices(p, depth - 1)));
    }
  }
  return out.sort();
}
