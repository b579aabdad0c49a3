/**
 * The on-disk layout of one allocation on a node:
 *   <dataDir>/alloc/<allocId>/alloc/            shared by the alloc's tasks (task path /alloc)
 *   <dataDir>/alloc/<allocId>/<task>/           the task's root (exec tasks are chrooted here)
 *   <dataDir>/alloc/<allocId>/<task>/local/     task path /local
 *   <dataDir>/alloc/<allocId>/<task>/secrets/   task path /secrets (mode 0700)
 *   <dataDir>/alloc/<allocId>/<task>/tmp/       task path /tmp
 *   <dataDir>/alloc/<allocId>/<task>/logs/      stdout/stderr of the task (task path /logs)
 * Every path is built with safeJoin, so alloc IDs and task names cannot escape the data dir, and
 * nothing below the alloc dir is created or opened through a link (no_follow.ts).
 */
import fs from "node:fs/promises";
import { mountsUnder } from "../../internal/mountinfo.js";
import { safeJoin } from "../../structs/ids.js";
import { mkdirNoFollow } from "./no_follow.js";

export class AllocDir {
  readonly root: string;

  constructor(
    readonly dataDir: string,
    readonly allocId: string,
  ) {
    this.root = safeJoin(dataDir, "alloc", allocId);
  }

  get sharedDir(): string {
    return safeJoin(this.root, "alloc");
  }

  taskDir(task: string): string {
    if (task === "alloc") throw new Error('task name "alloc" is reserved');
    return safeJoin(this.root, task);
  }

  taskLocalDir(task: string): string {
    return safeJoin(this.taskDir(task), "local");
  }

  taskSecretsDir(task: string): string {
    return safeJoin(this.taskDir(task), "secrets");
  }

  taskTmpDir(task: string): string {
    return safeJoin(this.taskDir(task), "tmp");
  }

  taskLogsDir(task: string): string {
    return safeJoin(this.taskDir(task), "logs");
  }

  /**
   * Creates the directories; idempotent. Runs again before each start of a task, after the task may
   * have replaced any of its directories with a symlink: below the alloc dir nothing is followed
   * (no_follow.ts), so a planted link fails the start instead of making the agent create or chmod
   * directories wherever it points.
   */
  async build(tasks: string[]): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    // Shared by the alloc's tasks, whatever users they run as (exec's default is nobody): open to
    // all as Nomad's, sticky so one task's user cannot remove another's files.
    await mkdirNoFollow(this.root, ["alloc"], 0o1777);
    for (const t of tasks) {
      this.taskDir(t); // refuses the reserved name "alloc" and names safeJoin rejects
      await mkdirNoFollow(this.root, [t, "local"]);
      await mkdirNoFollow(this.root, [t, "secrets"], 0o700);
      await mkdirNoFollow(this.root, [t, "tmp"], 0o1777);
      await mkdirNoFollow(this.root, [t, "logs"]);
    }
  }

  /**
   * Removes the alloc's directory. The caller must have stopped every task and released every
   * volume first: removal refuses to cross mount points (see removeTreeNoMounts), so a forgotten
   * mount fails loudly instead of deleting a volume's data.
   */
  async destroy(): Promise<void> {
    await removeTreeNoMounts(this.root);
  }
}

/** rm -rf that refuses to run while anything is mounted below `dir`. */
export async function removeTreeNoMounts(dir: string): Promise<void> {
  const mounted = await mountsUnder(dir);
  if (mounted.length > 0) {
    throw new Error(`refusing to remove ${dir}: still mounted: ${mounted.join(", ")}`);
  }
  await fs.rm(dir, { recursive: true, force: true });
}
