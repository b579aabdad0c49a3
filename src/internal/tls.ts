/**
 * Mutual TLS between berth's parts, as Nomad does it: one CA signs every agent's certificate; a
 * server's certificate names `server.<region>.nomad`, a node agent's `client.<region>.nomad` (berth
 * has one region, "global"). This file loads and checks the PEM files of an agent's `tls` block and
 * holds the name rules both ends apply; the server's listener (server/tls_listener.ts) and the node
 * agent's dialer (client/rpc/server_conn.ts) take the loaded material.
 */
import crypto from "node:crypto";
import fs from "node:fs";
import type { PeerCertificate } from "node:tls";
import { BerthError } from "../structs/errors.js";

/** berth has one region; Nomad's certificate names carry it (`server.global.nomad`). */
export const TLS_REGION = "global";

export type TlsMinVersion = "TLSv1.2" | "TLSv1.3";

/** The PEM contents of an agent's ca_file, cert_file and key_file (each absent when not set). */
export interface TlsMaterial {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** What the server's listener does with TLS on (agent config `tls { http = true … }`). */
export interface ServerTls {
  material: TlsMaterial & { cert: Buffer; key: Buffer };
  /** Every HTTPS client must present a certificate signed by the CA, checked at the handshake. */
  verifyHttpsClient: boolean;
  /** The agent RPC path (/v1/agent/rpc) takes only peers with a certificate signed by the CA. */
  rpc: boolean;
  /** With `rpc`: that certificate must also name `client.<region>.nomad` or `server.<region>.nomad`. */
  verifyServerHostname: boolean;
  minVersion: TlsMinVersion;
}

/** How a node agent dials its server with TLS on. */
export interface ClientTls {
  /** The CA the server's certificate must chain to; absent: the system's CAs. */
  ca?: Buffer;
  /** Presented to the server (tls.rpc); both or neither. */
  cert?: Buffer;
  key?: Buffer;
  /** The name the server's certificate must carry (verify_server_hostname); absent: not checked. */
  serverName?: string;
  minVersion: TlsMinVersion;
}

/** Nomad's server certificate name: what a node agent checks with verify_server_hostname. */
export function serverCertName(region = TLS_REGION): string {
  return `server.${region}.nomad`;
}

/** Names a peer on the agent RPC path may carry with verify_server_hostname (Nomad's client names). */
export function rpcPeerCertNames(region = TLS_REGION): string[] {
  return [`client.${region}.nomad`, serverCertName(region)];
}

/** The names a peer's certificate is valid for: its common name and its DNS subject alt names. */
export function peerCertNames(cert: PeerCertificate): string[] {
  const names: string[] = [];
  const cn = cert.subject?.CN;
  if (typeof cn === "string") names.push(cn);
  for (const part of (cert.subjectaltname ?? "").split(",")) {
    const m = /^\s*DNS:(.+)$/.exec(part);
    if (m) names.push(m[1]!.trim());
  }
  return names;
}

export interface TlsFileSettings {
  caFile?: string | undefined;
  certFile?: string | undefined;
  keyFile?: string | undefined;
}

/**
 * Reads the PEM files and checks them before anything listens or dials: each parses, the CA file
 * holds a CA certificate, and the key is the certificate's. A mistake is one clear error naming the
 * setting (`where` is e.g. "tls"), never a failed handshake later.
 */
export function loadTlsMaterial(s: TlsFileSettings, where: string): TlsMaterial {
  const out: TlsMaterial = {};
  if (s.caFile) {
    out.ca = readPem(s.caFile, `${where}: ca_file`);
    const ca = parseCert(out.ca, `${where}: ca_file ${JSON.stringify(s.caFile)}`);
    if (!ca.ca) bad(`${where}: ca_file ${JSON.stringify(s.caFile)} is not a CA certificate`);
  }
  if (Boolean(s.certFile) !== Boolean(s.keyFile)) {
    bad(`${where}: cert_file and key_file must be set together`);
  }
  if (s.certFile && s.keyFile) {
    out.cert = readPem(s.certFile, `${where}: cert_file`);
    out.key = readPem(s.keyFile, `${where}: key_file`);
    const cert = parseCert(out.cert, `${where}: cert_file ${JSON.stringify(s.certFile)}`);
    let key: crypto.KeyObject;
    try {
      key = crypto.createPrivateKey(out.key);
    } catch {
      bad(`${where}: key_file ${JSON.stringify(s.keyFile)} holds no PEM private key`);
    }
    if (!cert.checkPrivateKey(key)) {
      bad(
        `${where}: key_file ${JSON.stringify(s.keyFile)} is not the key of cert_file ${JSON.stringify(s.certFile)}`,
      );
    }
  }
  return out;
}

function readPem(file: string, what: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    bad(
      `${what}: cannot read ${JSON.stringify(file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
}

function parseCert(pem: Buffer, what: string): crypto.X509Certificate {
  try {
    return new crypto.X509Certificate(pem);
  } catch {
    bad(`${what} holds no PEM certificate`);
  }
}

function bad(message: string): never {
  throw new BerthError("ERR_VALIDATION", message);
}
