/**
 * A task's logs through the log route the CLI uses (`GET /v1/client/fs/logs/:alloc?task=&type=`):
 * the last 64 KiB as plain text, then followed live while the task runs (`follow=true`; the server
 * ends the stream once the task is dead and everything is sent).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { errorText, qs, seg, stream } from "../api.js";

/** How much of the log's end the page asks for, and keeps on screen. */
const TAIL_BYTES = 64 * 1024;
const KEEP_CHARS = 256 * 1024;

export function TaskLogs(props: { allocId: string; task: string }) {
  const [type, setType] = useState<"stdout" | "stderr">("stdout");
  const [text, setText] = useState("");
  const [status, setStatus] = useState<"streaming" | "ended" | "failed">("streaming");
  const [error, setError] = useState("");
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    const ac = new AbortController();
    setText("");
    setError("");
    setStatus("streaming");
    const path =
      `/v1/client/fs/logs/${seg(props.allocId)}` +
      qs({ task: props.task, type, plain: true, follow: true, origin: "end", offset: TAIL_BYTES });
    stream(path, (chunk) => setText((t) => (t + chunk).slice(-KEEP_CHARS)), ac.signal).then(
      () => setStatus("ended"),
      (err: unknown) => {
        if (ac.signal.aborted) return;
        setError(errorText(err));
        setStatus("failed");
      },
    );
    return () => ac.abort();
  }, [props.allocId, props.task, type]);

  // Keep the newest line in view, as `alloc logs -f` does.
  useEffect(() => {
    const el = pre.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [text]);

  return (
    <div class="logs" data-task={props.task}>
      <div class="tabs" role="tablist" aria-label={`${props.task} log streams`}>
        {(["stdout", "stderr"] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={t === type}
            class={t === type ? "tab tab-on" : "tab"}
            onClick={() => setType(t)}
          >
            {t}
          </button>
        ))}
        <span class="muted log-state">{status === "streaming" ? "following…" : status}</span>
      </div>
      {error !== "" && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <pre ref={pre} class="log" aria-label={`${props.task} ${type}`}>
        {text === "" ? <span class="muted">(empty)</span> : text}
      </pre>
    </div>
  );
}
