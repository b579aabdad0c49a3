/**
 * Paths a jobspec gives for the inside of a task (a `volume_mount`'s `destination`, a `csi_plugin`'s
 * `mount_dir` and `stage_publish_base_dir`), checked when the job is submitted. The client later
 * binds host directories at these paths, so a path that climbs out (`/../etc`), names the task's
 * whole root (`/`) or carries characters the mount tooling cannot take would otherwise be found only
 * when the task starts — after the scheduler placed it and its CSI volumes were claimed.
 *
 * Nomad checks these only in its drivers, at task start; berth refuses them at submit with the
 * rules its mount plan (client/drivers/exec/mount_plan.ts validateTaskPath) applies at start, so a
 * job that is accepted never fails there for its paths. Interpolations (`${NOMAD_ALLOC_ID}`) are
 * allowed inside a segment: the client expands them and checks the result again before mounting.
 */
import { validationError } from "./errors.js";

/** One segment's characters (mount_plan.ts's set), once `${…}` interpolations are set aside. */
const SEGMENT_CHARS = /^[A-Za-z0-9_.@+=:,-]+$/;
const INTERPOLATION = /\$\{[A-Za-z0-9_.-]+\}/g;
/** A task path longer than Linux's PATH_MAX cannot be mounted at. */
const MAX_TASK_PATH_BYTES = 4095;

/**
 * Returns `value` when it is an absolute, normalised path inside the task other than `/`; throws an
 * ERR_VALIDATION naming `field` and the problem otherwise. The message quotes the value with
 * JSON.stringify, so control characters are escaped, never echoed raw.
 */
export function checkTaskPath(field: string, value: string): string {
  const bad = (why: string) => validationError(field, `${why}, got ${JSON.stringify(value)}`);
  if (value === "") throw validationError(field, "is required");
  if (hasControlChar(value)) throw bad("must not contain NUL or control characters");
  if (!value.startsWith("/")) throw bad("must be an absolute path inside the task (start with '/')");
  if (Buffer.byteLength(value) > MAX_TASK_PATH_BYTES) {
    throw validationError(field, `must be at most ${MAX_TASK_PATH_BYTES} bytes`);
  }
  const segments = value.slice(1).replace(/\/$/, "").split("/");
  if (segments.length === 1 && segments[0] === "") {
    throw bad("must not be '/': a mount there would replace the task's whole file system");
  }
  for (const seg of segments) {
    if (seg === "..") throw bad("must not contain '..' (a path may not climb out of the task's root)");
    if (seg === ".") throw bad("must not contain '.' segments");
    if (seg === "") throw bad("must not contain empty segments ('//')");
    const plain = seg.replace(INTERPOLATION, "x");
    if (!SEGMENT_CHARS.test(plain)) {
      throw bad("may only contain letters, digits, _ . @ + = : , - and ${…} interpolations between '/'");
    }
  }
  return value;
}

/** NUL, C0 controls, DEL and C1 controls (what a terminal or a C string would act on). */
export function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}
