/**
 * volume_hook (docs/design.md "The flow of one volume", step 6): turns the CSI mounts that the alloc's
 * csi_hook published, and the node's host volumes (`volume { type = "host" }`, the client config's
 * `host_volume` blocks), into driver mounts at each `volume_mount.destination` (interpolated, as
 * Nomad does). A host volume is read-only in the task when the volume_mount, the volume request or
 * the client config says so. Problems are the
 * operator's to fix, so they fail the task at once with a message naming task, driver and volume.
 * When the csi_hook publishes a lost volume again, the task runner re-binds these mounts into the
 * running task (TaskRunner.refreshMounts); the TaskMount's hostPath is the published target.
 */
import type { TaskGroup, Task, VolumeRequest } from "../../../structs/job.js";
import type { CsiMount } from "../hook_resources.js";
import type { TaskDriver, TaskMount } from "../../drivers/driver.js";
import { ownEntry, type ClientHostVolumeConfig } from "../../../structs/node.js";
import { NonRecoverableError, type PrestartHook, type PrestartResult } from "./hooks.js";

export class VolumeHook implements PrestartHook {
  readonly name = "volumes";

  constructor(
    private readonly task: Task,
    private readonly group: TaskGroup,
    private readonly driver: TaskDriver,
    private readonly hookResources: { getCsiMounts(): Map<string, CsiMount> },
    private readonly hostVolumes: Record<string, ClientHostVolumeConfig> = {},
    /** Expands `${...}` in a destination (task_env.ts); identity when not given. */
    private readonly interpolate: (text: string) => string = (t) => t,
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
      const destination = this.interpolate(vm.Destination);
      const source =
        req.Type === "host" ? this.hostSource(req, volume) : this.csiSource(req, vm.Volume, published);
      mounts.push({
        hostPath: source.hostPath,
        taskPath: destination,
        readOnly: vm.ReadOnly || req.ReadOnly || source.readOnly,
        propagation: vm.PropagationMode || "private",
      });
    }
    return mounts;
  }

  /** A host volume's path on this node; it must be configured, and writable if the request writes. */
  private hostSource(req: VolumeRequest, volume: string): { hostPath: string; readOnly: boolean } {
    const task = JSON.stringify(this.task.Name);
    const hv = ownEntry(this.hostVolumes, req.Source);
    if (!hv) {
      // The scheduler placed the alloc here only if the node had it: the agent's config changed.
      throw new NonRecoverableError(
        "ERR_NOT_FOUND",
        `task ${task}: host volume ${JSON.stringify(req.Source)} (volume ${volume}) is not configured on this node`,
      );
    }
    if (hv.ReadOnly && !req.ReadOnly) {
      throw new NonRecoverableError(
        "ERR_VALIDATION",
        `task ${task}: host volume ${JSON.stringify(req.Source)} is read-only on this node, but volume ${volume} asks for read-write; set read_only = true`,
      );
    }
    return { hostPath: hv.Path, readOnly: hv.ReadOnly };
  }

  /** A CSI volume's published target (`name`: the group's volume name); it must be a csi volume published here. */
  private csiSource(
    req: VolumeRequest,
    name: string,
    published: Map<string, CsiMount>,
  ): { hostPath: string; readOnly: boolean } {
    const task = JSON.stringify(this.task.Name);
    const volume = JSON.stringify(name);
    if (req.Type !== "csi") {
      throw new NonRecoverableError(
        "ERR_VALIDATION",
        `task ${task}: volume ${volume} has type ${JSON.stringify(req.Type)}; only csi and host volumes are supported`,
      );
    }
    const m = published.get(name);
    if (!m) {
      throw new NonRecoverableError(
        "ERR_NOT_FOUND",
        `task ${task}: CSI volume ${volume} (source ${JSON.stringify(req.Source)}) has no published mount on this node`,
      );
    }
    return { hostPath: m.source, readOnly: m.readOnly };
  }
}
