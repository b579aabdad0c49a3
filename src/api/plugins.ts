/** The CSI plugin routes of the API client (Nomad's api/csi.go, `CSIPlugins()`). */
import { enc, listQuery, type ApiTransport, type ListOptions } from "./transport.js";
import type { CSIPlugin, CSIPluginListStub } from "./types.js";

export class PluginsApi {
  constructor(private readonly t: ApiTransport) {}

  list(opts: ListOptions = {}): Promise<CSIPluginListStub[]> {
    return this.t.request("GET", "/v1/plugins", { query: { type: "csi", ...listQuery(opts) } });
  }
  /** The plugin with berth's measured capacities (`?capacity=true`), which `plugin status` shows. */
  info(id: string): Promise<CSIPlugin> {
    return this.t.request("GET", `/v1/plugin/csi/${enc(id)}`, { query: { capacity: "true" } });
  }
}
