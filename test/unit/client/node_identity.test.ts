/** The node agent's secret in its data dir: made once, kept, readable by root only. */
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { loadOrCreateNodeSecret } from "../../../src/client/node_identity.js";
import { tempDir } from "../../helpers/temp_dir.js";

test("the node secret is a UUID made on first start, kept 0600 and the same on every start", async () => {
  const dir = path.join(tempDir("berth-secret-"), "client");
  const first = await loadOrCreateNodeSecret(dir);
  assert.match(first, /^[0-9a-f-]{36}$/);
  const file = path.join(dir, "secret-id");
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
  assert.equal(await loadOrCreateNodeSecret(dir), first, "a restarted agent keeps its secret");
  assert.deepEqual(fs.readdirSync(dir).sort(), ["secret-id"], "no temp file is left behind");

  // A copy restored with a looser mode is tightened, not rewritten.
  fs.chmodSync(file, 0o644);
  assert.equal(await loadOrCreateNodeSecret(dir), first);
  assert.equal(fs.statSync(file).mode & 0o777, 0o600);
});
