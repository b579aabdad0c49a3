/**
 * The agent config's `http_api_response_headers` (config_http.ts): Nomad's map in HCL and JSON,
 * its Access-Control-Allow-Origin value the one browser origin allowed, later files winning per
 * header; a value that is not "*" or one origin, a bad header name or a multi-line value refused
 * naming the file and the problem.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { parseAgentConfig, readAgentConfigFiles } from "../../../src/agent/config_file.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-httpcfg-"));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

describe("agent config http_api_response_headers", () => {
  it("reads the headers and the allowed origin, HCL and JSON", async () => {
    const hcl = await parseAgentConfig(
      "a.hcl",
      'http_api_response_headers = {\n  "Access-Control-Allow-Origin" = "https://UI.example:8443"\n  "X-Frame-Options" = "DENY"\n}\n',
    );
    assert.deepEqual(hcl.httpApi, {
      responseHeaders: {
        "Access-Control-Allow-Origin": "https://UI.example:8443",
        "X-Frame-Options": "DENY",
      },
      allowedOrigins: ["https://ui.example:8443"],
    });
    const json = await parseAgentConfig(
      "a.json",
      JSON.stringify({ http_api_response_headers: { "Access-Control-Allow-Origin": "*" } }),
    );
    assert.deepEqual(json.httpApi?.allowedOrigins, ["*"]);
    const noOrigin = await parseAgentConfig("b.hcl", 'http_api_response_headers = {\n  "X-A" = "b"\n}\n');
    assert.deepEqual(noOrigin.httpApi?.allowedOrigins, [], "headers alone allow no origin");
    assert.equal((await parseAgentConfig("c.hcl", "client {}\n")).httpApi, undefined);
  });

  it("later files win per header, case-insensitively", async () => {
    const a = path.join(dir, "a.hcl");
    const b = path.join(dir, "b.hcl");
    fs.writeFileSync(
      a,
      'http_api_response_headers = {\n  "Access-Control-Allow-Origin" = "https://a.example"\n  "X-A" = "1"\n}\n',
    );
    fs.writeFileSync(
      b,
      'http_api_response_headers = {\n  "access-control-allow-origin" = "https://b.example"\n}\n',
    );
    const cfg = await readAgentConfigFiles([a, b]);
    assert.deepEqual(cfg.httpApi, {
      responseHeaders: { "X-A": "1", "access-control-allow-origin": "https://b.example" },
      allowedOrigins: ["https://b.example"],
    });
  });

  it("refuses what is not one origin, bad names and multi-line values", async () => {
    const bad: [string, RegExp][] = [
      [
        '"Access-Control-Allow-Origin" = "https://a.example, https://b.example"',
        /must be "\*" or one origin/,
      ],
      ['"Access-Control-Allow-Origin" = "https://a.example/path"', /scheme, host and port only/],
      ['"Access-Control-Allow-Origin" = "file:///etc"', /must be "\*" or one origin/],
      ['"Bad Header" = "x"', /"Bad Header" is not a valid header name/],
      ['"X-A" = "a\\nb"', /the value of X-A must be one line/],
    ];
    for (const [line, re] of bad) {
      await assert.rejects(
        parseAgentConfig("bad.hcl", `http_api_response_headers = {\n  ${line}\n}\n`),
        (err: Error) => re.test(err.message) && err.message.includes("bad.hcl"),
        line,
      );
    }
  });
});
