/**
 * `berth tls ca create` / `tls cert create` as functions: flags checked as Nomad's (exactly one role,
 * days, names), files written once with Nomad's names, keys 0600, certificates for their role.
 */
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { tlsCaCreate } from "../../../src/cli/commands/tls_ca_create.js";
import { tlsCertCreate } from "../../../src/cli/commands/tls_cert_create.js";
import { captureIO } from "../../fakes/command_io.js";

let dir: string;
let cwd: string;

before(() => {
  cwd = process.cwd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-tlscmd-"));
  process.chdir(dir);
});
after(() => {
  process.chdir(cwd);
  fs.rmSync(dir, { recursive: true, force: true });
});

describe("tls commands", () => {
  it("refuses bad flags by name", () => {
    assert.throws(() => tlsCertCreate.parse(["create"]), /exactly one of -server, -client or -cli/);
    assert.throws(() => tlsCertCreate.parse(["create", "-server", "-client"]), /exactly one of/);
    assert.throws(
      () => tlsCertCreate.parse(["create", "-server", "-days", "0"]),
      /-days must be a whole number of days/,
    );
    assert.throws(
      () => tlsCertCreate.parse(["create", "-server", "-additional-ipaddress", "10.0.0.300"]),
      /-additional-ipaddress "10\.0\.0\.300" is not an IP address/,
    );
    assert.throws(
      () => tlsCertCreate.parse(["create", "-server", "-additional-dnsname", "a b"]),
      /-additional-dnsname "a b" is not a DNS name/,
    );
    assert.throws(
      () => tlsCertCreate.parse(["create", "-server", "-region", "../x"]),
      /-region "\.\.\/x" is not a DNS name/,
    );
    assert.throws(() => tlsCertCreate.parse(["-server"]), /tls cert create/);
    assert.throws(() => tlsCaCreate.parse(["create", "-days", "ten"]), /-days must be/);
    assert.equal(tlsCaCreate.parse(["create"]).days, 1825);
    assert.equal(tlsCertCreate.parse(["create", "-cli"]).days, 365);
  });

  it("makes a CA, then a server certificate in another region with extra names, never over a file", async () => {
    const io = captureIO("http://unused");
    assert.equal(await tlsCaCreate.run(tlsCaCreate.parse(["create"]), io), 0, io.err.join("\n"));
    assert.deepEqual(io.out, [
      "==> CA certificate saved to: nomad-agent-ca.pem",
      "==> CA certificate key saved to: nomad-agent-ca-key.pem",
    ]);
    assert.equal(fs.statSync("nomad-agent-ca-key.pem").mode & 0o777, 0o600);

    const p = tlsCertCreate.parse([
      "create",
      "-server",
      "-region=eu",
      "-additional-dnsname=berth.example.com",
      "-additional-ipaddress=10.1.2.3",
      "-days=30",
    ]);
    const io2 = captureIO("http://unused");
    assert.equal(await tlsCertCreate.run(p, io2), 0, io2.err.join("\n"));
    assert.ok(
      io2.err.some((l) => l.includes("WARNING")),
      "a server certificate comes with a warning",
    );
    const cert = new crypto.X509Certificate(fs.readFileSync("eu-server-nomad.pem"));
    const ca = new crypto.X509Certificate(fs.readFileSync("nomad-agent-ca.pem"));
    assert.ok(cert.verify(ca.publicKey));
    assert.match(cert.subject, /CN=server\.eu\.nomad/);
    assert.equal(
      cert.subjectAltName,
      "DNS:berth.example.com, DNS:server.eu.nomad, DNS:localhost, IP Address:10.1.2.3, IP Address:127.0.0.1",
    );
    assert.ok(new Date(cert.validTo).getTime() - Date.now() < 31 * 86_400_000, "-days is honoured");
    assert.equal(fs.statSync("eu-server-nomad-key.pem").mode & 0o777, 0o600);

    const io3 = captureIO("http://unused");
    assert.equal(await tlsCertCreate.run(p, io3), 1);
    assert.match(io3.err.join("\n"), /Certificate file 'eu-server-nomad\.pem' already exists/);
    const io4 = captureIO("http://unused");
    assert.equal(await tlsCaCreate.run(tlsCaCreate.parse(["create"]), io4), 1);
    assert.match(io4.err.join("\n"), /CA certificate file 'nomad-agent-ca\.pem' already exists/);
  });

  it("refuses a CA key that is not the CA's", async () => {
    fs.mkdirSync("other");
    process.chdir("other");
    try {
      const io = captureIO("http://unused");
      assert.equal(await tlsCaCreate.run(tlsCaCreate.parse(["create"]), io), 0);
      const mixed = tlsCertCreate.parse(["create", "-client", "-ca", "../nomad-agent-ca.pem"]);
      const io2 = captureIO("http://unused");
      assert.equal(await tlsCertCreate.run(mixed, io2), 1);
      assert.match(io2.err.join("\n"), /the CA key is not the key of the CA certificate/);
      assert.equal(fs.existsSync("global-client-nomad.pem"), false, "nothing written");
    } finally {
      process.chdir(dir);
    }
  });
});
