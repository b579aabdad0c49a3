/**
 * Mount refresh: when the alloc's csi_hook publishes a lost volume again, the running task's mounts
 * of that host path are re-bound by the driver (`refreshMount`) wherever the task mounts them,
 * without a restart. TaskRunner.refreshMounts decides which task and mounts; this does the binding.
 */
import type { Logger } from "../../../internal/log.js";
import { asBerthError, BerthError } from "../../../structs/errors.js";
import type { TaskDriver, TaskHandle, TaskMount } from "../../drivers/driver.js";

export interface MountRefresh {
  driver: TaskDriver;
  handle: TaskHandle;
  /** The running task's mounts of the host path that was mounted again. */
  mounts: TaskMount[];
  log: Logger;
  /** True once the task exited or is being stopped: its next start binds the new mount anyway. */
  gone: () => boolean;
  emit: (type: string, message: string, details: Record<string, string>) => void;
}

/**
 * Re-binds each mount into the running task. Never throws: a failure becomes a "Volume Refresh
 * Failed" event and the answer false; true when every mount was refreshed or the task is gone.
 */
export async function refreshTaskMounts({
  driver,
  handle,
  mounts,
  log,
  gone,
  emit,
}: MountRefresh): Promise<boolean> {
  let refreshed = true;
  for (const m of mounts) {
    try {
      if (!driver.refreshMount) {
        throw new BerthError(
          "ERR_DRIVER",
          `driver ${JSON.stringify(driver.name)} cannot refresh the mounts of a running task`,
        );
      }
      await driver.refreshMount(handle, m);
      log.info("volume mount refreshed in the running task", { taskPath: m.taskPath });
    } catch (err) {
      // The task exited or is being stopped meanwhile: a next start binds the new mount anyway.
      if (gone()) return true;
      refreshed = false;
      const reason = asBerthError(err).message;
      log.warn("refreshing a volume mount in the running task failed", {
        taskPath: m.taskPath,
        reason,
      });
      emit(
        "Volume Refresh Failed",
        `the volume mounted at ${m.taskPath} was mounted again on the host, but the running task still has the old mount: ${reason}; restart the task to get the new one`,
        { mount: m.taskPath, error: reason },
      );
    }
  }
  return refreshed;
}
