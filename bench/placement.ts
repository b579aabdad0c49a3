/**
 * Submit-to-running latency through real parts: a real `berth agent -dev` process, berth's hostpath
 * plugin as an exec task, N volumes (one per alloc, per_alloc), and a service job of N exec tasks
 * that each mount their volume and ask for resources, so every placement is bin-packed against the
 * node's NodeResources (sized by the agent config for N allocs even at Nomad's default 100 MHz /
 * 300 MiB per task, so the bench measures placement, not this machine's size). Prints the seconds from the job's registration until every alloc
 * is running, then until every claim is released after the job stops, with the CPU time the agent
 * process itself spent in each (server and node agent together in `-dev`; the plugin and the tasks
 * are other processes). It runs twice: with `exec` tasks (each builds its chroot with mounts in a
 * new mount namespace) and with `raw_exec` tasks (no isolation, no volume mount into the task; the
 * volume is still claimed, staged and published), so the task driver's share shows apart.
 *
 *   node dist/bench/placement.js [allocs=100] [drivers=exec,raw_exec]
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  AgentProcess,
  eventually,
  freePort,
  getJson,
  killProcessGroupsUnder,
  runCli,
} from "../test/helpers/agent_process.js";

const N = Number(process.argv[2] ?? 100);
const DRIVERS = (process.argv[3] ?? "exec,raw_exec").split(",");

/** CPU seconds (user + system) the process has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 and 15 of proc(5) (utime, stime) are the 12th and 13th after the command name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** The task of the bench's job for `driver`: raw_exec cannot mount a volume into the task. */
function benchTask(driver: string): Record<string, unknown> {
  const resources = { CPU: 50, MemoryMB: 64 };
  if (driver === "raw_exec") {
    return {
      Name: "t",
      Driver: "raw_exec",
      Config: { command: "/bin/sleep", args: ["600"] },
      Resources: resources,
    };
  }
  return {
    Name: "t",
    Driver: driver,
    Config: { command: "/bin/sh", args: ["-c", "echo up > /data/up; exec sleep 600"] },
    VolumeMounts: [{ Volume: "data", Destination: "/data" }],
    Resources: resources,
  };
}

async function request(base: string, method: string, route: string, body?: unknown): Promise<void> {
  const res = await fetch(base + route, { method, ...(body ? { body: JSON.stringify(body) } : {}) });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
}

async function main(driver: string): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-bench-place-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const logFile = `${dir}.log`;
  // examples/hostpath/plugin.hcl keeps its volumes in the host volume agent.hcl declares.
  const sizing = `${dir}.hcl`;
  fs.writeFileSync(
    sizing,
    `client {\n  cpu_total_compute = ${(N + 10) * 100}\n  memory_total_mb = ${(N + 10) * 300}\n  reserved {\n    cpu = 100\n    memory = 256\n  }\n}\nplugin "raw_exec" {\n  config {\n    enabled = true\n  }\n}\n`,
  );
  const agent = new AgentProcess(
    [
      "-dev",
      "-config",
      "examples/hostpath/agent.hcl",
      "-config",
      sizing,
      "-data-dir",
      dir,
      "-http-addr",
      `127.0.0.1:${port}`,
    ],
    logFile,
  );
  try {
    await eventually(
      "agent",
      async () => ((await getJson<unknown[]>(base, "/v1/nodes")).length > 0 ? true : undefined),
      30_000,
    );
    const run = await runCli(["job", "run", "examples/hostpath/plugin.hcl"], { BERTH_ADDR: base });
    if (run.code !== 0) throw new Error(run.stderr);
    await eventually(
      "plugin healthy",
      async () =>
        (await getJson<{ NodesHealthy: number }>(base, "/v1/plugin/csi/hostpath")).NodesHealthy > 0
          ? true
          : undefined,
      60_000,
    );
    for (let i = 0; i < N; i++) {
      await request(base, "PUT", `/v1/volume/csi/vol[${i}]/create`, {
        Volumes: [
          {
            ID: `vol[${i}]`,
            Name: `vol-${i}`,
            PluginID: "hostpath",
            RequestedCapacityMin: 1 << 20,
            RequestedCapabilities: [{ AccessMode: "single-node-writer", AttachmentMode: "file-system" }],
          },
        ],
      });
    }
    const pid = agent.pid!;
    const t0 = Date.now();
    const cpu0 = cpuSeconds(pid);
    await request(base, "PUT", "/v1/jobs", {
      Job: {
        ID: "many",
        Type: "service",
        TaskGroups: [
          {
            Name: "g",
            Count: N,
            Volumes: {
              data: {
                Type: "csi",
                Source: "vol",
                PerAlloc: true,
                AccessMode: "single-node-writer",
                AttachmentMode: "file-system",
              },
            },
            Tasks: [benchTask(driver)],
          },
        ],
      },
    });
    await eventually(
      `${N} allocs running`,
      async () => {
        const allocs = await getJson<{ ClientStatus: string }[]>(base, "/v1/job/many/allocations");
        if (allocs.some((a) => a.ClientStatus === "failed")) throw new Error("an alloc failed");
        return allocs.filter((a) => a.ClientStatus === "running").length === N ? true : undefined;
      },
      600_000,
      100,
    );
    const running = (Date.now() - t0) / 1000;
    const runningCpu = cpuSeconds(pid) - cpu0;
    const t1 = Date.now();
    const cpu1 = cpuSeconds(pid);
    await request(base, "DELETE", "/v1/job/many");
    await eventually(
      "claims released",
      async () => {
        const vols = await getJson<{ CurrentReaders: number; CurrentWriters: number }[]>(
          base,
          "/v1/volumes?type=csi",
        );
        return vols.every((v) => v.CurrentReaders + v.CurrentWriters === 0) ? true : undefined;
      },
      600_000,
      100,
    );
    const released = (Date.now() - t1) / 1000;
    const releasedCpu = cpuSeconds(pid) - cpu1;
    console.log(
      `${N} allocs (${driver} tasks), each with its own CSI volume and resources, one bin-packed node:`,
    );
    console.log(
      `  submit → all running        ${running.toFixed(1)} s  (${(N / running).toFixed(1)} allocs/s), agent CPU ${runningCpu.toFixed(2)} s`,
    );
    console.log(
      `  stop → all claims released  ${released.toFixed(1)} s, agent CPU ${releasedCpu.toFixed(2)} s`,
    );
    console.log(
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}`,
    );
  } finally {
    await agent.stop(120_000);
    killProcessGroupsUnder(dir);
    fs.rmSync(dir, { recursive: true, force: true });
    // BERTH_BENCH_KEEP_LOG=1 keeps the agent's log, to see where the time went.
    if (process.env.BERTH_BENCH_KEEP_LOG) console.log(`agent log kept: ${logFile}`);
    else fs.rmSync(logFile, { force: true });
    fs.rmSync(sizing, { force: true });
  }
}

for (const driver of DRIVERS) await main(driver);
