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
 * A path may also start with one of the task's directories, as Nomad's jobspecs write them
 * (`${NOMAD_TASK_DIR}/data`, `${NOMAD_ALLOC_DIR}/…`, `${NOMAD_SECRETS_DIR}/…`): inside the task they
 * are `/local`, `/alloc` and `/secrets`, and are checked as those.
 */
import { posix } from "node:path";
import { validationError } from "./errors.js";

/** The task's directories as a task sees them (task_env.ts nomadEnv with the task's view). */
const TASK_DIR_VARS: Record<string, string> = {
  "${NOMAD_TASK_DIR}": "/local",
  "${NOMAD_ALLOC_DIR}": "/alloc",
  "${NOMAD_SECRETS_DIR}": "/secrets",
};

/** `value` with a leading task-directory interpolation replaced by the path it names in the task. */
function inTaskView(value: string): string {
  for (const [v, dir] of Object.entries(TASK_DIR_VARS)) {
    if (value === v || value.startsWith(`${v}/`)) return dir + value.slice(v.length);
  }
  return value;
}

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
export function checkTaskPath(field: string, written: string): string {
  const bad = (why: string) => validationError(field, `${why}, got ${JSON.stringify(written)}`);
  if (written === "") throw validationError(field, "is required");
  const value = inTaskView(written);
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
  return written;
}

/**
 * A template's destination: relative to the task's directory (`local/app.conf`), or under a task
 * directory interpolation; as Nomad's `Template.Validate` it may leave the task's directory but not
 * the alloc's (`../alloc/x` is allowed, `../../x` is not).
 */
export function checkTemplateDest(field: string, value: string): string {
  if (hasControlChar(value)) {
    throw validationError(field, `must not contain NUL or control characters, got ${JSON.stringify(value)}`);
  }
  const rel = posix.relative("alloc", posix.join("alloc", "task", value));
  if (rel === ".." || rel.startsWith("../"))
    throw validationError(field, "destination escapes allocation directory");
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
