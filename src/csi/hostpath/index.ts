/** berth's reference CSI plugin (`berth csi-hostpath`). */
export { hostpathMain } from "./main.js";
export {
  startHostpathServer,
  HOSTPATH_PLUGIN_NAME,
  HOSTPATH_VERSION,
  type HostpathServer,
} from "./server.js";
export { parseHostpathFlags, HOSTPATH_USAGE, type HostpathConfig } from "./flags.js";
