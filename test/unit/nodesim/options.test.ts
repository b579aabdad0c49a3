import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { parseNodeSimArgs } from "../../../src/nodesim/options.js";

const bin = fileURLToPath(new URL("../../../../bin/berth", import.meta.url));

describe("berth nodesim flags", () => {
  it("reads every flag, Nomad-style single dash", () => {
    const cli = parseNodeSimArgs([
      "-count=3",
      "-servers",
      "127.0.0.1:4646",
      "-plugin=p1",
      "-node-latency=5ms",
      "-controller-latency=1s",
      "-error-rate=0.25",
      "-max-volumes=4",
      "-name-prefix=edge",
      "-drain-on-exit",
    ]);
    assert.equal(cli.sim.count, 3);
    assert.deepEqual(cli.sim.servers, ["http://127.0.0.1:4646"]);
    assert.equal(cli.sim.pluginId, "p1");
    assert.deepEqual(cli.sim.csi, {
      nodeLatencyMs: 5,
      controllerLatencyMs: 1000,
      errorRate: 0.25,
      maxVolumesPerNode: 4,
    });
    assert.equal(cli.sim.namePrefix, "edge");
    assert.equal(cli.drainOnExit, true);
    assert.equal(parseNodeSimArgs(["-count=1", "-servers=h:1", "-plugin="]).sim.pluginId, null);
  });

  it("refuses bad input naming the flag and the problem", () => {
    const bad: [string[], RegExp][] = [
      [["-servers=h:1"], /-count is required/],
      [["-count=0", "-servers=h:1"], /-count: want a whole number ≥ 1, got "0"/],
      [["-count=2.5", "-servers=h:1"], /-count: want a whole number/],
      [["-count=1"], /-servers is required/],
      [["-count=1", "-servers=h:1", "-error-rate=2"], /-error-rate: want a probability between 0 and 1/],
      [["-count=1", "-servers=h:1", "-node-latency=soon"], /-node-latency: want a duration/],
      [["-count=1", "-servers=h:1", "-name-prefix=a/b"], /-name-prefix: letters, digits/],
      [["-count=1", "-servers=h:1", "-cert-file=/x"], /-cert-file and -key-file go together/],
      [["-count=1", "-servers=h:1", "-ca-file=/nonexistent/ca.pem"], /-ca-file: cannot read/],
      [["-count=1", "-servers=h:1", "-bogus"], /bogus/],
    ];
    for (const [args, msg] of bad) assert.throws(() => parseNodeSimArgs(args), msg, args.join(" "));
  });

  it("is routed by the program: `berth nodesim -h` prints its usage, a bad flag exits 1", async () => {
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [bin, ...args], (err, stdout, stderr) => {
          resolve({ code: err ? (typeof err.code === "number" ? err.code : -1) : 0, stdout, stderr });
        });
      });
    const help = await run(["nodesim", "-h"]);
    assert.equal(help.code, 0, help.stderr);
    assert.match(help.stdout, /^Usage: berth nodesim -count=N -servers=ADDR/);
    const bad = await run(["nodesim", "-count=x", "-servers=h:1"]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^Error: -count: want a whole number/);
  });
});
