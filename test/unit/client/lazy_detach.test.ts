/**
 * lazy_detach.ts with real mounts (tmpfs, as root): every mount stacked at a path is detached, a
 * path not mounted is a no-op, and a path is never canonicalised (a symlink at the path is not
 * followed to some other mount).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { test } from "node:test";
import { detachLazily, detachVolumeLazily } from "../../../src/client/csimanager/lazy_detach.js";
import { mountsUnder } from "../../../src/internal/mountinfo.js";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-lazydetach-")));
  try {
    await fn(dir);
  } finally {
    for (const m of await mountsUnder(dir)) execFileSync("umount", ["-l", m]);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const tmpfs = (p: string) => execFileSync("mount", ["-t", "tmpfs", "berth-test", p]);

test("detaches every mount stacked at the path; a path not mounted is a no-op", () =>
  withDir(async (dir) => {
    const target = path.join(dir, "t");
    fs.mkdirSync(target);
    tmpfs(target);
    tmpfs(target);
    assert.equal(await detachLazily(target), 2);
    assert.deepEqual(await mountsUnder(dir), []);
    assert.equal(await detachLazily(target), 0);
    assert.equal(await detachLazily(path.join(dir, "missing")), 0);
  }));

test("a symlink at the path is not a mount point: the mount it points at stays", () =>
  withDir(async (dir) => {
    const real = path.join(dir, "real");
    fs.mkdirSync(real);
    tmpfs(real);
    fs.symlinkSync(real, path.join(dir, "link"));
    assert.equal(await detachLazily(path.join(dir, "link")), 0);
    assert.deepEqual(await mountsUnder(dir), [real]);
  }));

test("detachVolumeLazily: the target, and the staging only when asked", () =>
  withDir(async (dir) => {
    const [target, staging] = [path.join(dir, "target"), path.join(dir, "staging")];
    for (const p of [target, staging]) {
      fs.mkdirSync(p);
      tmpfs(p);
    }
    const paths = { hostTargetPath: target, hostStagingPath: staging };
    assert.deepEqual(await detachVolumeLazily(paths, false), { targetPath: target, stagingPath: "" });
    assert.deepEqual(await mountsUnder(dir), [staging]);
    assert.deepEqual(await detachVolumeLazily(paths, true), { targetPath: target, stagingPath: staging });
    assert.deepEqual(await mountsUnder(dir), []);
  }));
