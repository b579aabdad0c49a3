/**
 * volume_hook (DESIGN.md "The flow of one volume", step 6): turns the CSI mounts that the alloc's
 * csi_hook published into driver mounts at each `volume_mount.destination`. Problems are the
 * operator's to fix, so they fail the task at once with a message naming task, driver and volume.
 * When the csi_hook publishes a lost volume again, the task runner re-binds these mounts into the
 * running task (TaskRunner.refreshMounts); the TaskMount's hostPath is the published target.
 */
import type { TaskGroup, Task } from "../../../structs/job.js";
import type { CsiMount } from "../hook_resources.js";
import type { TaskDriver, TaskMount } from "../../drivers/driver.js";
import { NonRecoverableError, type PrestartHook, type PrestartResult } from "./hooks.js";

export class VolumeHook implements PrestartHook {
  readonly name = "volumes";

  constructor(
    private readonly task: Task,
    private readonly group: TaskGroup,
    private readonly driver: TaskDriver,
    private readonly hookResources: { getCsiMounts(): Map<string, CsiMount> },
  ) {}

  async prestart(): Promise<PrestartResult | undefined> {
    if (this.task.VolumeMounts.length === 0) return undefined;
    return { mounts: this.mounts() };
  }

  /**
   * The task's volume mounts as they are published now. Also what a task recovered after an agent
   * restart was started with: its alloc's csi_hook ran again first and found (or re-published)
   * each volume at the same, deterministic target path.
   */
  mounts(): TaskMount[] {
    const task = JSON.stringify(this.task.Name);
    const published = this.hookResources.getCsiMounts();
    const mounts: TaskMount[] = [];
    for (const vm of this.task.VolumeMounts) {
      const volume = JSON.stringify(vm.Volume);
      const req = this.group.Volumes[vm.Volume];
      if (!req) {
        throw new NonRecoverableError(
          "ERR_VALIDATION",
          `task ${task}: volume_mount refers to volume ${volume}, which group ${JSON.stringify(this.group.Name)} does not define`,
        );
      }
      if (!this.driver.capabilities().supportsMounts) {
        throw new NonRecoverableError(
          "ERR_VALIDATION",
          `task ${task} uses driver ${JSON.stringify(this.driver.name)}, which does not support volume mounts, so volume ${volume} cannot be mounted; use a driver that supports mounts (e.g. exec)`,
        );
      }
      if (req.Type !== "csi") {
        throw new NonRecoverableError(
          "ERR_VALIDATION",
          `task ${task}: volume ${volume} has type ${JSON.stringify(req.Type)}; only csi volumes are supported`,
        );
      }
      const m = published.get(vm.Volume);
      if (!m) {
        throw new NonRecoverableError(
          "ERR_NOT_FOUND",
          `task ${task}: CSI volume ${volume} (source ${JSON.stringify(req.Source)}) has no published mount on this node`,
        );
      }
      mounts.push({
        hostPath: m.source,
        taskPath: vm.Destination,
        readOnly: vm.ReadOnly || req.ReadOnly || m.readOnly,
        propagation: vm.PropagationMode || "private",
      });
    }
    return mounts;
  }
}
