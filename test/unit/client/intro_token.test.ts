/** Where a node agent takes its introduction token from (client/intro_token.ts), and the CLI's parse. */
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { introTokenField, INTRO_TOKEN_FILE } from "../../../src/client/intro_token.js";
import { nodeIntroCreate } from "../../../src/cli/commands/node_intro_create.js";
import { UsageError } from "../../../src/cli/flags.js";
import { tempDir } from "../../helpers/temp_dir.js";

test("the flag wins over the environment (BERTH_ over NOMAD_), which wins over the token file", async () => {
  const dir = tempDir("berth-intro-");
  assert.deepEqual(await introTokenField(dir, undefined, {}), {});
  fs.writeFileSync(path.join(dir, INTRO_TOKEN_FILE), "from-file\n");
  assert.deepEqual(await introTokenField(dir, undefined, {}), { IntroToken: "from-file" });
  assert.deepEqual(await introTokenField(dir, undefined, { NOMAD_CLIENT_INTRO_TOKEN: "nomad" }), {
    IntroToken: "nomad",
  });
  assert.deepEqual(
    await introTokenField(dir, undefined, {
      NOMAD_CLIENT_INTRO_TOKEN: "nomad",
      BERTH_CLIENT_INTRO_TOKEN: "berth",
    }),
    { IntroToken: "berth" },
  );
  assert.deepEqual(await introTokenField(dir, "flag", { BERTH_CLIENT_INTRO_TOKEN: "berth" }), {
    IntroToken: "flag",
  });
});

test("node intro create takes Nomad's flags; -ttl in ns", () => {
  assert.deepEqual(nodeIntroCreate.parse(["create", "-node-name", "web-1", "-ttl", "15m"]), {
    address: undefined,
    nodeName: "web-1",
    nodePool: "default",
    ttlNs: 15 * 60e9,
    json: false,
    template: undefined,
  });
  assert.throws(() => nodeIntroCreate.parse(["make"]), UsageError);
  assert.throws(() => nodeIntroCreate.parse(["create", "-ttl", "soon"]), /-ttl/);
});
