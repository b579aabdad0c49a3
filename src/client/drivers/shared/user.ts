/**
 * Task.User for the process drivers: the task's command runs with that user's uid, primary gid and
 * supplementary groups, looked up through the host's name service (`getent passwd`, `id -G`, so
 * /etc/passwd, LDAP and the like all work) when the task starts. An unknown user fails that start
 * with an error naming the user; the agent itself is untouched.
 *
 * A user found is remembered for LOOKUP_TTL_MS, and starts asking for the same user meanwhile share
 * one lookup: 100 tasks of one job starting at once run two processes, not two hundred (a change
 * to the user on the host reaches tasks started after that). A failed lookup is never remembered.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BerthError } from "../../../structs/errors.js";
import { findTool } from "./proc.js";

const run = promisify(execFile);

export interface TaskUser {
  name: string;
  uid: number;
  gid: number;
  /** Supplementary groups, the primary gid included (as initgroups gives them). */
  groups: number[];
}

/** Names as the host's tools accept them: no option-like or path-like values reach getent. */
const USER_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/;

/** How long a user found stays remembered (ms). */
export const LOOKUP_TTL_MS = 10_000;

/** Lookups by user name: in flight or found; a lookup that found nothing is dropped when it ends. */
const lookups = new Map<string, { until: number; result: Promise<TaskUser | string> }>();

export async function lookupUser(taskName: string, name: string): Promise<TaskUser> {
  const fail = (why: string) =>
    new BerthError("ERR_DRIVER", `task ${JSON.stringify(taskName)}: user ${JSON.stringify(name)} ${why}`);
  if (!USER_NAME.test(name) || name.length > 256) throw fail("is not a valid user name");
  const now = Date.now();
  let entry = lookups.get(name);
  if (!entry || entry.until <= now) {
    const result = lookUp(name);
    entry = { until: now + LOOKUP_TTL_MS, result };
    lookups.set(name, entry);
    const forget = () => {
      if (lookups.get(name)?.result === result) lookups.delete(name);
    };
    void result.then((r) => typeof r === "string" && forget(), forget);
  }
  const r = await entry.result;
  if (typeof r === "string") throw fail(r);
  // Each caller gets its own object (callers may keep or change theirs).
  return { ...r, groups: [...r.groups] };
}

/** The user, or why it cannot be had (the text after the user's name in the error). */
async function lookUp(name: string): Promise<TaskUser | string> {
  const getent = await findTool("getent");
  const id = await findTool("id");
  if (getent === null || id === null) return "cannot be looked up: getent or id is missing on this host";
  let passwd: string;
  try {
    passwd = (await run(getent, ["passwd", "--", name])).stdout;
  } catch {
    return "does not exist on this node";
  }
  const fields = passwd.split("\n")[0]?.split(":") ?? [];
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (fields[0] !== name || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    return "does not exist on this node";
  }
  let groups: number[];
  try {
    groups = (await run(id, ["-G", "--", name])).stdout
      .trim()
      .split(/\s+/)
      .map(Number)
      .filter((g) => Number.isInteger(g));
  } catch {
    groups = [];
  }
  if (!groups.includes(gid)) groups.unshift(gid);
  return { name, uid, gid, groups };
}
