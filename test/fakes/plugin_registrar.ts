/** A PluginRegistrar that records register/deregister calls and keeps the live plugins. */
import type { PluginRegistrar, RegisteredPlugin } from "../../src/client/dynamicplugins/types.js";

export class RecordingRegistrar implements PluginRegistrar {
  readonly live = new Map<string, RegisteredPlugin>();
  readonly calls: string[] = [];

  register(p: RegisteredPlugin): void {
    this.calls.push(`register ${p.role}`);
    this.live.set(`${p.role}/${p.pluginId}`, p);
  }

  deregister(role: RegisteredPlugin["role"], pluginId: string, allocId: string): void {
    this.calls.push(`deregister ${role}`);
    if (this.live.get(`${role}/${pluginId}`)?.allocId === allocId) this.live.delete(`${role}/${pluginId}`);
  }
}
