/**
 * A volume's condition as its controller plugin sees it (issue 15): the `status.volume_condition`
 * of ControllerGetVolume, asked by the leader when the plugin advertises both GET_VOLUME and
 * VOLUME_CONDITION, kept on the volume as `CSIVolume.ControllerCondition` beside the node-reported
 * `Usage`. Nomad has no such record; the field names are berth's, answered with `?usage=true`.
 *
 * Changes only: the record is written when the abnormal flag or the (redacted) message differs
 * from the stored one, never for a poll that saw the same condition, so a steady volume costs no
 * write however often it is polled; `UpdateTime` is when the condition last changed.
 */
import { MAX_USAGE_MESSAGE_CHARS, redactUsageMessage } from "./volume_usage.js";

export interface CSIVolumeControllerCondition {
  Abnormal: boolean;
  /** The plugin's message, the volume's secret values redacted, cut to MAX_USAGE_MESSAGE_CHARS. */
  Message: string;
  /** Unix nanoseconds of the poll that last changed the record. */
  UpdateTime: number;
}

/** What one ControllerGetVolume poll observed. */
export interface ObservedCondition {
  Abnormal: boolean;
  Message: string;
}

/** The message as stored: secret values redacted, then cut to the longest message kept. */
export function conditionMessage(message: string, secrets: Record<string, string> | null): string {
  const m = redactUsageMessage(message, secrets);
  return m.length <= MAX_USAGE_MESSAGE_CHARS ? m : m.slice(0, MAX_USAGE_MESSAGE_CHARS - 1) + "…";
}

/**
 * The record to write for `observed` on a volume that holds `prev` (read defensively: a stored
 * record from before the field, or a malformed one, counts as none), or null when nothing changed
 * and nothing must be written.
 */
export function nextControllerCondition(
  prev: unknown,
  observed: ObservedCondition,
  secrets: Record<string, string> | null,
  nowNs: number,
): CSIVolumeControllerCondition | null {
  const message = conditionMessage(observed.Message, secrets);
  if (typeof prev === "object" && prev !== null) {
    const p = prev as Partial<CSIVolumeControllerCondition>;
    if (p.Abnormal === observed.Abnormal && p.Message === message) return null;
  }
  return { Abnormal: observed.Abnormal, Message: message, UpdateTime: nowNs };
}

/**
 * ClientCSI.ControllerGetVolume: ControllerGetVolume of one volume, run by a node hosting a healthy
 * controller of the plugin (which must advertise GET_VOLUME and VOLUME_CONDITION).
 */
export interface ControllerGetVolumeRequest {
  PluginID: string;
  ExternalVolumeID: string;
}
export interface ControllerGetVolumeResponse {
  ExternalID: string;
  PublishedExternalNodeIDs: string[];
  /** The plugin's volume_condition; null when its answer carried none. */
  Condition: { Abnormal: boolean; Message: string } | null;
}
