/**
 * Certificates for TLS tests, made with the same code as `berth tls ca create` / `tls cert create`
 * (the e2e test runs the real commands): a cluster CA with a server, a client and a CLI certificate,
 * and a foreign CA with a client certificate of the right name that the cluster must not trust.
 */
import fs from "node:fs";
import path from "node:path";
import { generateCa, generateCert, type Pem } from "../../src/cli/commands/tls_generate.js";

export interface CertFiles {
  cert: string;
  key: string;
}

export interface TestCerts {
  dir: string;
  ca: string;
  server: CertFiles;
  client: CertFiles;
  cli: CertFiles;
  /** Signed by the cluster's CA but named client.global.nomad: wrong for a server. */
  foreignCa: string;
  /** client.global.nomad, signed by the foreign CA. */
  foreignClient: CertFiles;
}

function write(dir: string, name: string, pem: Pem): CertFiles {
  const cert = path.join(dir, `${name}.pem`);
  const key = path.join(dir, `${name}-key.pem`);
  fs.writeFileSync(cert, pem.cert);
  fs.writeFileSync(key, pem.key, { mode: 0o600 });
  return { cert, key };
}

export async function makeTestCerts(dir: string): Promise<TestCerts> {
  const ca = await generateCa({ days: 2 });
  const foreign = await generateCa({ days: 2 });
  const agent = (name: string, signer: Pem, ips = ["127.0.0.1"]) =>
    generateCert({ ca: signer, name, days: 2, dnsNames: [name, "localhost"], ipAddresses: ips });
  const caFile = path.join(dir, "ca.pem");
  fs.writeFileSync(caFile, ca.cert);
  fs.writeFileSync(path.join(dir, "ca-key.pem"), ca.key, { mode: 0o600 });
  const foreignCa = path.join(dir, "foreign-ca.pem");
  fs.writeFileSync(foreignCa, foreign.cert);
  return {
    dir,
    ca: caFile,
    server: write(dir, "server", await agent("server.global.nomad", ca)),
    client: write(dir, "client", await agent("client.global.nomad", ca)),
    cli: write(dir, "cli", await agent("cli.global.nomad", ca, [])),
    foreignCa,
    foreignClient: write(dir, "foreign-client", await agent("client.global.nomad", foreign)),
  };
}
