/** Builds the alloc's directory tree before its tasks start (idempotent). */
import type { AllocDir } from "../allocdir/alloc_dir.js";
import type { PrerunHook } from "./hooks.js";

export class AllocDirHook implements PrerunHook {
  readonly name = "alloc_dir";

  constructor(
    private readonly allocDir: AllocDir,
    private readonly tasks: string[],
  ) {}

  async prerun(): Promise<void> {
    await this.allocDir.build(this.tasks);
  }
}
