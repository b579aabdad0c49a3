/**
 * The Engine client for an endpoint as Nomad's `plugin "docker" { config { endpoint } }` writes it:
 * `unix:///path/to/docker.sock` (the default, /var/run/docker.sock) or `tcp://host:port`.
 */
import Docker from "dockerode";
import { BerthError } from "../../../structs/errors.js";

export function dockerClient(endpoint: string): Docker {
  return new Docker(endpointOptions(endpoint));
}

/** dockerode's connection options for `endpoint`. Pure. */
export function endpointOptions(endpoint: string): Docker.DockerOptions {
  if (endpoint.startsWith("unix://")) {
    const socketPath = endpoint.slice("unix://".length);
    if (!socketPath.startsWith("/")) throw badEndpoint(endpoint);
    return { socketPath };
  }
  if (endpoint.startsWith("tcp://")) {
    const url = new URL(`http://${endpoint.slice("tcp://".length)}`);
    if (url.hostname === "" || url.port === "") throw badEndpoint(endpoint);
    return { protocol: "http", host: url.hostname, port: Number(url.port) };
  }
  throw badEndpoint(endpoint);
}

function badEndpoint(endpoint: string): BerthError {
  return new BerthError(
    "ERR_VALIDATION",
    `docker endpoint ${JSON.stringify(endpoint)}: want unix:///path/to/docker.sock or tcp://host:port`,
  );
}
