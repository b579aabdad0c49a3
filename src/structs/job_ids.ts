/**
 * Job IDs as the API takes them: a job's own ID (ids.ts checkId), or a launched child's, which
 * Nomad names `<parent>/periodic-<unix seconds>` (periodic.ts) or
 * `<parent>/dispatch-<unix seconds>-<8 hex>` (parameterized.ts) — possibly nested, a dispatched
 * child of a periodic parameterized job launching its own. Only those suffixes may follow a `/`,
 * so a child ID never carries `..` or a free-form segment. Job IDs never become paths on nodes
 * (alloc dirs are named by alloc ID). Pure.
 */
import { validationError } from "./errors.js";
import { checkId, isValidId } from "./ids.js";

const CHILD_SEGMENT = /^(?:periodic-\d{1,12}|dispatch-\d{1,12}-[0-9a-f]{8})$/;
/** A child's ID may be longer than an ID written by hand: a few suffixes on a 128-character ID. */
const MAX_JOB_ID = 256;

export function isValidJobId(value: string): boolean {
  const [head, ...rest] = value.split("/");
  return (
    value.length <= MAX_JOB_ID &&
    head !== undefined &&
    isValidId(head) &&
    rest.every((s) => CHILD_SEGMENT.test(s))
  );
}

/** `value` when it is a job's or a launched child's ID; ERR_VALIDATION naming `field` otherwise. */
export function checkJobId(field: string, value: unknown): string {
  if (typeof value === "string" && value.includes("/")) {
    if (isValidJobId(value)) return value;
    throw validationError(field, `${JSON.stringify(value)} is not a valid job ID`);
  }
  return checkId(field, value);
}
