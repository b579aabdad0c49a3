/**
 * A minimal FUSE file system for tests, run as its own process (test/helpers/fuse_server.ts starts
 * it): `node fuse_daemon.js MOUNTPOINT [DIR/SUBDIR ...]`. It opens /dev/fuse, mounts it at
 * MOUNTPOINT (`mount -i -t fuse -o fd=3,rootmode=40000,user_id=0,group_id=0`), and serves a
 * read-only tree of empty directories (the root and the given relative paths): INIT, LOOKUP,
 * GETATTR, OPENDIR/READDIR/RELEASEDIR, STATFS, ACCESS; anything else ENOSYS. Attributes and entries
 * are never cached (valid 0), so every stat reaches this process.
 *
 * SIGUSR1 makes it stop answering: it keeps reading requests and never replies, so whoever asks
 * waits in the kernel in D state (a request already read cannot be interrupted), as on a dead NFS
 * server. Only an abort of the connection (/sys/fs/fuse/connections/N/abort) frees them.
 * Prints "ready" once INIT was answered.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";

const OP = {
  LOOKUP: 1,
  FORGET: 2,
  GETATTR: 3,
  STATFS: 17,
  INIT: 26,
  OPENDIR: 27,
  READDIR: 28,
  RELEASEDIR: 29,
  ACCESS: 34,
  INTERRUPT: 36,
  DESTROY: 38,
  BATCH_FORGET: 42,
} as const;
const ENOENT = 2;
const ENOSYS = 38;
const IN_HEADER = 40;

const [mountPoint, ...paths] = process.argv.slice(2);
if (!mountPoint) {
  // `node --test dist/test/` loads every file, this one too, with no arguments: nothing to serve.
  process.stderr.write("usage: fuse_daemon MOUNTPOINT [PATH ...]\n");
  process.exit(process.env.NODE_TEST_CONTEXT ? 0 : 2);
}

/** nodeid → its children by name; nodeid 1 is the root. */
const children = new Map<bigint, Map<string, bigint>>([[1n, new Map()]]);
let nextId = 2n;
for (const p of paths) {
  let at = 1n;
  for (const name of p.split("/").filter(Boolean)) {
    const kids = children.get(at)!;
    let id = kids.get(name);
    if (id === undefined) {
      id = nextId++;
      kids.set(name, id);
      children.set(id, new Map());
    }
    at = id;
  }
}

let hung = false;
process.on("SIGUSR1", () => {
  hung = true;
});

const fd = fs.openSync("/dev/fuse", "r+");

function reply(unique: bigint, error: number, payload: Buffer = Buffer.alloc(0)): void {
  const h = Buffer.alloc(16);
  h.writeUInt32LE(16 + payload.length, 0);
  h.writeInt32LE(-error, 4);
  h.writeBigUInt64LE(unique, 8);
  try {
    fs.writeSync(fd, Buffer.concat([h, payload]));
  } catch {
    // The request was interrupted or the connection aborted: nothing to answer.
  }
}

/** struct fuse_attr of a directory (88 bytes). */
function dirAttr(ino: bigint): Buffer {
  const a = Buffer.alloc(88);
  a.writeBigUInt64LE(ino, 0);
  a.writeUInt32LE(0o40755, 60);
  a.writeUInt32LE(2, 64);
  a.writeUInt32LE(4096, 80);
  return a;
}

function handle(buf: Buffer): void {
  const opcode = buf.readUInt32LE(4);
  const unique = buf.readBigUInt64LE(8);
  const nodeid = buf.readBigUInt64LE(16);
  if (opcode === OP.FORGET || opcode === OP.BATCH_FORGET || opcode === OP.INTERRUPT) return;
  if (hung) return;
  const body = buf.subarray(IN_HEADER);
  switch (opcode) {
    case OP.INIT: {
      const out = Buffer.alloc(64);
      out.writeUInt32LE(7, 0);
      out.writeUInt32LE(Math.min(body.readUInt32LE(4), 31), 4);
      out.writeUInt32LE(body.readUInt32LE(8), 8);
      out.writeUInt16LE(16, 16);
      out.writeUInt16LE(12, 18);
      out.writeUInt32LE(65536, 20);
      out.writeUInt32LE(1, 24);
      reply(unique, 0, out);
      process.stdout.write("ready\n");
      return;
    }
    case OP.LOOKUP: {
      const name = body.toString("utf8", 0, body.indexOf(0));
      const id = children.get(nodeid)?.get(name);
      if (id === undefined) return reply(unique, ENOENT);
      const out = Buffer.alloc(40);
      out.writeBigUInt64LE(id, 0);
      return reply(unique, 0, Buffer.concat([out, dirAttr(id)]));
    }
    case OP.GETATTR:
      return reply(unique, 0, Buffer.concat([Buffer.alloc(16), dirAttr(nodeid)]));
    case OP.OPENDIR:
      return reply(unique, 0, Buffer.alloc(16));
    case OP.READDIR:
    case OP.RELEASEDIR:
    case OP.ACCESS:
    case OP.DESTROY:
      return reply(unique, 0);
    case OP.STATFS: {
      const st = Buffer.alloc(80);
      st.writeUInt32LE(4096, 40);
      st.writeUInt32LE(255, 44);
      st.writeUInt32LE(4096, 48);
      return reply(unique, 0, st);
    }
    default:
      return reply(unique, ENOSYS);
  }
}

const readBuf = Buffer.alloc(1 << 20);
function readLoop(): void {
  fs.read(fd, readBuf, 0, readBuf.length, null, (err, n) => {
    if (err) {
      // ENODEV: unmounted or aborted; the file system is gone.
      process.exit(0);
    }
    handle(Buffer.from(readBuf.subarray(0, n)));
    readLoop();
  });
}

const opts = "fd=3,rootmode=40000,user_id=0,group_id=0";
const mount = spawn("mount", ["-i", "-t", "fuse", "-o", opts, "berth-test-fuse", mountPoint], {
  stdio: ["ignore", "inherit", "inherit", fd],
});
mount.on("close", (code) => {
  if (code !== 0) {
    process.stderr.write(`mount exited ${String(code)}\n`);
    process.exit(1);
  }
  // The device answers reads only once it is mounted; INIT is queued by the mount.
  readLoop();
});
