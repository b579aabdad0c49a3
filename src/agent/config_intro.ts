/**
 * The server's `client_introduction` block (Nomad 1.11's names and defaults; server/rpc/node_intro.ts):
 *
 *   server {
 *     client_introduction {
 *       enforcement          = "warn"   # "none" | "warn" | "strict": what a never-seen node ID
 *                                       # without a valid introduction token gets
 *       default_identity_ttl = "5m"     # TTL of a token whose request names none
 *       max_identity_ttl     = "30m"    # a longer requested TTL is cut to this
 *     }
 *   }
 */
import type { Body } from "../api/specs/body.js";
import type { IntroEnforcement, IntroSettings } from "../server/rpc/node_intro.js";

const ENFORCEMENTS: readonly IntroEnforcement[] = ["none", "warn", "strict"];

export function parseClientIntroduction(b: Body): Partial<IntroSettings> {
  const out: Partial<IntroSettings> = {};
  const enforcement = b.string("enforcement");
  if (enforcement !== undefined) {
    if (!(ENFORCEMENTS as readonly string[]).includes(enforcement)) {
      throw b.error(`enforcement must be "none", "warn" or "strict", got ${JSON.stringify(enforcement)}`);
    }
    out.enforcement = enforcement as IntroEnforcement;
  }
  for (const [key, field] of [
    ["default_identity_ttl", "defaultTtlMs"],
    ["max_identity_ttl", "maxTtlMs"],
  ] as const) {
    const ns = b.duration(key);
    if (ns === undefined) continue;
    if (ns < 1e9) throw b.error(`${key} must be at least 1s`);
    out[field] = Math.round(ns / 1e6);
  }
  b.finish();
  return out;
}
