/**
 * Which users a task may run as: Nomad's client options `user.denylist` (formerly
 * `user.blacklist`) and `user.checked_drivers`. A task of a checked driver whose `user` names a
 * denied user fails before it starts, with Nomad's message; the defaults are Nomad's (root and
 * Administrator denied for exec, qemu and java), so `user = "root"` in an exec task is refused
 * unless the node's operator allows it. The check reads the task's own `user`: a driver's default
 * user (exec runs tasks as `nobody`) is the driver's choice, not the job's.
 */
export interface TaskUserPolicy {
  /** Users no task of a checked driver may run as. */
  denylist: readonly string[];
  /** Drivers whose tasks the denylist applies to. */
  checkedDrivers: readonly string[];
}

export const USER_DENYLIST_OPTION = "user.denylist";
/** Nomad's older name of user.denylist, still read when the new one is absent. */
export const USER_BLACKLIST_OPTION = "user.blacklist";
export const USER_CHECKED_DRIVERS_OPTION = "user.checked_drivers";

export const DEFAULT_TASK_USER_POLICY: TaskUserPolicy = {
  denylist: ["root", "Administrator"],
  checkedDrivers: ["exec", "qemu", "java"],
};

/** A comma-separated option value as a list: entries trimmed, empty ones dropped. */
export function optionList(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

/**
 * The policy the client `options` set: `user.denylist` (else `user.blacklist`) and
 * `user.checked_drivers`, each replacing its default when present (an empty value: nothing).
 */
export function taskUserPolicyFromOptions(
  options: Readonly<Record<string, string>> | undefined,
): TaskUserPolicy {
  const denied = options?.[USER_DENYLIST_OPTION] ?? options?.[USER_BLACKLIST_OPTION];
  const checked = options?.[USER_CHECKED_DRIVERS_OPTION];
  return {
    denylist: denied === undefined ? DEFAULT_TASK_USER_POLICY.denylist : optionList(denied),
    checkedDrivers: checked === undefined ? DEFAULT_TASK_USER_POLICY.checkedDrivers : optionList(checked),
  };
}

/** Why a task of `driver` may not run as `user` under `policy`; null when it may. */
export function disallowedTaskUser(policy: TaskUserPolicy, driver: string, user: string): string | null {
  if (!policy.checkedDrivers.includes(driver)) return null;
  if (!policy.denylist.includes(user)) return null;
  return `running as user ${JSON.stringify(user)} is disallowed`;
}
