import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { normaliseFlags, UsageError, wantsHelp } from "../../../src/cli/flags.js";
import { allocStatus } from "../../../src/cli/commands/alloc_status.js";
import { jobRun } from "../../../src/cli/commands/job_run.js";
import { jobStatus } from "../../../src/cli/commands/job_status.js";
import { jobStop } from "../../../src/cli/commands/job_stop.js";
import { nodeStatus } from "../../../src/cli/commands/node_status.js";
import { pluginStatus } from "../../../src/cli/commands/plugin_status.js";
import { volumeCreate } from "../../../src/cli/commands/volume_create.js";
import { volumeDelete } from "../../../src/cli/commands/volume_delete.js";
import { volumeDeregister } from "../../../src/cli/commands/volume_deregister.js";
import { volumeRegister } from "../../../src/cli/commands/volume_register.js";
import { volumeStatus } from "../../../src/cli/commands/volume_status.js";

const usageError = (fn: () => unknown, pattern: RegExp) =>
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof UsageError, `a UsageError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });

describe("flag normalisation", () => {
  it("turns Nomad's single-dash flags into double-dash ones, leaving the rest alone", () => {
    assert.deepEqual(
      normaliseFlags(["-json", "-address=http://x:1", "-address", "a", "--purge", "-", "id"]),
      ["--json", "--address=http://x:1", "--address", "a", "--purge", "-", "id"],
    );
    // One-letter flags are Go flags too (`-f`, `-n 5`): long options for parseArgs.
    assert.deepEqual(normaliseFlags(["-h", "-f", "--", "-json"]), ["--h", "--f", "--", "-json"]);
  });

  it("spots a help flag before --", () => {
    assert.equal(wantsHelp(["x", "-h"]), true);
    assert.equal(wantsHelp(["-help"]), true);
    assert.equal(wantsHelp(["--help"]), true);
    assert.equal(wantsHelp(["--", "-h"]), false);
    assert.equal(wantsHelp(["x"]), false);
  });
});

describe("job commands parse", () => {
  it("job run", () => {
    const defaults = {
      output: false,
      verbose: false,
      checkIndex: undefined,
      json: false,
      vars: [],
      varFiles: [],
    };
    assert.deepEqual(jobRun.parse(["job.hcl"]), {
      address: undefined,
      file: "job.hcl",
      detach: false,
      ...defaults,
    });
    assert.deepEqual(jobRun.parse(["-detach", "-address=http://h:1", "job.hcl"]), {
      address: "http://h:1",
      file: "job.hcl",
      detach: true,
      ...defaults,
    });
    assert.deepEqual(jobRun.parse(["-var", "a=1", "-var=b=2", "-var-file", "x.hcl", "-verbose", "job.hcl"]), {
      address: undefined,
      file: "job.hcl",
      detach: false,
      ...defaults,
      verbose: true,
      vars: ["a=1", "b=2"],
      varFiles: ["x.hcl"],
    });
    usageError(() => jobRun.parse([]), /exactly one argument: <path>/);
    usageError(() => jobRun.parse(["a", "b"]), /exactly one argument/);
    usageError(() => jobRun.parse(["-bogus", "a"]), /Unknown option '--bogus'/);
  });

  it("job stop", () => {
    assert.deepEqual(jobStop.parse(["web"]), { address: undefined, id: "web", purge: false });
    assert.deepEqual(jobStop.parse(["-purge", "-yes", "-detach", "web"]), {
      address: undefined,
      id: "web",
      purge: true,
    });
    usageError(() => jobStop.parse([]), /exactly one argument: <job>/);
  });

  it("job status", () => {
    const none = { address: undefined, id: undefined, json: false, template: undefined, verbose: false };
    assert.deepEqual(jobStatus.parse([]), none);
    assert.deepEqual(jobStatus.parse(["-json", "-verbose", "-address", "h:1", "web"]), {
      address: "h:1",
      id: "web",
      json: true,
      template: undefined,
      verbose: true,
    });
    assert.deepEqual(jobStatus.parse(["-t", "{{.ID}}"]), { ...none, template: "{{.ID}}" });
    usageError(() => jobStatus.parse(["a", "b"]), /at most one argument: \[<job>\]/);
    usageError(() => jobStatus.parse(["-address"]), /argument missing/);
  });
});

describe("read commands parse", () => {
  it("alloc status needs exactly one ID", () => {
    assert.deepEqual(allocStatus.parse(["-json", "abc"]), {
      address: undefined,
      id: "abc",
      json: true,
      template: undefined,
      verbose: false,
      stats: false,
    });
    assert.equal(allocStatus.parse(["-stats", "abc"]).stats, true);
    usageError(() => allocStatus.parse([]), /exactly one argument: <allocation>/);
  });

  for (const [name, cmd] of [
    ["node status", nodeStatus],
    ["volume status", volumeStatus],
    ["plugin status", pluginStatus],
  ] as const) {
    it(`${name} takes an optional ID and -json/-t/-verbose`, () => {
      const none = { address: undefined, id: undefined, json: false, template: undefined, verbose: false };
      assert.deepEqual(cmd.parse([]), none);
      assert.deepEqual(cmd.parse(["x", "-json", "-verbose"]), {
        ...none,
        id: "x",
        json: true,
        verbose: true,
      });
      assert.deepEqual(cmd.parse(["-t={{.ID}}", "x"]), { ...none, id: "x", template: "{{.ID}}" });
      usageError(() => cmd.parse(["a", "b"]), /at most one argument/);
    });
  }

  it("volume and plugin status accept Nomad's -type csi and nothing else", () => {
    assert.equal(volumeStatus.parse(["-type", "csi"]).id, undefined);
    assert.equal(pluginStatus.parse(["-type=csi", "p"]).id, "p");
    usageError(() => volumeStatus.parse(["-type", "host"]), /-type must be "csi", got "host"/);
    usageError(() => pluginStatus.parse(["-type", "host"]), /-type must be "csi"/);
  });
});

describe("volume commands parse", () => {
  it("volume create and register take one file", () => {
    assert.deepEqual(volumeCreate.parse(["v.hcl"]), { address: undefined, file: "v.hcl" });
    assert.deepEqual(volumeRegister.parse(["-address=a:1", "-"]), { address: "a:1", file: "-" });
    usageError(() => volumeCreate.parse([]), /exactly one argument: <path>/);
    usageError(() => volumeRegister.parse(["-json", "v.hcl"]), /Unknown option '--json'/);
  });

  it("volume deregister", () => {
    assert.deepEqual(volumeDeregister.parse(["demo"]), { address: undefined, id: "demo", force: false });
    assert.deepEqual(volumeDeregister.parse(["-force", "demo"]), {
      address: undefined,
      id: "demo",
      force: true,
    });
    usageError(() => volumeDeregister.parse([]), /exactly one argument: <volume>/);
  });

  it("volume delete collects repeated -secret k=v", () => {
    assert.deepEqual(volumeDelete.parse(["demo"]), { address: undefined, id: "demo", secrets: {} });
    assert.deepEqual(volumeDelete.parse(["-secret", "a=1", "-secret=b=x=y", "demo"]), {
      address: undefined,
      id: "demo",
      secrets: { a: "1", b: "x=y" },
    });
  });

  it("volume delete rejects a malformed -secret without echoing it", () => {
    for (const bad of ["novalue", "=v", "a=1,b=2"]) {
      usageError(
        () => volumeDelete.parse(["-secret", bad, "demo"]),
        /^-secret must be key=value, with no comma in the key or the value$/,
      );
    }
  });
});
