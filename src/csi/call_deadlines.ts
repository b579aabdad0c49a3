/** The default deadlines of CSI calls (csi/client.ts): every call has one. */

/**
 * Default deadlines: Probe must answer fast; the other cheap calls (plugin info, capabilities,
 * NodeGetInfo) touch no storage, so a plugin that takes longer is hung; node/controller work may
 * be slow storage.
 */
export const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
export const DEFAULT_CHEAP_CALL_TIMEOUT_MS = 10_000;
export const DEFAULT_CALL_TIMEOUT_MS = 30_000;
