/**
 * The agent never follows a link (or writes through a FIFO or a hard link) a task planted in its own
 * directories (issue 10): the log files (openLogs) and the task's directories (AllocDir.build, run
 * before each start) on a real file system, as root. Each case plants what a task could, then checks
 * the start-time code refuses with an error naming the path and the host target is untouched.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { AllocDir } from "../../../src/client/allocdir/alloc_dir.js";
import { openLogs } from "../../../src/client/drivers/shared/launch.js";
import { BerthError } from "../../../src/structs/errors.js";
import { tempDir } from "../../helpers/temp_dir.js";

function setup() {
  const base = fs.realpathSync(tempDir("berth-nofollow-"));
  const host = path.join(base, "host"); // stands for a host path outside the data dir
  fs.mkdirSync(host);
  fs.writeFileSync(path.join(host, "passwd"), "root:x:0:0\n");
  const allocDir = new AllocDir(path.join(base, "data"), "a1");
  return { base, host, allocDir };
}

const logPaths = (a: AllocDir) =>
  [path.join(a.taskLogsDir("web"), "web.stdout.0"), path.join(a.taskLogsDir("web"), "web.stderr.0")] as const;

async function refused(p: Promise<unknown>, mentions: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof BerthError, String(err));
    assert.equal(err.code, "ERR_DRIVER");
    assert.ok(err.message.includes(mentions), err.message);
    assert.match(err.message, /does not follow links/);
    return true;
  });
}

function hostUntouched(host: string): void {
  assert.deepEqual(fs.readdirSync(host), ["passwd"]);
  assert.equal(fs.readFileSync(path.join(host, "passwd"), "utf8"), "root:x:0:0\n");
}

test("openLogs: ordinary log files are created and appended to", async () => {
  const { allocDir } = setup();
  await allocDir.build(["web"]);
  const [out, errp] = logPaths(allocDir);
  for (let i = 0; i < 2; i++) {
    const fhs = await openLogs(out, errp);
    await fhs[0]!.write(`line ${i}\n`);
    await Promise.all(fhs.map((f) => f.close()));
  }
  assert.equal(fs.readFileSync(out, "utf8"), "line 0\nline 1\n");
  assert.equal(fs.statSync(errp).isFile(), true);
});

test("openLogs: a log file replaced by a symlink to a host file is refused, the host file untouched", async () => {
  const { host, allocDir } = setup();
  await allocDir.build(["web"]);
  const [out, errp] = logPaths(allocDir);
  fs.symlinkSync(path.join(host, "passwd"), out);
  await refused(openLogs(out, errp), out);
  // A dangling link (to a file the agent would create) the same.
  fs.symlinkSync(path.join(host, "new"), errp);
  fs.rmSync(out);
  await refused(openLogs(out, errp), errp);
  hostUntouched(host);
});

test("openLogs: a logs dir or task dir replaced by a symlink is refused, nothing created outside", async () => {
  const { host, allocDir } = setup();
  await allocDir.build(["web"]);
  const [out, errp] = logPaths(allocDir);
  fs.rmSync(allocDir.taskLogsDir("web"), { recursive: true });
  fs.symlinkSync(host, allocDir.taskLogsDir("web"));
  await refused(openLogs(out, errp), allocDir.taskLogsDir("web"));
  fs.rmSync(allocDir.taskDir("web"), { recursive: true });
  fs.symlinkSync(host, allocDir.taskDir("web"));
  await refused(openLogs(out, errp), allocDir.taskDir("web"));
  hostUntouched(host);
});

test("openLogs: a FIFO or a hard link in place of a log file is refused without blocking", async () => {
  const { base, allocDir } = setup();
  await allocDir.build(["web"]);
  const [out, errp] = logPaths(allocDir);
  execFileSync("mkfifo", [out]);
  await refused(openLogs(out, errp), out);
  fs.rmSync(out);
  const elsewhere = path.join(base, "elsewhere");
  fs.writeFileSync(elsewhere, "keep\n");
  fs.linkSync(elsewhere, out);
  await refused(openLogs(out, errp), out);
  assert.equal(fs.readFileSync(elsewhere, "utf8"), "keep\n");
});

test("AllocDir.build: a task dir's subdir replaced by a symlink fails the build, nothing created outside", async () => {
  const { host, allocDir } = setup();
  await allocDir.build(["web"]);
  for (const sub of ["local", "secrets", "tmp", "logs"]) {
    const dir = path.join(allocDir.taskDir("web"), sub);
    fs.rmSync(dir, { recursive: true });
    fs.symlinkSync(path.join(host, "sub"), dir); // dangling: mkdir through it would create host/sub
    await refused(allocDir.build(["web"]), dir);
    hostUntouched(host);
    fs.rmSync(dir);
    await allocDir.build(["web"]);
    assert.equal(fs.lstatSync(dir).isDirectory(), true);
  }
  assert.equal(fs.statSync(allocDir.taskSecretsDir("web")).mode & 0o777, 0o700);
});
