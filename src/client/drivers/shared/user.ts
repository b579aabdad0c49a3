/**
 * Task.User for the process drivers: the task's command runs with that user's uid, primary gid and
 * supplementary groups, looked up through the host's name service (`getent passwd`, `id -G`, so
 * /etc/passwd, LDAP and the like all work) when the task starts. An unknown user fails that start
 * with an error naming the user; the agent itself is untouched.
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

export async function lookupUser(taskName: string, name: string): Promise<TaskUser> {
  const fail = (why: string) =>
    new BerthError("ERR_DRIVER", `task ${JSON.stringify(taskName)}: user ${JSON.stringify(name)} ${why}`);
  if (!USER_NAME.test(name) || name.length > 256) throw fail("is not a valid user name");
  const getent = await findTool("getent");
  const id = await findTool("id");
  if (getent === null || id === null) throw fail("cannot be looked up: getent or id is missing on this host");
  let passwd: string;
  try {
    passwd = (await run(getent, ["passwd", "--", name])).stdout;
  } catch {
    throw fail("does not exist on this node");
  }
  const fields = passwd.split("\n")[0]?.split(":") ?? [];
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (fields[0] !== name || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw fail("does not exist on this node");
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
