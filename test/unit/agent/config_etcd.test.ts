/**
 * Selecting the etcd state store: `server { etcd { endpoints, prefix } }` in an agent config file
 * (HCL and JSON) and `-etcd-endpoints` (which replaces the file's list), into the server's
 * `etcd` option; SQLite (null) without either; bad values refused naming the field.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAgentConfig } from "../../../src/agent/config_file.js";
import { parseAgentFlags, resolveAgentOptions } from "../../../src/agent/options.js";

const resolve = async (hcl: string, argv: string[]) =>
  resolveAgentOptions(
    parseAgentFlags(["-server", "-data-dir=/tmp/x", ...argv]),
    await parseAgentConfig("a.hcl", hcl),
  );

describe("agent config: the etcd state store", () => {
  it("reads server { etcd } from HCL and JSON, with the default prefix", async () => {
    const hcl = `server {\n  enabled = true\n  etcd {\n    endpoints = ["http://127.0.0.1:2379", "https://10.0.0.2:2379"]\n    prefix = "/prod"\n  }\n}\n`;
    assert.deepEqual((await resolve(hcl, [])).etcd, {
      endpoints: ["http://127.0.0.1:2379", "https://10.0.0.2:2379"],
      prefix: "/prod",
    });
    const json = JSON.stringify({ server: { etcd: { endpoints: ["http://127.0.0.1:2379"] } } });
    const opts = resolveAgentOptions(
      parseAgentFlags(["-server", "-data-dir=/x"]),
      await parseAgentConfig("a.json", json),
    );
    assert.deepEqual(opts.etcd, { endpoints: ["http://127.0.0.1:2379"], prefix: "/berth" });
  });

  it("-etcd-endpoints selects etcd and replaces the file's endpoints; nothing selects SQLite", async () => {
    assert.deepEqual(
      (await resolve("", ["-etcd-endpoints=http://127.0.0.1:2379, http://127.0.0.1:22379"])).etcd,
      {
        endpoints: ["http://127.0.0.1:2379", "http://127.0.0.1:22379"],
        prefix: "/berth",
      },
    );
    const hcl = `server { etcd { endpoints = ["http://a:1"] prefix = "/p" } }`;
    assert.deepEqual((await resolve(hcl, ["-etcd-endpoints=http://b:2"])).etcd, {
      endpoints: ["http://b:2"],
      prefix: "/p",
    });
    assert.equal((await resolve("", [])).etcd, null, "SQLite by default");
    assert.equal(resolveAgentOptions(parseAgentFlags(["-dev"]), { hostVolumes: [], meta: {} }).etcd, null);
  });

  it("refuses bad endpoints, prefixes, keys, and endpoints without a server", async () => {
    await assert.rejects(
      resolve("", ["-etcd-endpoints=127.0.0.1:2379"]),
      /-etcd-endpoints: "127\.0\.0\.1:2379" is not a URL like http:/,
    );
    await assert.rejects(
      resolve("", ["-etcd-endpoints=unix://a:1"]),
      /"unix:\/\/a:1" must start with http:\/\/ or https:\/\//,
    );
    await assert.rejects(resolve("", ["-etcd-endpoints=http://127.0.0.1"]), /must name a port/);
    await assert.rejects(resolve("", ["-etcd-endpoints=,"]), /name at least one etcd client URL/);
    await assert.rejects(
      resolve(`server { etcd { endpoints = ["http://a:1/v3"] } }`, []),
      /server etcd: endpoints: "http:\/\/a:1\/v3" must be only scheme:\/\/host:port/,
    );
    await assert.rejects(
      resolve(`server { etcd { endpoints = ["http://a:1"] prefix = "berth" } }`, []),
      /prefix: "berth" must start with "\/"/,
    );
    await assert.rejects(resolve(`server { etcd { endpoints = [] } }`, []), /at least one/);
    await assert.rejects(
      resolve(`server { etcd { endpoint = "http://a:1" } }`, []),
      /unsupported key "endpoint"/,
    );
    await assert.rejects(resolve(`server { etcd { prefix = "/p" } }`, []), /prefix is set but no endpoints/);
    assert.throws(
      () =>
        resolveAgentOptions(
          parseAgentFlags(["-client", "-servers=a:1", "-data-dir=/x", "-etcd-endpoints=http://a:1"]),
          { hostVolumes: [], meta: {} },
        ),
      /needs -server/,
    );
  });
});
