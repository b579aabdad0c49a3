/**
 * `berth namespace apply|list|status|delete` — the real CLI (bin/berth) against a real `berth agent
 * -server` process on loopback — and the namespace reaching other commands through `-namespace`
 * and NOMAD_NAMESPACE: a job runs into an existing namespace only, the namespace's drivers bind it,
 * and a namespace holding a live job is not deleted. Ends asserting no process is left running.
 */
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  killProcessesUnder,
  logTail,
  runCli,
  startCluster,
  type AgentProcess,
} from "../../helpers/agent_process.js";

let dir: string;
let addr: string;
let server: AgentProcess | undefined;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-ns-cli-"));
  ({ addr, server } = await startCluster(dir, []));
});

after(async () => {
  try {
    await server?.stop();
  } finally {
    const leftovers = killProcessesUnder(dir);
    if (leftovers.length > 0)
      process.stderr.write(`--- server log ---\n${logTail(path.join(dir, "server.log"))}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(leftovers, [], "no process left running");
  }
});

async function berth(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { BERTH_ADDR: addr, NOMAD_NAMESPACE: "", BERTH_NAMESPACE: "", ...env });
}

function jobFile(name: string, driver: string): string {
  const file = path.join(dir, `${name}.hcl`);
  fs.writeFileSync(
    file,
    `job "${name}" {\n  group "g" {\n    task "t" {\n      driver = "${driver}"\n      config {\n        command = "/bin/true"\n      }\n    }\n  }\n}\n`,
  );
  return file;
}

test("namespace apply, list, status and delete through the CLI; -namespace and NOMAD_NAMESPACE reach the job routes", async () => {
  const listed = await berth(["namespace", "list"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(listed.stdout.trimEnd().split("\n"), [
    "Name     Description",
    "default  Default shared namespace",
  ]);

  // By name with flags.
  const applied = await berth(["namespace", "apply", "-description", "Production", "prod"]);
  assert.equal(applied.code, 0, applied.stderr);
  assert.equal(applied.stdout.trim(), 'Successfully applied namespace "prod"!');

  // From an HCL spec file.
  const spec = path.join(dir, "team.hcl");
  fs.writeFileSync(
    spec,
    [
      'name        = "team-a"',
      'description = "Team A"',
      "meta {",
      '  owner = "ops"',
      "  tier  = 2",
      "}",
      "capabilities {",
      '  enabled_task_drivers  = ["exec"]',
      '  disabled_task_drivers = ["raw_exec"]',
      "}",
      "",
    ].join("\n"),
  );
  const fromFile = await berth(["namespace", "apply", spec]);
  assert.equal(fromFile.code, 0, fromFile.stderr);
  assert.equal(fromFile.stdout.trim(), 'Successfully applied namespace "team-a"!');

  // From a JSON spec (the API's shape), with -json; flags given beside a file are ignored, with a warning.
  const jsonSpec = path.join(dir, "qa.json");
  fs.writeFileSync(jsonSpec, JSON.stringify({ Name: "qa", Description: "QA", Meta: { team: "q" } }));
  const fromJson = await berth(["namespace", "apply", "-json", "-description", "ignored", jsonSpec]);
  assert.equal(fromJson.code, 0, fromJson.stderr);
  assert.equal(fromJson.stderr.trim(), "Flags are ignored when a file is specified!");
  const qa = await berth(["namespace", "list", "-json"]);
  const listedQa = (JSON.parse(qa.stdout) as { Name: string; Description: string; Meta: unknown }[]).find(
    (n) => n.Name === "qa",
  );
  assert.deepEqual(
    { Description: listedQa?.Description, Meta: listedQa?.Meta },
    { Description: "QA", Meta: { team: "q" } },
  );
  assert.equal((await berth(["namespace", "delete", "qa"])).code, 0);

  const status = await berth(["namespace", "status", "team"]);
  assert.equal(status.code, 0, status.stderr);
  assert.deepEqual(status.stdout.trimEnd().split("\n"), [
    "Name                   = team-a",
    "Description            = Team A",
    "Quota                  =",
    "Enabled Drivers        = exec",
    "Disabled Drivers       = raw_exec",
    "Enabled Network Modes  = *",
    "Disabled Network Modes =",
    "",
    "Metadata",
    "owner = ops",
    "tier  = 2",
  ]);
  const asJson = await berth(["namespace", "status", "-json", "prod"]);
  assert.equal(JSON.parse(asJson.stdout).Description, "Production");
  const nomatch = await berth(["namespace", "status", "zzz"]);
  assert.equal(nomatch.code, 1);
  assert.match(nomatch.stderr, /Namespace "zzz" matched no namespaces/);

  const all = await berth(["namespace", "list"]);
  assert.deepEqual(all.stdout.trimEnd().split("\n"), [
    "Name     Description",
    "default  Default shared namespace",
    "prod     Production",
    "team-a   Team A",
  ]);

  // A job goes only into a namespace that exists, with the drivers it allows.
  const ghost = await berth(["job", "run", "-namespace=ghost", jobFile("web", "exec")]);
  assert.equal(ghost.code, 1);
  assert.match(ghost.stderr, /job "web" is in nonexistent namespace "ghost"/);
  const raw = await berth(["job", "run", jobFile("raw", "raw_exec")], { NOMAD_NAMESPACE: "team-a" });
  assert.equal(raw.code, 1);
  assert.match(raw.stderr, /used task driver "raw_exec" is not allowed in namespace "team-a"/);
  const run = await berth(["job", "run", jobFile("web", "exec")], { NOMAD_NAMESPACE: "prod" });
  assert.equal(run.code, 0, run.stderr);
  const inProd = await berth(["job", "status", "-namespace", "prod", "web"]);
  assert.equal(inProd.code, 0, inProd.stderr);
  assert.equal((await berth(["job", "status", "web"])).code, 1, "not in the default namespace");

  // A namespace holding a live job is not deleted; once the job is gone it is.
  const held = await berth(["namespace", "delete", "prod"]);
  assert.equal(held.code, 1);
  assert.match(held.stderr, /Error deleting namespace: .*409.*namespace "prod" has non-terminal jobs/);
  const stop = await berth(["job", "stop", "-purge", "-namespace=prod", "web"]);
  assert.equal(stop.code, 0, stop.stderr);
  const deleted = await berth(["namespace", "delete", "prod"]);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(deleted.stdout.trim(), 'Successfully deleted namespace "prod"!');
  const dflt = await berth(["namespace", "delete", "default"]);
  assert.equal(dflt.code, 1);
  assert.match(dflt.stderr, /can not delete default namespace/);
});
