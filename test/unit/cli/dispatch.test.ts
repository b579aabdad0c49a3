import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { deadAddress, startFakeApi, type FakeApi } from "../../fakes/api.js";
import { DEFAULT_ADDRESS } from "../../../src/api/index.js";
import { runCli } from "../../../src/cli/dispatch.js";
import { jobStub } from "../../builders/api_records.js";
import { captureIO } from "../../fakes/command_io.js";
import type { Connection } from "../../../src/api/index.js";

let api: FakeApi;

before(async () => {
  api = await startFakeApi({ "GET /v1/jobs": { json: [jobStub] } });
});

after(() => api.close());

/** Runs the CLI in-process; records the address each command was given. */
async function cli(argv: string[], env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const addresses: string[] = [];
  const connections: Connection[] = [];
  const code = await runCli(argv, {
    stdout: (l) => out.push(l),
    stderr: (l) => err.push(l),
    io: (connection) => {
      addresses.push(connection.address);
      connections.push(connection);
      const io = captureIO(connection.address);
      return { ...io, stdout: (l) => out.push(l), stderr: (l) => err.push(l) };
    },
    env,
  });
  return { code, out, err, addresses, connections };
}

describe("dispatch", () => {
  it("Nomad's shortcuts run their command (stop is job stop, logs is alloc logs, …); status is none", async () => {
    const viaAlias = await cli(["stop", "-h"]);
    assert.equal(viaAlias.code, 0);
    assert.match(viaAlias.out[0]!, /^Usage: berth job stop /);
    assert.match((await cli(["logs", "-h"])).out[0]!, /^Usage: berth alloc logs /);
    assert.match((await cli(["node-status", "-h"])).out[0]!, /^Usage: berth node status/);
    const listed = await cli(["run", `-address=${api.address}`]);
    assert.equal(listed.code, 1, "job run without a file is a usage error of job run");
    assert.ok(
      listed.err.some((l) => /^Usage: berth job run /.test(l)),
      listed.err.join("\n"),
    );
    const unknown = await cli(["status"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err[0]!, /unknown command "status"/);
  });

  it("version, -version and -v print berth's version from package.json", async () => {
    const { version } = JSON.parse(
      await (
        await import("node:fs/promises")
      ).readFile(new URL("../../../../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    for (const word of ["version", "-version", "--version", "-v"]) {
      const r = await cli([word]);
      assert.equal(r.code, 0);
      assert.deepEqual(r.out, [`berth v${version}`]);
    }
  });

  it("bare `berth` prints help and exits 1; -h exits 0", async () => {
    const bare = await cli([]);
    assert.equal(bare.code, 1);
    assert.match(bare.out[0]!, /^Usage: berth /);
    assert.ok(bare.out.some((l) => l.includes("volume") && l.includes("deregister")));
    const h = await cli(["-h"]);
    assert.equal(h.code, 0);
    assert.deepEqual(h.out, bare.out);
  });

  it("unknown nouns and verbs are errors; a noun alone lists its verbs", async () => {
    const noun = await cli(["frobnicate"]);
    assert.equal(noun.code, 1);
    assert.match(noun.err[0]!, /^Error: unknown command "frobnicate"/);
    const verb = await cli(["job", "launch"]);
    assert.equal(verb.code, 1);
    assert.equal(verb.err[0], 'Error: unknown command "job launch"');
    const alone = await cli(["volume"]);
    assert.equal(alone.code, 1);
    assert.ok(alone.err.includes("  berth volume delete [options] <volume>"), alone.err.join("\n"));
  });

  it("a command's -h prints its usage and help and runs nothing", async () => {
    const r = await cli(["volume", "delete", "-h"]);
    assert.equal(r.code, 0);
    assert.equal(r.out[0], "Usage: berth volume delete [options] <volume>");
    assert.match(r.out[2]!, /-secret key=value/);
    assert.deepEqual(r.addresses, []);
  });

  it("a usage error prints the message and the usage line, exit 1", async () => {
    const r = await cli(["job", "run"]);
    assert.equal(r.code, 1);
    assert.deepEqual(r.err, [
      "Error: this command takes exactly one argument: <path>",
      "Usage: berth job run [options] <path>",
    ]);
    assert.deepEqual(r.addresses, []);
  });

  it("-address wins over BERTH_ADDR, which wins over the default", async () => {
    const flag = await cli(["job", "status", `-address=${api.address}`], {
      BERTH_ADDR: "http://127.0.0.1:1",
    });
    assert.equal(flag.code, 0);
    assert.deepEqual(flag.addresses, [api.address]);
    assert.match(flag.out[1]!, /^writer {2}batch/);

    const env = await cli(["job", "status"], { BERTH_ADDR: api.address });
    assert.equal(env.code, 0);
    assert.deepEqual(env.addresses, [api.address]);

    const dead = await deadAddress();
    const none = await cli(["node", "status", "-address", dead]);
    assert.equal(none.code, 1);
    assert.match(
      none.err[0]!,
      new RegExp(`^Error querying node status: cannot reach berth at ${dead}: .*ECONNREFUSED`),
    );
    assert.equal(DEFAULT_ADDRESS, "http://127.0.0.1:4646");
  });

  it("a Nomad operator's NOMAD_ADDR, NOMAD_NAMESPACE, NOMAD_TOKEN, NOMAD_REGION work; BERTH_* and flags win", async () => {
    const nomad = await cli(["job", "status"], {
      NOMAD_ADDR: api.address,
      NOMAD_NAMESPACE: "prod",
      NOMAD_TOKEN: "s3cret",
      NOMAD_REGION: "eu",
    });
    assert.equal(nomad.code, 0);
    assert.deepEqual(nomad.connections, [
      { address: api.address, namespace: "prod", token: "s3cret", region: "eu" },
    ]);
    const berth = await cli(["job", "status"], {
      NOMAD_ADDR: "http://127.0.0.1:1",
      BERTH_ADDR: api.address,
      NOMAD_NAMESPACE: "prod",
      BERTH_NAMESPACE: "dev",
    });
    assert.deepEqual(berth.connections, [
      { address: api.address, namespace: "dev", token: undefined, region: undefined },
    ]);
    const flags = await cli(
      ["job", "status", "-namespace=web", "-token", "t0k", "-region=us", `-address=${api.address}`],
      { BERTH_NAMESPACE: "dev", NOMAD_TOKEN: "s3cret" },
    );
    assert.equal(flags.code, 0);
    assert.deepEqual(flags.connections, [
      { address: api.address, namespace: "web", token: "t0k", region: "us" },
    ]);
  });
});

describe("bin/berth", () => {
  const bin = fileURLToPath(new URL("../../../../bin/berth", import.meta.url));
  const run = (args: string[], env: NodeJS.ProcessEnv) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [bin, ...args],
        { env: { ...process.env, ...env } },
        (err, stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
        },
      );
    });

  it("exits with the command's code and prints to the real streams", async () => {
    const ok = await run(["job", "status", "-json"], { BERTH_ADDR: api.address });
    assert.equal(ok.code, 0, ok.stderr);
    assert.deepEqual(JSON.parse(ok.stdout), [jobStub]);
    const dead = await deadAddress();
    const bad = await run(["job", "status"], { BERTH_ADDR: dead });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^Error querying jobs: cannot reach berth at /);
  });
});
