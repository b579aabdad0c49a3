/**
 * Pages of a plugin's healthy controllers (StateReader healthyPluginInstancesAfter), kept while
 * they cannot have changed, so a controller call in a steady cluster asks the store nothing: every
 * claim and release step makes one or two of these reads, which were a tenth of the server's CPU
 * with 64 claims in parallel.
 *
 * Valid because controller instances are derived from node records alone (a node write moves its
 * instance rows, sqlite_plugin_writer.ts applyNodeDeltas), and the nodes table's index moves on
 * every node write: while it has not moved, a page read before is exactly what the store would
 * answer now. Pages are only read, never changed, by the callers. At most MAX_PAGES are kept (the
 * rotation walks one cursor per controller); past that they are all dropped and read again.
 */
import type { CSIInfo } from "../../structs/plugin.js";
import type { StateReader } from "../state/store.js";

const MAX_PAGES = 1_024;

export type ControllerPage = readonly (readonly [string, CSIInfo])[];

export class HealthyControllerPages {
  private at = -1;
  private readonly pages = new Map<string, ControllerPage>();

  constructor(private readonly state: Pick<StateReader, "tableIndex" | "healthyPluginInstancesAfter">) {}

  /** Up to `limit` healthy controllers of the plugin with a node ID above `after`, in ID order. */
  after(pluginId: string, after: string, limit: number): ControllerPage {
    const at = this.state.tableIndex("nodes");
    if (at !== this.at || this.pages.size >= MAX_PAGES) {
      this.pages.clear();
      this.at = at;
    }
    const key = `${pluginId}\u0000${after}\u0000${limit}`;
    let page = this.pages.get(key);
    if (!page) {
      page = this.state.healthyPluginInstancesAfter(pluginId, "controller", after, limit);
      this.pages.set(key, page);
    }
    return page;
  }
}
