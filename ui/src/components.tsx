/** The UI's small building blocks: tables, badges, key/value lists, errors, confirmed actions. */
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { errorText } from "./api.js";
import type { Live } from "./blocking.js";

export function Page(props: {
  title: ComponentChildren;
  sub?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <section class="page">
      <header class="page-head">
        <h1>{props.title}</h1>
        {props.sub !== undefined && <div class="page-sub">{props.sub}</div>}
      </header>
      {props.children}
    </section>
  );
}

export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="section" aria-label={props.title}>
      <div class="section-head">
        <h2>{props.title}</h2>
        {props.actions !== undefined && <div class="actions">{props.actions}</div>}
      </div>
      {props.children}
    </section>
  );
}

/** A status word with a colour for its meaning (running/healthy green, failed/down red, …). */
export function Badge(props: { value: string | boolean; title?: string }) {
  const v = typeof props.value === "boolean" ? (props.value ? "yes" : "no") : props.value;
  return (
    <span class={`badge badge-${tone(v)}`} title={props.title}>
      {v || "–"}
    </span>
  );
}

const GOOD = new Set(["running", "ready", "healthy", "eligible", "complete", "yes", "successful", "taken"]);
const BAD = new Set([
  "failed",
  "down",
  "lost",
  "dead",
  "unhealthy",
  "abnormal",
  "no",
  "ineligible",
  "cancelled",
]);
const WAIT = new Set([
  "pending",
  "unknown",
  "disconnected",
  "blocked",
  "initializing",
  "draining",
  "queued",
  "node-detached",
  "controller-detached",
  "ready-to-free",
]);

function tone(v: string): string {
  if (GOOD.has(v)) return "good";
  if (BAD.has(v)) return "bad";
  if (WAIT.has(v)) return "wait";
  return "plain";
}

/** A table with a header row, or `empty` when there are no rows. */
export function Table<T>(props: {
  rows: readonly T[];
  cols: readonly [string, (row: T) => ComponentChildren][];
  rowKey: (row: T) => string;
  empty: string;
  label: string;
}) {
  if (props.rows.length === 0) return <p class="empty">{props.empty}</p>;
  return (
    <table aria-label={props.label}>
      <thead>
        <tr>
          {props.cols.map(([h]) => (
            <th key={h}>{h}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((r) => (
          <tr key={props.rowKey(r)} data-key={props.rowKey(r)}>
            {props.cols.map(([h, cell]) => (
              <td key={h} data-col={h}>
                {cell(r)}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Label/value pairs (a definition list); a value of undefined is left out. */
export function KV(props: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {props.items
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => (
          <div class="kv-item" key={k}>
            <dt>{k}</dt>
            <dd>{v}</dd>
          </div>
        ))}
    </dl>
  );
}

export function ErrorBox(props: { error: unknown }) {
  return (
    <p class="error" role="alert">
      {errorText(props.error)}
    </p>
  );
}

/**
 * What a live query has to show: its error (kept above the last good answer, which stays), a
 * loading line, or `render(data)`.
 */
export function Loaded<T>(props: { live: Live<T>; render: (data: T) => ComponentChildren }) {
  const { data, error, loading } = props.live;
  return (
    <>
      {error !== undefined && <ErrorBox error={error} />}
      {data === undefined ? loading ? <p class="loading">Loading…</p> : null : props.render(data)}
    </>
  );
}

type ActionState =
  | { s: "idle" }
  | { s: "confirm" }
  | { s: "running" }
  | { s: "done"; text: string }
  | { s: "failed"; error: unknown };

/** What an action came to: `run`'s message, or its error. */
export type Outcome = { ok: true; text: string } | { ok: false; error: unknown };

/** An action's outcome, as ConfirmAction shows it (a status line, or the API's error text). */
export function OutcomeLine(props: { outcome: Outcome | null }) {
  const o = props.outcome;
  if (!o) return null;
  return o.ok ? (
    <p class="ok" role="status">
      {o.text}
    </p>
  ) : (
    <ErrorBox error={o.error} />
  );
}

/**
 * A button whose action runs only after a second, explicit confirmation, then shows the outcome:
 * `run`'s message, or the API's error text as it came. With `report`, the outcome goes to the
 * caller instead, to be shown where it outlives this button (a table row that the action removes).
 */
export function ConfirmAction(props: {
  label: string;
  question: string;
  confirmLabel: string;
  run: () => Promise<string>;
  danger?: boolean;
  disabled?: boolean;
  report?: (o: Outcome) => void;
  children?: ComponentChildren;
}) {
  const [state, setState] = useState<ActionState>({ s: "idle" });
  const go = async () => {
    setState({ s: "running" });
    props.report?.({ ok: true, text: "" });
    try {
      const text = await props.run();
      setState({ s: "done", text });
      props.report?.({ ok: true, text });
    } catch (error) {
      setState({ s: "failed", error });
      props.report?.({ ok: false, error });
    }
  };
  const cls = props.danger === true ? "btn btn-danger" : "btn";
  return (
    <div class="action">
      {state.s === "confirm" ? (
        <div class="confirm" role="dialog" aria-label={props.question}>
          <span>{props.question}</span>
          {props.children}
          <button type="button" class={cls} onClick={() => void go()}>
            {props.confirmLabel}
          </button>
          <button type="button" class="btn btn-quiet" onClick={() => setState({ s: "idle" })}>
            Cancel
          </button>
        </div>
      ) : (
        <button
          type="button"
          class={cls}
          disabled={state.s === "running" || props.disabled === true}
          onClick={() => setState({ s: "confirm" })}
        >
          {state.s === "running" ? `${props.label}…` : props.label}
        </button>
      )}
      {props.report === undefined && state.s === "done" && (
        <OutcomeLine outcome={{ ok: true, text: state.text }} />
      )}
      {props.report === undefined && state.s === "failed" && (
        <OutcomeLine outcome={{ ok: false, error: state.error }} />
      )}
    </div>
  );
}

/** `{k: v}` as "k=v" chips; "–" when empty. */
export function Pairs(props: { map: Record<string, string> | null | undefined }) {
  const entries = Object.entries(props.map ?? {});
  if (entries.length === 0) return <span class="muted">–</span>;
  return (
    <span class="pairs">
      {entries.map(([k, v]) => (
        <code key={k}>
          {k}={v}
        </code>
      ))}
    </span>
  );
}
