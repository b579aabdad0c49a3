/**
 * What the run records while it goes: samples of the app's allocs (polled through a live server
 * every ~250 ms, for the "no count=1 job with two running allocs" check) and the client operations
 * it issues during faults (a job register and a volume create through a randomly chosen server —
 * possibly the paused or killed one — each recorded with its outcome, for the "no acknowledged
 * write lost" check).
 */
import { parseJobHcl } from "../../../src/api/specs/jobspec.js";
import { parseVolumeHcl } from "../../../src/api/specs/volumespec.js";
import { ApiClient } from "../../../src/api/client.js";
import type { AckedOp, AllocSample } from "./checker.js";
import type { JepsenCluster } from "./cluster.js";
import { APP, type AllocStub } from "./workload.js";

/** Polls the app's allocs until `signal` aborts. */
export async function sampleAllocs(
  cluster: JepsenCluster,
  samples: AllocSample[],
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    const live = cluster.live();
    const s = live[samples.length % Math.max(1, live.length)];
    if (s) {
      try {
        const res = await fetch(`${s.base}/v1/job/${APP}/allocations`, {
          signal: AbortSignal.any([signal, AbortSignal.timeout(2000)]),
        });
        if (res.ok) {
          const allocs = (await res.json()) as AllocStub[];
          samples.push({
            at: Date.now(),
            server: s.name,
            running: allocs.filter((a) => a.ClientStatus === "running").map((a) => a.ID),
          });
        }
      } catch {
        /* a server paused or killed meanwhile: the next poll asks another */
      }
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A job that places nothing (count = 0): registering it is a pure store write plus an eval. */
function ackJobHcl(id: string): string {
  return `job "${id}" {\n  type = "service"\n  group "g" {\n    count = 0\n    task "t" {\n      driver = "exec"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`;
}

function ackVolumeHcl(id: string): string {
  return `id = "${id}"\nname = "${id}"\ntype = "csi"\nplugin_id = "hostpath"\ncapability {\n  access_mode = "single-node-writer"\n  attachment_mode = "file-system"\n}\n`;
}

function outcomeOf(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}`.slice(0, 300) : String(err);
}

/**
 * Registers job `ack-<n>` and creates volume `ackvol-<n>` through `via` (any server, paused or
 * not), each within `timeoutMs`, and records both outcomes in `ops`.
 */
export async function ackOps(
  cluster: JepsenCluster,
  via: string,
  n: number,
  ops: AckedOp[],
  timeoutMs: number,
): Promise<void> {
  const base = cluster.server(via).base;
  const client = () => new ApiClient({ address: base, signal: AbortSignal.timeout(timeoutMs) });
  const jobId = `ack-${n}`;
  const volId = `ackvol-${n}`;
  const job = await parseJobHcl(`${jobId}.hcl`, ackJobHcl(jobId));
  const vol = parseVolumeHcl(`${volId}.hcl`, ackVolumeHcl(volId));
  await Promise.all([
    client()
      .jobs.register(job)
      .then(
        () => ops.push({ kind: "job-register", id: jobId, via, outcome: "ok" }),
        (err: unknown) => ops.push({ kind: "job-register", id: jobId, via, outcome: outcomeOf(err) }),
      ),
    client()
      .volumes.create(vol)
      .then(
        () => ops.push({ kind: "volume-create", id: volId, via, outcome: "ok" }),
        (err: unknown) => ops.push({ kind: "volume-create", id: volId, via, outcome: outcomeOf(err) }),
      ),
  ]);
}

/** Whether an acknowledged op is visible through a live server now. */
export async function visibleNow(cluster: JepsenCluster, op: AckedOp): Promise<boolean> {
  const route =
    op.kind === "job-register"
      ? `/v1/job/${op.id}`
      : op.kind === "volume-create"
        ? `/v1/volume/csi/${op.id}`
        : `/v1/allocation/${op.id}`;
  for (let attempt = 0; attempt < 5; attempt++) {
    const res = await fetch(cluster.pick().base + route, { signal: AbortSignal.timeout(5000) }).catch(
      () => undefined,
    );
    if (res?.status === 404) return false;
    if (res?.ok) {
      if (op.kind !== "alloc-stop") return true;
      const a = (await res.json()) as AllocStub;
      return a.DesiredStatus === "stop";
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}
