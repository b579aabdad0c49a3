/**
 * Plugins that run as berth tasks register here (the plugin supervisor hook writes, the
 * csimanager reads). A monolith plugin registers twice, once per role.
 */
export type PluginRole = "csi-controller" | "csi-node";

export interface RegisteredPlugin {
  role: PluginRole;
  pluginId: string;
  allocId: string;
  taskName: string;
  /** Host path of the plugin's unix socket (`<hostDir>/csi.sock`). */
  socketPath: string;
  /** Host path of the plugin's directory (socket, staging and per-alloc publish targets). */
  hostDir: string;
  /** The same directory in the plugin task's view (csi_plugin.mount_dir). */
  mountDir: string;
  /** Base of staging/publish paths in the plugin's view; equals mountDir unless configured. */
  stagePublishBaseDir: string;
  /** Unix milliseconds. */
  registeredAt: number;
}

/** What the plugin supervisor needs from the registry. */
export interface PluginRegistrar {
  register(plugin: RegisteredPlugin): void;
  /** Removes the entry only if it still belongs to `allocId` (a newer alloc may have replaced it). */
  deregister(role: PluginRole, pluginId: string, allocId: string): void;
}
