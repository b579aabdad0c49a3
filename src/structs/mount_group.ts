/**
 * Volume ownership for tasks that do not run as root (issue 33 item 6; Nomad #8892; Kubernetes'
 * fsGroup and fsGroupChangePolicy). A CSI `mount_options` block may name a group:
 *
 *   mount_options { mount_group = "1000"  mount_group_policy = "on_root_mismatch" }
 *
 * When the node plugin advertises VOLUME_MOUNT_GROUP, the group goes to NodeStage/NodePublish as
 * the capability's `volume_mount_group` and the plugin applies it (CSI forbids sending the field to
 * a plugin without the capability). Otherwise berth applies it after NodePublish, on the published
 * target: every file and directory gets the group, directories g+rwx and setgid (new files inherit
 * the group), files g+rw (and g+x when the owner may execute) — Kubernetes' fsGroup walk. The policy
 * says when to walk: `always` (the default, as Kubernetes') on every publish, or `on_root_mismatch`
 * only when the volume's root does not already have the group and those bits, so a large volume is
 * not walked on every start. A read-only use is never walked (it cannot be changed). The task's
 * user must be a member of the group (its primary or a supplementary group): berth does not add it.
 *
 * Pure: the validation and the decisions; the walk is internal/group_ownership.ts.
 */
import { validationError } from "./errors.js";

export const MOUNT_GROUP_POLICIES = ["always", "on_root_mismatch"] as const;
export type MountGroupPolicy = (typeof MOUNT_GROUP_POLICIES)[number];

/** The largest gid (2^32 − 2: (gid_t)−1 means "unchanged" to chown(2)). */
const MAX_GID = 4_294_967_294;

/**
 * The `MountGroup` and `MountGroupPolicy` of a mount_options object, checked: the group a numeric
 * gid (names would resolve differently per node), given as a string or a number; the policy one of
 * MOUNT_GROUP_POLICIES and only with a group. Answers only the fields that are set.
 */
export function checkMountGroup(
  field: string,
  group: unknown,
  policy: unknown,
): { MountGroup?: string; MountGroupPolicy?: MountGroupPolicy } {
  const out: { MountGroup?: string; MountGroupPolicy?: MountGroupPolicy } = {};
  if (group !== undefined && group !== null && group !== "") {
    const text = typeof group === "number" ? String(group) : group;
    if (typeof text !== "string" || !/^[0-9]{1,10}$/.test(text) || Number(text) > MAX_GID) {
      throw validationError(
        `${field}.MountGroup`,
        `must be a numeric group ID between 0 and ${MAX_GID}, got ${JSON.stringify(group)}`,
      );
    }
    out.MountGroup = String(Number(text));
  }
  if (policy !== undefined && policy !== null && policy !== "") {
    if (typeof policy !== "string" || !(MOUNT_GROUP_POLICIES as readonly string[]).includes(policy)) {
      throw validationError(
        `${field}.MountGroupPolicy`,
        `must be one of ${MOUNT_GROUP_POLICIES.join(", ")}, got ${JSON.stringify(policy)}`,
      );
    }
    if (out.MountGroup === undefined) {
      throw validationError(`${field}.MountGroupPolicy`, "is set without a MountGroup");
    }
    out.MountGroupPolicy = policy as MountGroupPolicy;
  }
  return out;
}

/** Who applies the group: nobody (none asked), the node plugin (VOLUME_MOUNT_GROUP) or berth. */
export function mountGroupRoute(
  group: string | undefined,
  pluginHasVolumeMountGroup: boolean,
  readOnly: boolean,
): "none" | "plugin" | "berth" {
  if (group === undefined) return "none";
  if (pluginHasVolumeMountGroup) return "plugin";
  return readOnly ? "none" : "berth";
}

/** The bits a directory gets (setgid, group rwx) and a file (group rw). */
export const DIR_GROUP_BITS = 0o2070;
export const FILE_GROUP_BITS = 0o060;

/**
 * Whether berth walks the volume: always under `always`; under `on_root_mismatch` only when the
 * root's group or its group bits (setgid, g+rwx) are not yet what the walk sets.
 */
export function needsOwnershipWalk(
  policy: MountGroupPolicy | undefined,
  root: { gid: number; mode: number },
  gid: number,
): boolean {
  if ((policy ?? "always") === "always") return true;
  return root.gid !== gid || (root.mode & DIR_GROUP_BITS) !== DIR_GROUP_BITS;
}
