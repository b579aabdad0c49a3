/**
 * The mount options a volume is mounted with for one alloc, as Nomad merges them
 * (`CSIMountOptions.Merge` in the client's volume manager): the volume's `mount_options` are the
 * defaults and the job's `volume` block's override them field by field — fs_type when the job sets
 * one, mount_flags when the job gives any (they replace the volume's list, they do not append).
 * Nomad replaces on a non-nil list; berth's job records hold `[]` for "not given" (HCL and JSON
 * decode alike), so an empty job list keeps the volume's flags. berth's MountGroup and
 * MountGroupPolicy merge the same way (the job's when set). Pure.
 */
import type { MountOptions } from "./csi_terms.js";

export function mergeMountOptions(
  volume: MountOptions | null | undefined,
  job: MountOptions | null | undefined,
): MountOptions | null {
  if (!volume && !job) return null;
  const flags = job && job.MountFlags.length > 0 ? job.MountFlags : (volume?.MountFlags ?? []);
  const merged: MountOptions = { FSType: job?.FSType || volume?.FSType || "", MountFlags: [...flags] };
  // berth's mount group (structs/mount_group.ts), field by field as well; absent stays absent.
  const group = job?.MountGroup ?? volume?.MountGroup;
  const policy = job?.MountGroupPolicy ?? volume?.MountGroupPolicy;
  if (group !== undefined) merged.MountGroup = group;
  if (policy !== undefined) merged.MountGroupPolicy = policy;
  return merged;
}
