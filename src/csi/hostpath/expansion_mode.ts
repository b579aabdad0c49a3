/** The values of csi-hostpath's --expansion flag (modify_features.ts says what each does). */
export const EXPANSION_MODES = ["online", "offline", "none"] as const;
export type ExpansionMode = (typeof EXPANSION_MODES)[number];

/** --expansion's value. */
export function expansionModeOf(v: string): ExpansionMode {
  if (!(EXPANSION_MODES as readonly string[]).includes(v))
    throw new Error(`--expansion: expected one of ${EXPANSION_MODES.join(", ")}, got ${JSON.stringify(v)}`);
  return v as ExpansionMode;
}
