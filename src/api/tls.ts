/**
 * The API client over HTTPS, with Nomad's client TLS settings (api.TLSConfig): a CA to check the
 * server against (`-ca-cert`, `-ca-path`), a certificate to present (`-client-cert`,
 * `-client-key`), the name to expect (`-tls-server-name`), or no check at all (`-tls-skip-verify`).
 * Node's fetch takes no TLS options, so an https:// request goes through node:https and comes back
 * as a standard Response; http:// requests keep using fetch.
 */
import fs from "node:fs";
import https from "node:https";
import path from "node:path";
import { Readable } from "node:stream";
import tls from "node:tls";
import type { ClientOptions } from "ws";

/** File paths and switches as the operator gave them (flags, BERTH_*, NOMAD_* variables). */
export interface ApiTlsOptions {
  /** PEM file with the CA(s) the server's certificate must chain to. */
  caCert?: string | undefined;
  /** A directory of PEM CA files (used when caCert is not set, as Nomad does). */
  caPath?: string | undefined;
  clientCert?: string | undefined;
  clientKey?: string | undefined;
  /** The name the server's certificate must carry (and the SNI sent); default: the address's host. */
  serverName?: string | undefined;
  /** Do not check the server's certificate at all. */
  insecure?: boolean | undefined;
}

/** What node:https and ws take. */
export interface TlsConnectOptions {
  ca?: Buffer[];
  cert?: Buffer;
  key?: Buffer;
  servername?: string;
  rejectUnauthorized: boolean;
  checkServerIdentity?: (host: string, cert: tls.PeerCertificate) => Error | undefined;
}

/** Reads the files named in `o`; a missing or unreadable one is an error naming its flag. */
export function loadTlsConnectOptions(o: ApiTlsOptions): TlsConnectOptions {
  const out: TlsConnectOptions = { rejectUnauthorized: !o.insecure };
  if (o.caCert) out.ca = [read(o.caCert, "-ca-cert")];
  else if (o.caPath) out.ca = readDir(o.caPath);
  if (Boolean(o.clientCert) !== Boolean(o.clientKey)) {
    throw new Error("-client-cert and -client-key must be given together");
  }
  if (o.clientCert && o.clientKey) {
    out.cert = read(o.clientCert, "-client-cert");
    out.key = read(o.clientKey, "-client-key");
  }
  const name = o.serverName;
  if (name) {
    out.servername = name;
    out.checkServerIdentity = (_host, cert) => tls.checkServerIdentity(name, cert);
  }
  return out;
}

function read(file: string, flag: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new Error(`${flag}: cannot read ${JSON.stringify(file)}: ${errCode(err)}`, { cause: err });
  }
}

function readDir(dir: string): Buffer[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch (err) {
    throw new Error(`-ca-path: cannot read ${JSON.stringify(dir)}: ${errCode(err)}`, { cause: err });
  }
  const files = names.map((n) => path.join(dir, n)).filter((f) => fs.statSync(f).isFile());
  if (files.length === 0) throw new Error(`-ca-path: ${JSON.stringify(dir)} holds no CA file`);
  return files.map((f) => read(f, "-ca-path"));
}

function errCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

/**
 * The same options for a `ws` WebSocket (exec sessions). ws hands them to tls.connect as they are;
 * its typings declare checkServerIdentity as returning a boolean, where Node's tls (which calls
 * it) takes an Error or undefined, hence the cast.
 */
export function wsTlsOptions(t: TlsConnectOptions): ClientOptions {
  const { checkServerIdentity, ...rest } = t;
  return {
    ...rest,
    ...(checkServerIdentity
      ? { checkServerIdentity: checkServerIdentity as unknown as ClientOptions["checkServerIdentity"] }
      : {}),
  };
}

export interface SendInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array<ArrayBuffer> | undefined;
  signal?: AbortSignal | undefined;
}

/** Statuses whose Response may carry no body (the Response constructor refuses one). */
const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * One request over HTTPS with `t`, answered as a fetch Response (the body streams as it arrives).
 * Rejects as fetch does: an AbortError when `signal` fires, another error when no answer came.
 */
export function httpsSend(url: URL, init: SendInit, t: TlsConnectOptions): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      {
        method: init.method ?? "GET",
        headers: init.headers,
        ...t,
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (Array.isArray(v)) for (const one of v) headers.append(k, one);
          else if (v !== undefined) headers.set(k, v);
        }
        const status = res.statusCode ?? 502;
        const empty = NULL_BODY.has(status) || init.method === "HEAD";
        if (empty) res.resume();
        const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, statusText: res.statusMessage ?? "", headers }));
      },
    );
    req.once("error", reject);
    req.end(init.body);
  });
}
