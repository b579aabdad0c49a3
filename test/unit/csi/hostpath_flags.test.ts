import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { parseHostpathFlags } from "../../../src/csi/hostpath/flags.js";

const base = ["--endpoint=unix:///tmp/x.sock", "--state-dir=/tmp/s"];

void describe("csi-hostpath flags", () => {
  void it("defaults to a monolith without attach", () => {
    const c = parseHostpathFlags([...base, "--node-id=n1"], {});
    assert.equal(c.mode, "monolith");
    assert.equal(c.attachRequired, false);
    assert.deepEqual(c.topology, { "berth.io/hostname": "n1" });
  });

  void it("takes --attach-required bare (without eating the next flag) or as =true/=false", () => {
    const c = parseHostpathFlags(["--attach-required", ...base, "--node-id=n1"], {});
    assert.equal(c.attachRequired, true);
    assert.equal(c.socketPath, "/tmp/x.sock");
    assert.equal(
      parseHostpathFlags([...base, "--node-id=n1", "--attach-required=false"], {}).attachRequired,
      false,
    );
    assert.throws(
      () => parseHostpathFlags([...base, "--node-id=n1", "--attach-required=yes"], {}),
      /true or false/,
    );
  });

  void it("a controller needs no node ID; other modes do; unknown modes are refused", () => {
    const c = parseHostpathFlags([...base, "--mode=controller"], {});
    assert.equal(c.mode, "controller");
    assert.deepEqual(c.topology, {});
    assert.throws(() => parseHostpathFlags([...base, "--mode=node"], {}), /--node-id is required/);
    assert.throws(() => parseHostpathFlags([...base, "--node-id=n", "--mode", "both"], {}), /--mode/);
  });
});
