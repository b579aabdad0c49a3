/**
 * The TLS options of the node agent's WebSocket to its server (agent config `tls`). The server's
 * certificate is always checked against the CA; its name only with verify_server_hostname, and
 * then it must be Nomad's `server.<region>.nomad`, whatever address was dialled — as Nomad's
 * agents do, which verify the chain alone otherwise (a server is dialled by IP as often as by name).
 */
import tls from "node:tls";
import type { ClientOptions } from "ws";
import type { ClientTls } from "../../internal/tls.js";

export function tlsDialOptions(t: ClientTls | undefined): ClientOptions {
  if (!t) return {};
  const expected = t.serverName;
  return {
    ...(t.ca ? { ca: t.ca } : {}),
    ...(t.cert && t.key ? { cert: t.cert, key: t.key } : {}),
    minVersion: t.minVersion,
    rejectUnauthorized: true,
    ...(expected ? { servername: expected } : {}),
    // ws hands this to tls.connect, which takes an Error or undefined; ws's typings say boolean.
    checkServerIdentity: ((_host: string, cert: tls.PeerCertificate) =>
      expected
        ? tls.checkServerIdentity(expected, cert)
        : undefined) as unknown as ClientOptions["checkServerIdentity"],
  };
}
