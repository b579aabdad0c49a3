/**
 * The agent config's `limits` block: Nomad's names, HCL and JSON, later files winning; bad values
 * refused naming the file, the key and the problem.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parseAgentConfig, readAgentConfigFiles } from "../../../src/agent/config_file.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-limitscfg-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("agent config limits", () => {
  it("reads Nomad's limits block in HCL and JSON", async () => {
    const hcl = await parseAgentConfig(
      "a.hcl",
      'limits {\n  http_max_conns_per_client = 7\n  rpc_max_conns_per_client = 0\n  rpc_handshake_timeout = "1500ms"\n}\n',
    );
    assert.deepEqual(hcl.limits, {
      httpMaxConnsPerClient: 7,
      rpcMaxConnsPerClient: 0,
      rpcHandshakeTimeoutMs: 1500,
    });
    const json = await parseAgentConfig("a.json", JSON.stringify({ limits: { rpc_handshake_timeout: "0" } }));
    assert.deepEqual(json.limits, { rpcHandshakeTimeoutMs: 0 });
    assert.equal((await parseAgentConfig("b.hcl", "client {}\n")).limits, undefined, "no block, no limits");
  });

  it("merges files in order, later keys winning", async () => {
    fs.writeFileSync(path.join(dir, "1.hcl"), "limits {\n  http_max_conns_per_client = 5\n}\n");
    fs.writeFileSync(
      path.join(dir, "2.hcl"),
      'limits {\n  http_max_conns_per_client = 9\n  rpc_handshake_timeout = "2s"\n}\n',
    );
    const cfg = await readAgentConfigFiles([dir]);
    assert.deepEqual(cfg.limits, { httpMaxConnsPerClient: 9, rpcHandshakeTimeoutMs: 2000 });
  });

  it("refuses bad values naming the key and the problem", async () => {
    const bad: [string, RegExp][] = [
      [
        "http_max_conns_per_client = -1",
        /a\.hcl: limits: http_max_conns_per_client must be between 0 \(no limit\) and 1000000, got -1/,
      ],
      ["http_max_conns_per_client = 2.5", /limits: http_max_conns_per_client must be a whole number/],
      ['http_max_conns_per_client = "lots"', /limits: http_max_conns_per_client must be a number/],
      ["rpc_max_conns_per_client = 1e12", /limits: rpc_max_conns_per_client must be between 0/],
      ['rpc_handshake_timeout = "soon"', /limits: rpc_handshake_timeout must be a duration/],
      [
        'rpc_handshake_timeout = "2h"',
        /limits: rpc_handshake_timeout must be "0" \(no limit\) or between 1ms and 1h/,
      ],
      ["rpc_default_write_rate = 10", /a\.hcl:2:3: unknown key "limits\.rpc_default_write_rate"/],
    ];
    for (const [line, re] of bad) {
      await assert.rejects(parseAgentConfig("a.hcl", `limits {\n  ${line}\n}\n`), re, line);
    }
    const https = await parseAgentConfig("a.hcl", 'limits {\n  https_handshake_timeout = "5s"\n}\n');
    assert.match(
      https.warnings?.join("\n") ?? "",
      /limits\.https_handshake_timeout is accepted but not used: with TLS on, berth bounds the handshake/,
    );
  });
});
