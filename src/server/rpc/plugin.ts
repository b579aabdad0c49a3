/** CSI plugin reads. Plugins are derived from node fingerprints by the state store. */
import type { Allocation } from "../../structs/alloc.js";
import { notFound } from "../../structs/errors.js";
import type { CSIPlugin, CSIPluginSummary } from "../../structs/plugin.js";
import type { ServerDeps } from "../deps.js";

export class PluginEndpoint {
  constructor(private readonly deps: ServerDeps) {}

  /** The summaries: a list never reads the plugins' instances (Nomad lists stubs). */
  list(): CSIPluginSummary[] {
    return this.deps.store.listPlugins();
  }

  get(id: string): CSIPlugin {
    const plugin = this.deps.store.getPlugin(id);
    if (!plugin) throw notFound("plugin", id);
    return plugin;
  }

  /** The plugin's own allocs (the tasks that run its instances), as the fingerprints name them. */
  allocations(plugin: CSIPlugin): Allocation[] {
    const ids = new Set(
      [...Object.values(plugin.Controllers), ...Object.values(plugin.Nodes)].map((i) => i.AllocID),
    );
    const out: Allocation[] = [];
    for (const id of ids) {
      const a = id ? this.deps.store.getAlloc(id) : undefined;
      if (a) out.push(a);
    }
    return out;
  }
}
