/** Builds the task's directories (idempotent) before each start. */
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import type { PrestartHook, PrestartResult, TaskLifecycle } from "./hooks.js";

export class TaskDirHook implements PrestartHook {
  readonly name = "task_dir";
  private built = false;

  constructor(
    private readonly allocDir: AllocDir,
    private readonly taskName: string,
    private readonly lifecycle: TaskLifecycle,
  ) {}

  async prestart(): Promise<PrestartResult | undefined> {
    if (!this.built) this.lifecycle.emitEvent("Task Setup", "Building Task Directory");
    await this.allocDir.build([this.taskName]);
    this.built = true;
    return undefined;
  }
}
