/**
 * Files at rest that only root may read: state directories 0700, SQLite state files and their
 * `-wal`/`-shm` companions 0600. Modes are set on creation (no window where a file is readable by
 * others: the database file is created 0600 before SQLite opens it, and SQLite gives its WAL and
 * shared-memory files the database file's mode) and tightened when they already exist, so a data
 * dir made by an older berth (0755 dirs, 0644 files) is fixed at the next start.
 */
import fs from "node:fs";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/**
 * The agent's data dir itself: others may traverse it but not list it (Nomad's mode for its alloc
 * dir), so a task running as another user still reaches its own alloc dir below it, while the
 * state dirs inside stay 0700.
 */
export const TRAVERSE_ONLY_DIR_MODE = 0o711;

/** Creates `dir` (and parents) if needed and sets its mode, whatever it was. */
export function ensureDirMode(dir: string, mode: number = PRIVATE_DIR_MODE): void {
  fs.mkdirSync(dir, { recursive: true, mode });
  fs.chmodSync(dir, mode);
}

/**
 * Before SQLite opens `file`: creates it empty with mode 0600 when it does not exist (an empty file
 * is a valid new database), and tightens it and its -wal/-shm files when they do.
 */
export function preparePrivateDbFile(file: string): void {
  fs.closeSync(fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_RDWR, PRIVATE_FILE_MODE));
  tightenDbFiles(file);
}

/** Sets 0600 on the database file and on its -wal and -shm files where they exist. */
export function tightenDbFiles(file: string): void {
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    try {
      fs.chmodSync(f, PRIVATE_FILE_MODE);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
}
