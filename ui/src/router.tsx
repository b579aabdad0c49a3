/**
 * Client-side routing under /ui with the History API, so each page has a real URL an operator can
 * bookmark or paste; the agent answers every /ui path with index.html (SPA fallback). The URL
 * shapes are Nomad's UI's: /ui/jobs/<id>@<namespace>, /ui/allocations/<id>, /ui/clients/<id>,
 * /ui/storage/volumes/csi/<id>@<namespace>, /ui/storage/plugins/<id>, /ui/evaluations,
 * /ui/settings/tokens; the older /ui/csi/... paths lead to the storage pages.
 */
import type { ComponentChildren, TargetedMouseEvent } from "preact";
import { useEffect, useState } from "preact/hooks";

export const BASE = "/ui";
const CHANGE = "berth:navigate";

/** The path below /ui ("/jobs", "/storage/volumes", …); "/" for the index. */
export function currentPath(): string {
  const p = location.pathname;
  const rest = p === BASE ? "/" : p.startsWith(`${BASE}/`) ? p.slice(BASE.length) : "/";
  return rest === "" ? "/" : rest;
}

export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  if (replace) history.replaceState(null, "", url);
  else history.pushState(null, "", url);
  window.dispatchEvent(new Event(CHANGE));
}

/** The current path below /ui, re-rendering on navigation and on back/forward. */
export function usePath(): string {
  const [path, setPath] = useState(currentPath());
  useEffect(() => {
    const on = () => setPath(currentPath());
    window.addEventListener("popstate", on);
    window.addEventListener(CHANGE, on);
    return () => {
      window.removeEventListener("popstate", on);
      window.removeEventListener(CHANGE, on);
    };
  }, []);
  return path;
}

/** A link inside the UI: a real href (open in a new tab works), navigated in place on a plain click. */
export function Link(props: { to: string; children: ComponentChildren; class?: string }) {
  const onClick = (e: TargetedMouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.to);
    window.scrollTo(0, 0);
  };
  return (
    <a href={`${BASE}${props.to}`} class={props.class} onClick={onClick}>
      {props.children}
    </a>
  );
}

/** Nomad's `<id>@<namespace>` segment; a bare `<id>` is in "default". */
export function splitIdNs(segment: string): { id: string; ns: string } {
  const at = segment.lastIndexOf("@");
  if (at <= 0) return { id: segment, ns: "default" };
  return { id: segment.slice(0, at), ns: segment.slice(at + 1) || "default" };
}

export function idNs(id: string, ns: string): string {
  return `${encodeURIComponent(id)}@${encodeURIComponent(ns)}`;
}

export const paths = {
  jobs: () => "/jobs",
  job: (id: string, ns: string) => `/jobs/${idNs(id, ns)}`,
  deployments: (id: string, ns: string) => `/jobs/${idNs(id, ns)}/deployments`,
  alloc: (id: string) => `/allocations/${encodeURIComponent(id)}`,
  clients: () => "/clients",
  client: (id: string) => `/clients/${encodeURIComponent(id)}`,
  volumes: () => "/storage/volumes",
  volume: (id: string, ns: string) => `/storage/volumes/csi/${idNs(id, ns)}`,
  plugins: () => "/storage/plugins",
  plugin: (id: string) => `/storage/plugins/${encodeURIComponent(id)}`,
  evaluations: () => "/evaluations",
  tokens: () => "/settings/tokens",
};

export type Route =
  | { page: "jobs" }
  | { page: "job"; id: string; ns: string }
  | { page: "deployments"; id: string; ns: string }
  | { page: "alloc"; id: string; task?: string }
  | { page: "clients" }
  | { page: "client"; id: string }
  | { page: "volumes" }
  | { page: "volume"; id: string; ns: string }
  | { page: "plugins" }
  | { page: "plugin"; id: string }
  | { page: "evaluations" }
  | { page: "tokens" }
  | { page: "redirect"; to: string }
  | { page: "not-found"; path: string };

/** The page a path names. Segments are decoded once; a malformed escape is a page not found. */
export function match(path: string): Route {
  let parts: string[];
  try {
    parts = path
      .split("/")
      .filter((s) => s !== "")
      .map(decodeURIComponent);
  } catch {
    return { page: "not-found", path };
  }
  const [a, b, c, d] = parts;
  const n = parts.length;
  if (n === 0) return { page: "redirect", to: paths.jobs() };
  if (a === "jobs" && n === 1) return { page: "jobs" };
  if (a === "jobs" && n === 3 && b && c === "deployments") return { page: "deployments", ...splitIdNs(b) };
  if (a === "jobs" && n >= 2 && b) return { page: "job", ...splitIdNs(b) };
  if (a === "allocations" && n >= 2 && b)
    return c ? { page: "alloc", id: b, task: c } : { page: "alloc", id: b };
  if (a === "clients" && n === 1) return { page: "clients" };
  if (a === "clients" && n >= 2 && b) return { page: "client", id: b };
  if (a === "storage" && b === "volumes" && n === 2) return { page: "volumes" };
  if (a === "storage" && b === "volumes" && c === "csi" && d) return { page: "volume", ...splitIdNs(d) };
  if (a === "storage" && b === "plugins" && n === 2) return { page: "plugins" };
  if (a === "storage" && b === "plugins" && c) return { page: "plugin", id: c };
  if ((a === "storage" || a === "csi") && n === 1) return { page: "redirect", to: paths.volumes() };
  // Nomad's older CSI pages, /ui/csi/volumes/<id>@<ns> and /ui/csi/plugins/<id>.
  if (a === "csi" && b === "volumes") {
    if (!c) return { page: "redirect", to: paths.volumes() };
    const v = splitIdNs(c);
    return { page: "redirect", to: paths.volume(v.id, v.ns) };
  }
  if (a === "csi" && b === "plugins") return { page: "redirect", to: c ? paths.plugin(c) : paths.plugins() };
  if (a === "evaluations" && n === 1) return { page: "evaluations" };
  if (a === "settings" && (b === "tokens" || b === undefined)) return { page: "tokens" };
  return { page: "not-found", path };
}
