/**
 * The namespace routes of the API client (Nomad's api/namespace.go, `Namespaces()`). The name is a
 * path segment; the client's own `?namespace=` plays no part.
 */
import { enc, type ApiTransport } from "./transport.js";
import type { Namespace, NamespaceSpec } from "./types.js";

export class NamespacesApi {
  constructor(private readonly t: ApiTransport) {}

  /** By name; `prefix` keeps those whose name starts with it. */
  list(opts: { prefix?: string } = {}): Promise<Namespace[]> {
    return this.t.request("GET", "/v1/namespaces", { query: { prefix: opts.prefix || undefined } });
  }
  info(name: string): Promise<Namespace> {
    return this.t.request("GET", `/v1/namespace/${enc(name)}`);
  }
  /** Creates or updates the namespace (Nomad's `PUT /v1/namespace`). */
  async register(ns: NamespaceSpec): Promise<void> {
    await this.t.request("PUT", "/v1/namespace", { body: ns });
  }
  async delete(name: string): Promise<void> {
    await this.t.request("DELETE", `/v1/namespace/${enc(name)}`);
  }
}
