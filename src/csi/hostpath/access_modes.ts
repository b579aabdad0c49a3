/**
 * Which volume capabilities csi-hostpath accepts. Access modes: the five of CSI 1.0 always; CSI
 * 1.5's SINGLE_NODE_SINGLE_WRITER and SINGLE_NODE_MULTI_WRITER only under --single-node-multi-writer,
 * which also advertises the SINGLE_NODE_MULTI_WRITER controller and node capability (as the spec
 * ties the two together); without the flag it refuses them as a pre-1.5 plugin would, so tests see
 * what a CO sends a plugin that lacks the capability. Access types: mount, and block (block.ts).
 */
import { status } from "@grpc/grpc-js";
import type { WireVolumeCapability } from "../wire.js";
import { rpcError } from "./context.js";
import type { HostpathConfig } from "./flags.js";

const CSI_1_0_MODES = new Set([
  "SINGLE_NODE_WRITER",
  "SINGLE_NODE_READER_ONLY",
  "MULTI_NODE_READER_ONLY",
  "MULTI_NODE_SINGLE_WRITER",
  "MULTI_NODE_MULTI_WRITER",
]);
const CSI_1_5_MODES = new Set(["SINGLE_NODE_SINGLE_WRITER", "SINGLE_NODE_MULTI_WRITER"]);

type ModeConfig = Pick<HostpathConfig, "singleNodeMultiWriter">;

/** Why csi-hostpath cannot serve `c`, or null when it can. */
export function capabilityProblem(config: ModeConfig, c: WireVolumeCapability): string | null {
  if (!c.mount && !c.block) return "volume capability needs mount or block access";
  const mode = c.access_mode?.mode ?? "UNKNOWN";
  if (mode === "UNKNOWN") return "volume capability needs an access mode";
  if (CSI_1_0_MODES.has(mode)) return null;
  if (CSI_1_5_MODES.has(mode)) {
    return config.singleNodeMultiWriter === true
      ? null
      : `access mode ${mode} needs the SINGLE_NODE_MULTI_WRITER capability, which this csi-hostpath does not advertise (--single-node-multi-writer)`;
  }
  return `unknown access mode ${mode}`;
}

/** INVALID_ARGUMENT naming the first capability csi-hostpath cannot serve. */
export function requireCapabilities(config: ModeConfig, caps: WireVolumeCapability[]): void {
  for (const c of caps) {
    const problem = capabilityProblem(config, c);
    if (problem) throw rpcError(status.INVALID_ARGUMENT, problem);
  }
}

/** The SINGLE_NODE_MULTI_WRITER RPC capability (controller and node alike), when advertised. */
export function singleNodeMultiWriterCapabilities(config: ModeConfig): { rpc: { type: string } }[] {
  return config.singleNodeMultiWriter === true ? [{ rpc: { type: "SINGLE_NODE_MULTI_WRITER" } }] : [];
}
