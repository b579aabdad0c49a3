/**
 * Nomad's dispatch hook: a dispatched job's payload (Job.Payload, base64) written to the task's
 * `dispatch_payload { file }` path under its `local/` dir before the task starts, on every start
 * (idempotent: the same bytes each time). A task without the block, or a job without a payload,
 * writes nothing.
 *
 * The task owns its `local/` dir and could plant links there, so the write walks from the task dir
 * through directory handles without following links (allocdir/no_follow.ts), into a temporary file
 * renamed over the destination: a link at the destination is replaced, never followed.
 */
import { constants } from "node:fs";
import fs from "node:fs/promises";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { openDirNoFollow } from "../../allocdir/no_follow.js";
import type { AllocDir } from "../../allocdir/alloc_dir.js";
import type { PrestartHook, PrestartResult } from "./hooks.js";

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW } = constants;

export class DispatchPayloadHook implements PrestartHook {
  readonly name = "dispatch_payload";

  constructor(
    private readonly allocDir: AllocDir,
    private readonly taskName: string,
    /** The file under `local/`, as validated at submit (relative, never climbing out). */
    private readonly file: string,
    private readonly payloadBase64: string,
  ) {}

  async prestart(): Promise<PrestartResult | undefined> {
    const parts = path.posix
      .normalize(this.file)
      .split("/")
      .filter((p) => p !== "" && p !== ".");
    const name = parts.pop();
    if (!name || parts.includes(".."))
      throw new Error(`dispatch payload file ${JSON.stringify(this.file)} escapes the task's local dir`);
    const dir = await openDirNoFollow(this.allocDir.taskDir(this.taskName), ["local", ...parts], {
      create: true,
    });
    const at = (n: string) => `/proc/self/fd/${dir.fd}/${n}`;
    const tmp = `.${name}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      const fh = await fs.open(at(tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
      try {
        await fh.writeFile(Buffer.from(this.payloadBase64, "base64"));
        await fh.chmod(0o644);
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.rename(at(tmp), at(name));
    } catch (err) {
      await fs.rm(at(tmp), { force: true }).catch(() => undefined);
      throw err;
    } finally {
      await dir.close();
    }
    return undefined;
  }
}
