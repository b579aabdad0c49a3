/** The commit feed's conformance suite against the SQLite store on a real file in a temp dir. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { SqliteStateStore } from "../../../src/server/state/local/sqlite_store.js";
import { runCommitFeedConformance } from "../../conformance/commit_feed.js";

runCommitFeedConformance("sqlite (file)", async ({ now }) => {
  const dir = mkdtempSync(path.join(tmpdir(), "berth-feed-"));
  return {
    store: new SqliteStateStore(dir, { now }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});
