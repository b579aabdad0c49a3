/**
 * Certificates for berth's mutual TLS, made as Nomad's `tls ca create` / `tls cert create` make
 * them: ECDSA P-256 keys, SHA-256 signatures, a CA allowed to sign certificates, leaf certificates
 * for both server and client authentication whose common name is the role's name
 * (`server.global.nomad`) and whose SANs add `localhost` and, for agents, `127.0.0.1`. The X.509
 * encoding is @peculiar/x509's (on Node's WebCrypto); Node's own X509Certificate checks the result.
 */
import crypto from "node:crypto";
// @peculiar/x509's documented requirement (its dependency injection needs the Reflect metadata API),
// imported first so it is in place when the library loads.
import "reflect-metadata";
import * as x509 from "@peculiar/x509";

x509.cryptoProvider.set(crypto.webcrypto as Crypto);

const ALG = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
const DAY_MS = 86_400_000;

export interface Pem {
  cert: string;
  key: string;
}

export interface CaOpts {
  days: number;
  commonName?: string | undefined;
}

export interface CertOpts {
  ca: Pem;
  /** The common name, e.g. server.global.nomad (also a DNS SAN). */
  name: string;
  days: number;
  dnsNames: string[];
  ipAddresses: string[];
}

/** A random positive serial number (128 bits, as Nomad's), hex. */
function serial(): string {
  const b = crypto.randomBytes(16);
  b[0] = b[0]! & 0x7f;
  return b.toString("hex");
}

function validity(days: number): { notBefore: Date; notAfter: Date } {
  const now = Date.now();
  // A minute back, so a peer whose clock is a little behind does not see "not yet valid".
  return { notBefore: new Date(now - 60_000), notAfter: new Date(now + days * DAY_MS) };
}

async function newKeys(): Promise<CryptoKeyPair> {
  return crypto.webcrypto.subtle.generateKey(ALG, true, ["sign", "verify"]);
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await crypto.webcrypto.subtle.exportKey("pkcs8", key);
  return x509.PemConverter.encode(der, "PRIVATE KEY");
}

export async function generateCa(opts: CaOpts): Promise<Pem> {
  const keys = await newKeys();
  const sn = serial();
  const cn = opts.commonName || `Berth Agent CA ${BigInt("0x" + sn).toString()}`;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(true, undefined, true),
    new x509.KeyUsagesExtension(
      x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature,
      true,
    ),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(keys.publicKey),
  ];
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: sn,
    name: [{ CN: [cn] }, { O: ["berth"] }],
    ...validity(opts.days),
    signingAlgorithm: ALG,
    keys,
    extensions,
  });
  return { cert: cert.toString("pem") + "\n", key: (await keyPem(keys.privateKey)) + "\n" };
}

/** Imports a CA key (PKCS#8 or SEC1 PEM, as Nomad's CA keys are) for signing; checks it is the CA's. */
async function caSigner(ca: Pem): Promise<{ cert: x509.X509Certificate; key: CryptoKey }> {
  let nodeKey: crypto.KeyObject;
  try {
    nodeKey = crypto.createPrivateKey(ca.key);
  } catch {
    throw new Error("the CA key file holds no PEM private key");
  }
  let nodeCert: crypto.X509Certificate;
  try {
    nodeCert = new crypto.X509Certificate(ca.cert);
  } catch {
    throw new Error("the CA file holds no PEM certificate");
  }
  if (!nodeCert.ca) throw new Error("the CA file's certificate is not a CA certificate");
  if (!nodeCert.checkPrivateKey(nodeKey)) throw new Error("the CA key is not the key of the CA certificate");
  const details = nodeKey.asymmetricKeyDetails;
  if (nodeKey.asymmetricKeyType !== "ec" || details?.namedCurve !== "prime256v1") {
    throw new Error("the CA key must be an ECDSA P-256 key (as `berth tls ca create` makes)");
  }
  const der = nodeKey.export({ type: "pkcs8", format: "der" });
  const key = await crypto.webcrypto.subtle.importKey("pkcs8", der, ALG, false, ["sign"]);
  return { cert: new x509.X509Certificate(ca.cert), key };
}

export async function generateCert(opts: CertOpts): Promise<Pem> {
  const ca = await caSigner(opts.ca);
  const keys = await newKeys();
  const names = [
    ...opts.dnsNames.map((value) => ({ type: "dns" as const, value })),
    ...opts.ipAddresses.map((value) => ({ type: "ip" as const, value })),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: [{ CN: [opts.name] }],
    issuer: ca.cert.subject,
    ...validity(opts.days),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.key,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(
        x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
        true,
      ),
      new x509.ExtendedKeyUsageExtension([
        x509.ExtendedKeyUsage.serverAuth,
        x509.ExtendedKeyUsage.clientAuth,
      ]),
      new x509.SubjectAlternativeNameExtension(names),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(ca.cert),
    ],
  });
  const pem = { cert: cert.toString("pem") + "\n", key: (await keyPem(keys.privateKey)) + "\n" };
  verifyIssued(pem.cert, opts.ca.cert, opts.name);
  return pem;
}

/** Node's own check of what was made: signed by the CA and valid for `name` (Nomad's tlsutil.Verify). */
function verifyIssued(certPem: string, caPem: string, name: string): void {
  const cert = new crypto.X509Certificate(certPem);
  const ca = new crypto.X509Certificate(caPem);
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) {
    throw new Error("the new certificate does not verify against the CA");
  }
  if (cert.checkHost(name) === undefined) throw new Error(`the new certificate is not valid for ${name}`);
}
