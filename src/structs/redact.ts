/**
 * API redaction, as Nomad does it: volume secrets become null and non-empty mount flags become
 * `["[REDACTED]"]` (flags may carry credentials). Every API answer that carries a volume, a job or
 * an alloc (whose job snapshot holds volume requests) passes through here. Claims lose berth's
 * internal bookkeeping (withoutInternalClaimFields). Pure: returns copies.
 */
import type { Allocation } from "./alloc.js";
import type { Job } from "./job.js";
import { withoutInternalClaimFields, type CSIVolume, type MountOptions, type VolumeClaim } from "./volume.js";

export const REDACTED = "[REDACTED]";

export function redactMountOptions(m: MountOptions | null): MountOptions | null {
  if (!m) return m;
  return { ...m, MountFlags: m.MountFlags.length > 0 ? [REDACTED] : [] };
}

export function redactVolume(vol: CSIVolume): CSIVolume {
  const claims = (m: Record<string, VolumeClaim>) =>
    Object.fromEntries(Object.entries(m).map(([id, c]) => [id, withoutInternalClaimFields(c)]));
  return {
    ...vol,
    Secrets: null,
    MountOptions: redactMountOptions(vol.MountOptions),
    ReadClaims: claims(vol.ReadClaims),
    WriteClaims: claims(vol.WriteClaims),
    PastClaims: claims(vol.PastClaims),
  };
}

export function redactJob(job: Job): Job {
  return {
    ...job,
    TaskGroups: job.TaskGroups.map((g) => ({
      ...g,
      Volumes: Object.fromEntries(
        Object.entries(g.Volumes).map(([k, v]) => [
          k,
          { ...v, MountOptions: redactMountOptions(v.MountOptions) },
        ]),
      ),
    })),
  };
}

export function redactAlloc(alloc: Allocation): Allocation {
  return { ...alloc, Job: redactJob(alloc.Job) };
}
