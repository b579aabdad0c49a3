/**
 * The CLI's TLS settings as Nomad's: -ca-cert, -ca-path, -client-cert, -client-key,
 * -tls-server-name, -tls-skip-verify, each over BERTH_*, over NOMAD_* (NOMAD_SKIP_VERIFY read as Go's
 * ParseBool); a connection with none of them carries no `tls`.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { resolveConnection, resolveTls } from "../../../src/api/address.js";
import { loadTlsConnectOptions } from "../../../src/api/tls.js";
import { connectionFlags } from "../../../src/cli/flags.js";

describe("CLI TLS settings", () => {
  it("reads Nomad's variables; BERTH_ twins win; flags win over both", () => {
    const env = {
      NOMAD_CACERT: "/n/ca.pem",
      NOMAD_CAPATH: "/n/cas",
      NOMAD_CLIENT_CERT: "/n/cli.pem",
      NOMAD_CLIENT_KEY: "/n/cli-key.pem",
      NOMAD_TLS_SERVER_NAME: "server.global.nomad",
      NOMAD_SKIP_VERIFY: "true",
      BERTH_CACERT: "/b/ca.pem",
    };
    assert.deepEqual(resolveTls({}, env), {
      caCert: "/b/ca.pem",
      caPath: "/n/cas",
      clientCert: "/n/cli.pem",
      clientKey: "/n/cli-key.pem",
      serverName: "server.global.nomad",
      insecure: true,
    });
    const flags = connectionFlags([
      "-ca-cert=/f/ca.pem",
      "-client-cert",
      "/f/c.pem",
      "-client-key=/f/k.pem",
      "-tls-server-name=s.example",
      "-tls-skip-verify",
      "job.hcl",
    ]);
    assert.deepEqual(flags, {
      caCert: "/f/ca.pem",
      clientCert: "/f/c.pem",
      clientKey: "/f/k.pem",
      tlsServerName: "s.example",
      tlsSkipVerify: true,
    });
    const t = resolveTls(flags, env);
    assert.equal(t.caCert, "/f/ca.pem");
    assert.equal(t.serverName, "s.example");
  });

  it("NOMAD_SKIP_VERIFY as Go's ParseBool; BERTH_SKIP_VERIFY=false wins over NOMAD_SKIP_VERIFY=1", () => {
    for (const v of ["1", "t", "TRUE", "True"])
      assert.equal(resolveTls({}, { NOMAD_SKIP_VERIFY: v }).insecure, true, v);
    for (const v of ["0", "f", "false", "nope"])
      assert.equal(resolveTls({}, { NOMAD_SKIP_VERIFY: v }).insecure, false, v);
    assert.equal(resolveTls({}, { BERTH_SKIP_VERIFY: "false", NOMAD_SKIP_VERIFY: "1" }).insecure, false);
  });

  it("a connection without TLS settings has no tls; with one it has", () => {
    assert.equal("tls" in resolveConnection({}, {}), false);
    assert.equal(resolveConnection({}, { NOMAD_CACERT: "/ca.pem" }).tls?.caCert, "/ca.pem");
  });

  it("an unreadable file is an error naming its flag; a certificate needs its key", () => {
    assert.throws(
      () => loadTlsConnectOptions({ caCert: "/nonexistent/ca.pem" }),
      /-ca-cert: cannot read "\/nonexistent\/ca\.pem": ENOENT/,
    );
    assert.throws(
      () => loadTlsConnectOptions({ clientCert: "/c.pem" }),
      /-client-cert and -client-key must be given together/,
    );
    assert.throws(() => loadTlsConnectOptions({ caPath: "/nonexistent" }), /-ca-path: cannot read/);
    assert.deepEqual(loadTlsConnectOptions({ insecure: true }), { rejectUnauthorized: false });
  });
});
