/**
 * The ownership walk (internal/group_ownership.ts) on a real directory tree (the tests run as
 * root): group and bits applied below the root, symlinks not followed, and on_root_mismatch
 * skipping a second walk — a file whose group was changed after the first walk is left alone.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { applyGroupOwnership } from "../../../src/internal/group_ownership.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-gown-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const GID = 4242;
const OTHER = 4343;

function tree(name: string): string {
  const root = path.join(dir, name);
  fs.mkdirSync(path.join(root, "sub"), { recursive: true, mode: 0o755 });
  fs.chmodSync(root, 0o755);
  fs.writeFileSync(path.join(root, "sub", "data"), "x", { mode: 0o644 });
  fs.writeFileSync(path.join(root, "run.sh"), "#!/bin/sh", { mode: 0o744 });
  fs.writeFileSync(path.join(dir, `${name}-outside`), "o", { mode: 0o600 });
  fs.symlinkSync(path.join(dir, `${name}-outside`), path.join(root, "link"));
  return root;
}

const gidOf = (p: string) => fs.lstatSync(p).gid;
const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777;

test(
  "every entry gets the group; directories setgid g+rwx, files g+rw(x)",
  { skip: process.getuid?.() !== 0 },
  async () => {
    const root = tree("a");
    const res = await applyGroupOwnership(root, GID, "always");
    assert.equal(res.walked, true);
    for (const p of [root, path.join(root, "sub"), path.join(root, "sub", "data"), path.join(root, "run.sh")])
      assert.equal(gidOf(p), GID, p);
    assert.equal(modeOf(root), 0o2775);
    assert.equal(modeOf(path.join(root, "sub")), 0o2775);
    assert.equal(modeOf(path.join(root, "sub", "data")), 0o664);
    assert.equal(modeOf(path.join(root, "run.sh")), 0o774);
    assert.equal(gidOf(path.join(root, "link")), GID, "the link itself");
    assert.notEqual(gidOf(path.join(dir, "a-outside")), GID, "its target, outside the volume, untouched");
    assert.equal(modeOf(path.join(dir, "a-outside")), 0o600);
  },
);

test(
  "on_root_mismatch skips a second walk; always walks again",
  { skip: process.getuid?.() !== 0 },
  async () => {
    const root = tree("b");
    assert.equal((await applyGroupOwnership(root, GID, "on_root_mismatch")).walked, true, "root mismatched");
    const data = path.join(root, "sub", "data");
    fs.chownSync(data, 0, OTHER);
    const second = await applyGroupOwnership(root, GID, "on_root_mismatch");
    assert.deepEqual(second, { walked: false, changed: 0 });
    assert.equal(gidOf(data), OTHER, "left alone: the root already had the group");
    const third = await applyGroupOwnership(root, GID, "always");
    assert.equal(third.walked, true);
    assert.equal(gidOf(data), GID, "always walks again");
  },
);
