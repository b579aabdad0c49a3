/**
 * The ACL token the UI sends (Nomad's Settings → Tokens). The secret is kept in this tab's
 * sessionStorage only and sent as `X-Nomad-Token` on every request; `GET /v1/acl/token/self` says
 * whose it is. With ACLs off the API ignores tokens and this page says so.
 */
import { useState } from "preact/hooks";
import { ApiError, errorText, getJson, getToken, setToken } from "../api.js";
import { KV, Page, Section } from "../components.js";
import type { ACLToken } from "../types.js";

type Check = { s: "none" } | { s: "ok"; token: ACLToken } | { s: "failed"; text: string };

export function TokensPage() {
  const [secret, setSecret] = useState(getToken());
  const [saved, setSaved] = useState(getToken() !== "");
  const [check, setCheck] = useState<Check>({ s: "none" });

  const save = async (e: Event) => {
    e.preventDefault();
    setToken(secret.trim());
    setSaved(secret.trim() !== "");
    if (secret.trim() === "") {
      setCheck({ s: "none" });
      return;
    }
    try {
      const { data } = await getJson<ACLToken>("/v1/acl/token/self");
      setCheck({ s: "ok", token: data });
    } catch (err) {
      const off = err instanceof ApiError && err.code === "ERR_ACL_DISABLED";
      setCheck({
        s: "failed",
        text: off ? "ACLs are disabled on this cluster: no token is needed." : errorText(err),
      });
    }
  };
  const clear = () => {
    setToken("");
    setSecret("");
    setSaved(false);
    setCheck({ s: "none" });
  };

  return (
    <Page title="ACL token">
      <Section title="Token">
        <form class="token-form" onSubmit={(e) => void save(e)}>
          <label>
            Secret ID{" "}
            <input
              type="password"
              name="secret"
              autocomplete="off"
              value={secret}
              onInput={(e) => setSecret(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="btn">
            Set token
          </button>
          <button type="button" class="btn btn-quiet" onClick={clear}>
            Clear
          </button>
        </form>
        <p class="muted">
          {saved
            ? "A token is set for this browser tab; every request sends it as X-Nomad-Token."
            : "No token is set: requests are anonymous."}
        </p>
        {check.s === "ok" && (
          <KV
            items={[
              ["Name", check.token.Name || "–"],
              ["Type", check.token.Type],
              ["Accessor ID", <code>{check.token.AccessorID}</code>],
              ["Policies", (check.token.Policies ?? []).join(", ") || "–"],
            ]}
          />
        )}
        {check.s === "failed" && (
          <p class="error" role="alert">
            {check.text}
          </p>
        )}
      </Section>
    </Page>
  );
}
