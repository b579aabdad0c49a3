/**
 * The client's fingerprint on this machine: Nomad's attribute names with values that agree with
 * the OS, NodeResources, the CPU frequency fallbacks, and the agent config's `reserved` and
 * `*_total_*` settings.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import { parseAgentConfig, readAgentConfigFiles } from "../../../src/agent/config_file.js";
import { berthVersion, parseOsRelease } from "../../../src/client/fingerprint/host.js";
import { cpuMhz, reservedResources } from "../../../src/client/fingerprint/resources.js";
import { fingerprintNode } from "../../../src/client/node_identity.js";

const drivers = {
  exec: { Detected: true, Healthy: true, HealthDescription: "", SupportsMounts: true },
  raw_exec: { Detected: true, Healthy: false, HealthDescription: "disabled", SupportsMounts: false },
};

test("fingerprint: Nomad's Linux attribute names, with this machine's values", () => {
  const { attributes: a, resources } = fingerprintNode(drivers, os.tmpdir());
  assert.equal(a["kernel.name"], "linux");
  assert.equal(a["kernel.version"], os.release());
  assert.equal(a["kernel.arch"], os.machine());
  assert.equal(a["cpu.arch"], os.arch() === "x64" ? "amd64" : os.arch(), "Go's GOARCH name");
  assert.equal(a["unique.hostname"], os.hostname());
  assert.equal(a["cpu.numcores"], String(os.cpus().length));
  assert.equal(a["memory.totalbytes"], String(os.totalmem()));
  assert.equal(a["nomad.version"], JSON.parse(fs.readFileSync("package.json", "utf8")).version);
  const rel = parseOsRelease(fs.readFileSync("/etc/os-release", "utf8"));
  assert.equal(a["os.name"], rel.ID, "gopsutil's platform: the os-release ID");
  assert.ok(a["os.version"], "os.version is set");
  assert.equal(a["driver.exec"], "1");
  assert.equal(a["driver.raw_exec"], undefined, "an unhealthy driver is not advertised");
  assert.ok(a["unique.storage.volume"], "the data dir's device");
  assert.ok(resources, "resources are fingerprinted");
  const mhz = Number(a["cpu.frequency"]);
  assert.ok(mhz > 0);
  assert.equal(Number(a["cpu.totalcompute"]), mhz * os.cpus().length, "cores × MHz");
  assert.equal(resources.Cpu.CpuShares, mhz * os.cpus().length);
  assert.deepEqual(resources.Cpu.ReservableCpuCores, [...Array(os.cpus().length).keys()]);
  assert.equal(resources.Memory.MemoryMB, Math.floor(os.totalmem() / 2 ** 20));
  const st = fs.statfsSync(os.tmpdir());
  assert.equal(resources.Disk.DiskMB, Math.floor((st.blocks * st.bsize) / 2 ** 20));
  assert.equal(a["unique.storage.bytestotal"], String(st.blocks * st.bsize));
});

test("fingerprint: *_total_* overrides replace what was measured", () => {
  const fp = fingerprintNode(drivers, os.tmpdir(), {
    cpuTotalCompute: 1234,
    memoryTotalMB: 2048,
    diskTotalMB: 10,
  });
  assert.equal(fp.resources?.Cpu.CpuShares, 1234);
  assert.equal(fp.resources?.Memory.MemoryMB, 2048);
  assert.equal(fp.resources?.Disk.DiskMB, 10);
  assert.equal(fp.attributes["cpu.totalcompute"], "1234");
  assert.equal(fp.attributes["memory.totalbytes"], String(2048 * 2 ** 20));
});

test("fingerprint: CPU MHz from the kernel, else cpufreq, else /proc/cpuinfo", () => {
  const files: Record<string, string> = {
    "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq": "3400000\n",
    "/proc/cpuinfo": "processor\t: 0\ncpu MHz\t\t: 2596.088\n",
  };
  const read = (f: string) => files[f] ?? null;
  assert.equal(cpuMhz([{ speed: 2000 }], read), 2000);
  assert.equal(cpuMhz([{ speed: 0 }], read), 3400);
  assert.equal(
    cpuMhz([{ speed: 0 }], (f) => (f === "/proc/cpuinfo" ? files[f]! : null)),
    2596,
  );
  assert.equal(
    cpuMhz([{ speed: 0 }], () => null),
    0,
    "unknown: no NodeResources rather than a guess",
  );
  assert.equal(berthVersion(), JSON.parse(fs.readFileSync("package.json", "utf8")).version);
});

test("agent config: client reserved { cpu, memory, disk } and the *_total_* settings", async () => {
  const cfg = await parseAgentConfig(
    "a.hcl",
    "client {\n  reserved {\n    cpu = 500\n    memory = 256\n  }\n  memory_total_mb = 4096\n}\n",
  );
  assert.deepEqual(cfg.reserved, { cpu: 500, memory: 256 });
  assert.deepEqual(cfg.resourceOverrides, { memoryTotalMB: 4096 });
  assert.deepEqual(reservedResources(cfg.reserved), {
    Cpu: { CpuShares: 500 },
    Memory: { MemoryMB: 256 },
    Disk: { DiskMB: 0 },
  });
  const json = await parseAgentConfig("a.json", JSON.stringify({ client: { reserved: { disk: 1024 } } }));
  assert.deepEqual(json.reserved, { disk: 1024 });
  await assert.rejects(
    parseAgentConfig("b.hcl", "client {\n  reserved {\n    cpu = -1\n  }\n}\n"),
    /cpu must be 0 or more/,
  );
  // Nomad's reserved cores: accepted, and named in a warning as not used.
  const cores = await parseAgentConfig("b.hcl", 'client {\n  reserved {\n    cores = "0-1"\n  }\n}\n');
  assert.match(
    cores.warnings?.join("\n") ?? "",
    /b\.hcl:3:5: client\.reserved\.cores is accepted but not used/,
  );
  const dir = fs.mkdtempSync(`${os.tmpdir()}/berth-fp-`);
  try {
    fs.writeFileSync(`${dir}/a.hcl`, "client {\n  reserved {\n    cpu = 100\n    memory = 64\n  }\n}\n");
    fs.writeFileSync(`${dir}/b.hcl`, "client {\n  reserved {\n    memory = 128\n  }\n}\n");
    const merged = await readAgentConfigFiles([dir]);
    assert.deepEqual(merged.reserved, { cpu: 100, memory: 128 }, "later files win per field");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
