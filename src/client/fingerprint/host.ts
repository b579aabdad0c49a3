/**
 * Host attributes under the names Nomad's Linux fingerprinters give them (client/fingerprint:
 * arch, host, nomad, network), so a jobspec's `${attr.kernel.name}`, `${attr.os.name}`,
 * `${attr.unique.hostname}`, … constrain berth nodes as they do Nomad nodes. `nomad.version` is
 * berth's own version: berth answers in Nomad's place.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Go's GOARCH names, which Nomad's `${attr.cpu.arch}` reports. */
const GO_ARCH: Record<string, string> = { x64: "amd64", ia32: "386", arm64: "arm64", arm: "arm" };

/** `KEY=value` lines of an os-release file; quotes removed. */
export function parseOsRelease(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (m) out[m[1]!] = m[2]!.replace(/^(["'])(.*)\1$/, "$2");
  }
  return out;
}

function readText(file: string): string | null {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * gopsutil's platform and version, which Nomad reports as os.name / os.version: the os-release
 * ID ("debian", "ubuntu", …) and VERSION_ID, Debian's full /etc/debian_version when present.
 */
function osNameVersion(): { name: string; version: string } {
  const rel = parseOsRelease(readText("/etc/os-release") ?? readText("/usr/lib/os-release") ?? "");
  const name = rel.ID ?? os.platform();
  const debian = name === "debian" ? readText("/etc/debian_version")?.trim() : undefined;
  return { name, version: debian || rel.VERSION_ID || "" };
}

/** berth's version from its package.json (found above this file in src/ and in dist/). */
export function berthVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const text = readText(path.join(dir, "package.json"));
    if (text) {
      const pkg = JSON.parse(text) as { name?: unknown; version?: unknown };
      if (pkg.name === "berth" && typeof pkg.version === "string") return pkg.version;
    }
    const up = path.dirname(dir);
    if (up === dir) return "0.0.0";
    dir = up;
  }
}

/** The first non-internal IPv4 address (Nomad: the default interface's), if any. */
function ipAddress(): string | undefined {
  const ifaces = os.networkInterfaces();
  for (const name of Object.keys(ifaces).sort()) {
    const a = ifaces[name]?.find((i) => i.family === "IPv4" && !i.internal);
    if (a) return a.address;
  }
  return undefined;
}

export function hostAttributes(): Record<string, string> {
  const { name, version } = osNameVersion();
  const attrs: Record<string, string> = {
    "kernel.name": os.platform(),
    "kernel.version": os.release(),
    "kernel.arch": os.machine(),
    "os.name": name,
    "cpu.arch": GO_ARCH[os.arch()] ?? os.arch(),
    "unique.hostname": os.hostname(),
    "nomad.version": berthVersion(),
  };
  if (version) attrs["os.version"] = version;
  const machineId = readText("/etc/machine-id")?.trim();
  if (machineId) attrs["unique.host_id"] = machineId;
  const ip = ipAddress();
  if (ip) attrs["unique.network.ip-address"] = ip;
  return attrs;
}
