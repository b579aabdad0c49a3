/**
 * The previous release, kept in the repository as its compiled tree
 * (test/fixtures/release-<version>/berth-<version>.tgz), unpacked for upgrade tests. It runs on this
 * repo's dependencies (the same package.json ranges), copied into its package dir — hard links
 * where the file system allows — so that exec tasks, which see the launcher's package dir but not
 * this checkout, resolve them too (a symlink would point outside).
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { REPO_ROOT } from "./agent_process.js";

export const PREVIOUS_RELEASE = "0.1.0";

/** Unpacks the previous release under `dir/release`; returns its `berth` launcher. */
export function unpackPreviousRelease(dir: string): string {
  const release = path.join(dir, "release");
  fs.mkdirSync(release);
  execFileSync("tar", [
    "-xzf",
    path.join(REPO_ROOT, "test", "fixtures", `release-${PREVIOUS_RELEASE}`, `berth-${PREVIOUS_RELEASE}.tgz`),
    "-C",
    release,
  ]);
  const from = path.join(REPO_ROOT, "node_modules");
  const to = path.join(release, "package", "node_modules");
  try {
    execFileSync("cp", ["-al", from, to], { stdio: "ignore" });
  } catch {
    fs.rmSync(to, { recursive: true, force: true });
    execFileSync("cp", ["-a", from, to]);
  }
  return path.join(release, "package", "bin", "berth");
}

/** The state schema version the release whose launcher is `bin` writes. */
export async function previousReleaseSchema(bin: string): Promise<number> {
  const schema = path.join(path.dirname(bin), "..", "dist", "src", "server", "state", "engine", "schema.js");
  const { migrate } = (await import(pathToFileURL(schema).href)) as {
    migrate: (db: Database.Database) => void;
  };
  const db = new Database(":memory:");
  try {
    migrate(db);
    return db.pragma("user_version", { simple: true }) as number;
  } finally {
    db.close();
  }
}
