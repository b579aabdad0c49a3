/**
 * ClientFS.List / Stat / ReadAt (client_alloc_fs.ts) through the registered handlers, on a real
 * alloc dir in a temp data dir: Nomad's AllocFileInfo shapes, and confinement — a path climbing
 * above the alloc dir, a symlink anywhere on the way (also one to a directory inside the alloc
 * dir: links are never followed), a FIFO and a secrets file are refused; an alloc with no runner is
 * read from the dir it left; an alloc the node never had is 404. The path rules alone are pure
 * (fs_path.ts) and tested first.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { allocPathParts, isSecretsPath } from "../../../src/client/allocdir/fs_path.js";
import type { AllocAccess } from "../../../src/client/rpc/alloc_peer.js";
import { registerAllocFsHandlers } from "../../../src/client/rpc/client_alloc_fs.js";
import { asBerthError } from "../../../src/structs/errors.js";
import type { ClientMethods } from "../../../src/structs/rpc.js";

const LIVE = "11111111-1111-4111-8111-111111111111";
const LEFT = "22222222-2222-4222-8222-222222222222";
const NEVER = "33333333-3333-4333-8333-333333333333";

type Method = "ClientFS.List" | "ClientFS.Stat" | "ClientFS.ReadAt";
let dir: string;
let allocsDir: string;
const handlers = new Map<string, (p: unknown, s: AbortSignal) => Promise<unknown>>();

function call<M extends Method>(method: M, req: ClientMethods[M][0]): Promise<ClientMethods[M][1]> {
  return handlers.get(method)!(req, new AbortController().signal) as Promise<ClientMethods[M][1]>;
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    return asBerthError(err).code;
  }
}

const read = async (AllocID: string, Path: string, Offset = 0, Limit = 1 << 20) =>
  Buffer.from((await call("ClientFS.ReadAt", { AllocID, Path, Offset, Limit })).Data, "base64").toString();

describe("alloc fs paths (pure)", () => {
  it("resolves . and .. lexically and refuses climbing above the alloc dir", () => {
    assert.deepEqual(allocPathParts("/"), []);
    assert.deepEqual(allocPathParts(""), []);
    assert.deepEqual(allocPathParts("./web//local/./x"), ["web", "local", "x"]);
    assert.deepEqual(allocPathParts("web/../alloc/data"), ["alloc", "data"]);
    for (const bad of ["..", "../x", "/..", "web/../../x", "a/b/../../../c", "x\0y"])
      assert.equal(asBerthError(catchIt(() => allocPathParts(bad))).code, "ERR_VALIDATION", bad);
  });
  it("knows a task's secrets dir (any case), not the shared alloc dir's", () => {
    assert.equal(isSecretsPath(["web", "secrets", "token"]), true);
    assert.equal(isSecretsPath(["web", "SeCrEtS"]), true);
    assert.equal(isSecretsPath(["alloc", "secrets"]), false);
    assert.equal(isSecretsPath(["web", "local", "secrets"]), false);
    assert.equal(isSecretsPath(["web"]), false);
  });
});

function catchIt(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("ClientFS handlers", () => {
  before(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-allocfs-")));
    allocsDir = path.join(dir, "alloc");
    for (const id of [LIVE, LEFT]) {
      const root = path.join(allocsDir, id);
      fs.mkdirSync(path.join(root, "alloc"), { recursive: true });
      fs.mkdirSync(path.join(root, "web", "local"), { recursive: true });
      fs.mkdirSync(path.join(root, "web", "secrets"), { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(root, "alloc", "data.json"), '{"a": 1}\n');
      fs.writeFileSync(path.join(root, "web", "local", "notes.txt"), "hello world\n");
      fs.writeFileSync(path.join(root, "web", "secrets", "token"), "s3cret\n");
      fs.chmodSync(path.join(root, "alloc"), 0o1777);
    }
    const live = path.join(allocsDir, LIVE);
    fs.writeFileSync(path.join(dir, "outside.txt"), "host file\n");
    fs.symlinkSync(path.join(dir), path.join(live, "web", "local", "up"));
    fs.symlinkSync(path.join(dir, "outside.txt"), path.join(live, "web", "local", "host.txt"));
    // A link to a directory inside the alloc dir is refused too: nothing is followed.
    fs.symlinkSync("../../alloc", path.join(live, "web", "local", "shared"));
    execFileSync("mkfifo", [path.join(live, "web", "local", "pipe")]);
    const allocs = (id: string): AllocAccess | undefined =>
      id === LIVE
        ? { root: path.join(allocsDir, id), taskNames: () => ["web"], task: () => undefined }
        : undefined;
    registerAllocFsHandlers({ handle: (m, h) => handlers.set(m, h as never) }, allocs, allocsDir);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("lists a dir sorted by name, in Nomad's AllocFileInfo shape, links shown but not followed", async () => {
    const root = await call("ClientFS.List", { AllocID: LIVE, Path: "/" });
    assert.deepEqual(
      root.map((f) => [f.Name, f.IsDir, f.FileMode]),
      [
        ["alloc", true, "dtrwxrwxrwx"],
        ["web", true, "drwxr-xr-x"],
      ],
    );
    const local = await call("ClientFS.List", { AllocID: LIVE, Path: "web/local" });
    assert.deepEqual(
      local.map((f) => `${f.FileMode.slice(0, 1)} ${f.Name}`),
      ["L host.txt", "- notes.txt", "p pipe", "L shared", "L up"],
    );
    const notes = local.find((f) => f.Name === "notes.txt")!;
    assert.equal(notes.Size, 12);
    assert.equal(notes.ContentType, "");
    assert.match(notes.ModTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
  });

  it("stats an entry with its content type; the alloc dir itself by its ID", async () => {
    const json = await call("ClientFS.Stat", { AllocID: LIVE, Path: "alloc/data.json" });
    assert.deepEqual(
      [json.Name, json.IsDir, json.Size, json.ContentType],
      ["data.json", false, 9, "application/json"],
    );
    const text = await call("ClientFS.Stat", { AllocID: LIVE, Path: "/web/local/notes.txt" });
    assert.equal(text.ContentType, "text/plain; charset=utf-8");
    const root = await call("ClientFS.Stat", { AllocID: LIVE, Path: "/" });
    assert.deepEqual([root.Name, root.IsDir], [LIVE, true]);
    const link = await call("ClientFS.Stat", { AllocID: LIVE, Path: "web/local/up" });
    assert.equal(link.FileMode, "Lrwxrwxrwx");
    assert.equal(link.IsDir, false, "the link itself, not its target");
  });

  it("reads a window of a file; an alloc with no runner from the dir it left", async () => {
    assert.equal(await read(LIVE, "web/local/notes.txt"), "hello world\n");
    assert.equal(await read(LIVE, "web/local/notes.txt", 6, 5), "world");
    assert.equal(await read(LIVE, "web/local/notes.txt", 100), "");
    assert.equal(await read(LEFT, "alloc/data.json"), '{"a": 1}\n');
  });

  it("refuses links, special files, escapes and secrets; unknown allocs and files are 404", async () => {
    assert.equal(await code(read(LIVE, "web/local/up/outside.txt")), "ERR_VALIDATION", "through a dir link");
    assert.equal(await code(read(LIVE, "web/local/host.txt")), "ERR_VALIDATION", "a file link");
    assert.equal(await code(read(LIVE, "web/local/shared/data.json")), "ERR_VALIDATION", "a link inside");
    assert.equal(
      await code(call("ClientFS.List", { AllocID: LIVE, Path: "web/local/up" })),
      "ERR_VALIDATION",
    );
    assert.equal(
      await code(call("ClientFS.Stat", { AllocID: LIVE, Path: "web/local/up/outside.txt" })),
      "ERR_VALIDATION",
    );
    assert.equal(
      await code(read(LIVE, "web/local/pipe")),
      "ERR_VALIDATION",
      "a FIFO is never opened to block",
    );
    assert.equal(await code(read(LIVE, "../../outside.txt")), "ERR_VALIDATION");
    assert.equal(await code(call("ClientFS.List", { AllocID: LIVE, Path: ".." })), "ERR_VALIDATION");
    assert.equal(await code(read(LIVE, "web/secrets/token")), "ERR_PERMISSION_DENIED");
    assert.equal(await code(read(LIVE, "web/local")), "ERR_VALIDATION", "a directory is not read");
    assert.equal(await code(read(LIVE, "/")), "ERR_VALIDATION");
    assert.equal(await code(read(LIVE, "web/local/missing")), "ERR_NOT_FOUND");
    assert.equal(await code(call("ClientFS.List", { AllocID: NEVER, Path: "/" })), "ERR_NOT_FOUND");
    assert.equal(await code(call("ClientFS.List", { AllocID: "../alloc", Path: "/" })), "ERR_NOT_FOUND");
  });
});
