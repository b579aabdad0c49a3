/**
 * The agent config's `tls` block: Nomad's names and defaults, what berth does not honour refused by
 * name, and the PEM files checked before the agent listens or dials.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { parseAgentConfig, readAgentConfigFiles } from "../../../src/agent/config_file.js";
import { clientTls, dialAddress, serverTls } from "../../../src/agent/config_tls.js";
import { makeTestCerts, type TestCerts } from "../../helpers/tls_certs.js";

let dir: string;
let certs: TestCerts;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-tlscfg-"));
  certs = await makeTestCerts(dir);
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const parse = (text: string) => parseAgentConfig("agent.hcl", text);

describe("agent config tls", () => {
  it("reads Nomad's tls block; absent switches stay off", async () => {
    const cfg = await parse(
      'tls {\n  http = true\n  rpc = true\n  ca_file = "ca.pem"\n  cert_file = "s.pem"\n  key_file = "s-key.pem"\n' +
        '  verify_server_hostname = true\n  verify_https_client = false\n  tls_min_version = "tls13"\n}\n',
    );
    assert.deepEqual(cfg.tls, {
      http: true,
      rpc: true,
      caFile: "ca.pem",
      certFile: "s.pem",
      keyFile: "s-key.pem",
      verifyServerHostname: true,
      verifyHttpsClient: false,
      minVersion: "TLSv1.3",
    });
    assert.deepEqual((await parse("tls {\n  http = false\n}\n")).tls, { http: false });
    assert.equal((await parse("client {}\n")).tls, undefined);
    assert.equal(serverTls({ http: false }), undefined, "http = false: plain HTTP");
    assert.equal(clientTls(undefined), undefined);
  });

  it("later files win per field", async () => {
    const a = path.join(dir, "1.hcl");
    const b = path.join(dir, "2.json");
    fs.writeFileSync(a, 'tls {\n  http = true\n  ca_file = "a.pem"\n}\n');
    fs.writeFileSync(b, JSON.stringify({ tls: { ca_file: "b.pem", rpc: true } }));
    assert.deepEqual((await readAgentConfigFiles([a, b])).tls, { http: true, rpc: true, caFile: "b.pem" });
  });

  it("refuses what berth does not honour, by name", async () => {
    await assert.rejects(
      parse("tls {\n  rpc_upgrade_mode = true\n}\n"),
      /agent\.hcl.*rpc_upgrade_mode is not supported/,
    );
    await assert.rejects(
      parse('tls {\n  tls_cipher_suites = "X"\n}\n'),
      /tls_cipher_suites is not supported/,
    );
    await assert.rejects(
      parse('tls {\n  tls_min_version = "tls10"\n}\n'),
      /tls_min_version must be "tls12" or "tls13", got "tls10"/,
    );
    await assert.rejects(
      parse("tls {\n  verify_everything = true\n}\n"),
      /agent\.hcl:2:3: unknown key "tls\.verify_everything"/,
    );
    await assert.rejects(parse('tls {\n  http = "yes"\n}\n'), /http must be true or false/);
    const defaults = await parse('tls {\n  rpc_upgrade_mode = false\n  tls_cipher_suites = ""\n}\n');
    assert.deepEqual(defaults.tls, {}, "Nomad's defaults spelled out still load");
  });

  it("a server needs http for rpc (one listener), and its certificate and key", () => {
    assert.throws(
      () =>
        serverTls({ rpc: true, caFile: certs.ca, certFile: certs.server.cert, keyFile: certs.server.key }),
      /rpc = true on a server needs http = true: berth serves the HTTP API and the agent RPC on one listener/,
    );
    assert.throws(() => serverTls({ http: true }), /tls: cert_file is required with http = true/);
    assert.throws(
      () => serverTls({ http: true, rpc: true, certFile: certs.server.cert, keyFile: certs.server.key }),
      /ca_file is required with rpc = true/,
    );
    assert.throws(
      () =>
        serverTls({
          http: true,
          verifyHttpsClient: true,
          certFile: certs.server.cert,
          keyFile: certs.server.key,
        }),
      /ca_file is required with verify_https_client = true/,
    );
    const ok = serverTls({
      http: true,
      rpc: true,
      caFile: certs.ca,
      certFile: certs.server.cert,
      keyFile: certs.server.key,
    });
    assert.equal(ok?.rpc, true);
    assert.equal(ok?.verifyHttpsClient, false, "Nomad's default: HTTPS is not mutual");
    assert.equal(ok?.verifyServerHostname, false);
    assert.equal(ok?.minVersion, "TLSv1.2", "Nomad's default tls12");
    assert.ok(ok?.material.ca && ok.material.cert && ok.material.key);
  });

  it("bad files stop the agent with the setting named: unreadable, not a CA, not PEM, key of another cert", () => {
    const base = {
      http: true,
      rpc: true,
      caFile: certs.ca,
      certFile: certs.server.cert,
      keyFile: certs.server.key,
    };
    const missing = path.join(dir, "nope.pem");
    assert.throws(
      () => serverTls({ ...base, caFile: missing }),
      /tls: ca_file: cannot read ".*nope\.pem": ENOENT/,
    );
    assert.throws(
      () => serverTls({ ...base, caFile: certs.client.cert }),
      /ca_file ".*client\.pem" is not a CA certificate/,
    );
    assert.throws(
      () => serverTls({ ...base, certFile: certs.server.key }),
      /cert_file ".*server-key\.pem" holds no PEM certificate/,
    );
    assert.throws(
      () => serverTls({ ...base, keyFile: certs.server.cert }),
      /key_file ".*server\.pem" holds no PEM private key/,
    );
    assert.throws(
      () => serverTls({ ...base, keyFile: certs.client.key }),
      /key_file ".*client-key\.pem" is not the key of cert_file ".*server\.pem"/,
    );
    // The messages name files, never their contents.
    try {
      serverTls({ ...base, keyFile: certs.client.key });
    } catch (err) {
      assert.doesNotMatch((err as Error).message, /PRIVATE KEY|BEGIN/);
    }
  });

  it("a node agent with rpc presents its certificate and, with verify_server_hostname, expects server.global.nomad", () => {
    assert.throws(() => clientTls({ rpc: true, caFile: certs.ca }), /cert_file is required with rpc = true/);
    const t = clientTls({
      rpc: true,
      caFile: certs.ca,
      certFile: certs.client.cert,
      keyFile: certs.client.key,
      verifyServerHostname: true,
    });
    assert.ok(t?.ca && t.cert && t.key);
    assert.equal(t?.serverName, "server.global.nomad");
    const httpOnly = clientTls({ http: true, caFile: certs.ca });
    assert.equal(httpOnly?.cert, undefined, "no certificate set, none presented");
    assert.equal(httpOnly?.serverName, undefined);
    assert.equal(dialAddress("http://10.0.0.1:4646", { rpc: true }), "https://10.0.0.1:4646");
    assert.equal(dialAddress("http://10.0.0.1:4646", undefined), "http://10.0.0.1:4646");
  });
});
