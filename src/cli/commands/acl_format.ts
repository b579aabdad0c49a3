/** How the ACL commands print tokens and policies (Nomad's command/acl_*.go layouts). */
import type { ACLPolicy, ACLPolicyListStub, ACLToken, ACLTokenListStub } from "../../api/index.js";
import { kv, table } from "../format.js";

/** Go's time.Time `%v` of an RFC 3339 UTC time: "2026-01-02 15:04:05.123 +0000 UTC". */
export function goTimeText(rfc3339: string | undefined): string {
  if (!rfc3339 || rfc3339.startsWith("0001-01-01")) return "<none>";
  const ms = Date.parse(rfc3339);
  if (!Number.isFinite(ms)) return rfc3339;
  return (
    new Date(ms)
      .toISOString()
      .replace("T", " ")
      .replace(/\.000Z$|Z$/, "") + " +0000 UTC"
  );
}

/** Nomad's outputACLToken: key/values, then (client tokens) the roles section. */
export function tokenLines(t: ACLToken): string[] {
  const pairs: [string, string][] = [
    ["Accessor ID", t.AccessorID],
    ["Secret ID", t.SecretID || "<hidden>"],
    ["Name", t.Name],
    ["Type", t.Type],
    ["Global", String(t.Global)],
    ["Create Time", goTimeText(t.CreateTime)],
    ["Expiry Time", goTimeText(t.ExpirationTime)],
    ["Create Index", String(t.CreateIndex)],
    ["Modify Index", String(t.ModifyIndex)],
  ];
  if (t.Type === "management") return kv([...pairs, ["Policies", "n/a"], ["Roles", "n/a"]]);
  return [...kv([...pairs, ["Policies", `[${(t.Policies ?? []).join(" ")}]`]]), "", "Roles", "<none>"];
}

export function tokenListLines(tokens: ACLTokenListStub[], nowMs: number): string[] {
  if (tokens.length === 0) return ["No tokens found"];
  return table([
    ["Name", "Type", "Global", "Accessor ID", "Expired"],
    ...tokens.map((t) => {
      const exp = t.ExpirationTime ? Date.parse(t.ExpirationTime) : NaN;
      const expired = Number.isFinite(exp) && exp > 0 && exp < nowMs;
      return [t.Name, t.Type, String(t.Global), t.AccessorID, String(expired)];
    }),
  ]);
}

export function policyLines(p: ACLPolicy): string[] {
  return [
    ...kv([
      ["Name", p.Name],
      ["Description", p.Description],
      ["CreateIndex", String(p.CreateIndex)],
      ["ModifyIndex", String(p.ModifyIndex)],
    ]),
    "",
    "Rules",
    "",
    ...p.Rules.split("\n"),
  ];
}

export function policyListLines(policies: ACLPolicyListStub[]): string[] {
  if (policies.length === 0) return ["No policies found"];
  return table([["Name", "Description"], ...policies.map((p) => [p.Name, p.Description])]);
}
