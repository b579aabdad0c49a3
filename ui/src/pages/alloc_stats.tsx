/**
 * An alloc's live resource use (`GET /v1/client/allocation/:id/stats`, what `alloc status -stats`
 * shows): per task, CPU in MHz against its `cpu` reservation and in percent of one core, memory
 * (the cgroup's usage where measured, else RSS) against its `memory` reservation, and RSS.
 *
 * The answer comes from the node, not from a blocking query: the page asks every POLL_MS while it
 * is open and the alloc runs, one request at a time, and stops when it leaves (AbortController).
 * When the node does not answer (down, disconnected, an old agent), the panel says "unavailable"
 * with the API's text instead of showing numbers that are no longer true.
 */
import { useEffect, useState } from "preact/hooks";
import { errorText, getJson, seg } from "../api.js";
import { Table } from "../components.js";
import { bytes, when } from "../format.js";
import type { AllocResourceUsage, ResourceUsage } from "../types.js";

/** How often the panel asks the node while it is on screen. */
export const POLL_MS = 3_000;

/** A task of the alloc and what its job reserved for it. */
export interface ReservedTask {
  name: string;
  /** MHz. */
  cpu: number | undefined;
  /** MiB. */
  memoryMB: number | undefined;
}

type StatsState =
  { s: "loading" } | { s: "ok"; usage: AllocResourceUsage } | { s: "unavailable"; error: string };

export function AllocStats(props: { allocId: string; running: boolean; tasks: ReservedTask[] }) {
  const [state, setState] = useState<StatsState>({ s: "loading" });
  useEffect(() => {
    if (!props.running) return;
    const ac = new AbortController();
    setState({ s: "loading" });
    void poll(props.allocId, ac.signal, setState);
    return () => ac.abort();
  }, [props.allocId, props.running]);

  if (!props.running) return <p class="empty">Not running: no live resource use.</p>;
  if (state.s === "loading") return <p class="loading">Loading…</p>;
  if (state.s === "unavailable") {
    return (
      <p class="error" role="alert">
        Resource use unavailable: {state.error}
      </p>
    );
  }
  const usage = state.usage;
  const rows = props.tasks.map((t) => ({ ...t, u: usage.Tasks[t.name]?.ResourceUsage }));
  return (
    <>
      <Table
        label="Task resource use"
        rows={rows}
        rowKey={(r) => r.name}
        empty="No tasks."
        cols={[
          ["Task", (r) => r.name],
          ["CPU", (r) => (r.u ? <Used used={r.u.CpuStats.TotalTicks} of={r.cpu} unit="MHz" /> : na)],
          ["CPU %", (r) => (r.u ? `${r.u.CpuStats.Percent.toFixed(1)}%` : na)],
          ["Memory", (r) => (r.u ? <Memory u={r.u} reservedMB={r.memoryMB} /> : na)],
          ["RSS", (r) => (r.u ? bytes(r.u.MemoryStats.RSS) : na)],
        ]}
      />
      <p class="muted stats-updated">
        Updated {when(usage.Timestamp)}, every {POLL_MS / 1000}s.
      </p>
    </>
  );
}

const na = <span class="muted">not running</span>;

/** `used` of `of` (a reservation) with a meter; just `used` when there is no reservation. */
function Used(props: { used: number; of: number | undefined; unit: string; text?: string }) {
  const text = props.text ?? `${Math.round(props.used)} ${props.unit}`;
  if (props.of === undefined || props.of <= 0) return <span>{text}</span>;
  const ofText = props.unit === "B" ? bytes(props.of) : `${props.of} ${props.unit}`;
  return (
    <span class="used">
      <meter min={0} max={props.of} high={props.of * 0.9} value={Math.min(props.used, props.of)} />
      <span>
        {text} / {ofText}
      </span>
    </span>
  );
}

/** The cgroup's usage where measured (what the kernel holds the task to), else RSS. */
function Memory(props: { u: ResourceUsage; reservedMB: number | undefined }) {
  const m = props.u.MemoryStats;
  const used = m.Measured.includes("Usage") ? m.Usage : m.RSS;
  const of = props.reservedMB === undefined ? undefined : props.reservedMB * 1024 * 1024;
  return <Used used={used} of={of} unit="B" text={bytes(used)} />;
}

/** Asks for the alloc's stats until `signal`, waiting POLL_MS after each answer or failure. */
async function poll(allocId: string, signal: AbortSignal, set: (s: StatsState) => void): Promise<void> {
  while (!signal.aborted) {
    try {
      const { data } = await getJson<AllocResourceUsage>(
        `/v1/client/allocation/${seg(allocId)}/stats`,
        signal,
      );
      if (!signal.aborted) set({ s: "ok", usage: data });
    } catch (err) {
      if (signal.aborted) return;
      set({ s: "unavailable", error: errorText(err) });
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, POLL_MS);
      signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
