/**
 * The web UI at /ui, where Nomad's agent serves its own: `GET /` redirects there (307, the query
 * kept, as Nomad's handleRootFallthrough), `/ui` to `/ui/` (as Go's ServeMux does for a subtree),
 * `/ui/assets/<name>` are the bundle's files, and every other path under /ui/ answers index.html,
 * so a deep link (`/ui/storage/volumes/csi/demo@default`) opens its page (SPA fallback).
 *
 * The files are ui/build.mjs's output, dist/ui, read once into memory at the first request; they
 * hold no data, so they are public, as Nomad's UI assets are (the UI then reads the API with the
 * user's token). Asset names carry a content hash: browsers may keep them for a year; index.html is
 * revalidated each load (ETag). A CSP lets the page load and connect to nothing but this agent.
 * Only names the bundle holds are served: a request path never becomes a file path.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { BerthError } from "../../structs/errors.js";
import type { Guard } from "../acl/guards.js";
import type { Route } from "../request_ctx.js";
import { sendError } from "../wire/http_io.js";

/** Only this agent: scripts, styles, images and API calls from self; no frames, forms or plugins. */
export const UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const ASSET_PREFIX = "/ui/assets/";
const IMMUTABLE = "public, max-age=31536000, immutable";
const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

interface UiFile {
  body: Buffer;
  type: string;
  etag: string;
}

export interface UiBundle {
  index: UiFile;
  /** By file name, as index.html names them under /ui/assets/. */
  assets: ReadonlyMap<string, UiFile>;
}

/** dist/ui beside this module's compiled tree (dist/src/server/http → dist/ui). */
export const DEFAULT_UI_DIR = fileURLToPath(new URL("../../../ui/", import.meta.url));

function fileOf(file: string): UiFile {
  const body = fs.readFileSync(file);
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, type: TYPES[path.extname(file)] ?? "application/octet-stream", etag };
}

/** The built UI in `dir`, or null when it is not there (berth built without `npm run build`'s UI step). */
export function loadUiBundle(dir: string = DEFAULT_UI_DIR): UiBundle | null {
  const indexFile = path.join(dir, "index.html");
  if (!fs.existsSync(indexFile)) return null;
  const assets = new Map<string, UiFile>();
  const assetDir = path.join(dir, "assets");
  if (fs.existsSync(assetDir)) {
    for (const e of fs.readdirSync(assetDir, { withFileTypes: true })) {
      if (e.isFile()) assets.set(e.name, fileOf(path.join(assetDir, e.name)));
    }
  }
  return { index: fileOf(indexFile), assets };
}

function send(req: IncomingMessage, res: ServerResponse, file: UiFile, cache: string): void {
  const headers = {
    "Content-Type": file.type,
    "Cache-Control": cache,
    ETag: file.etag,
    "Content-Security-Policy": UI_CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
  };
  if (req.headers["if-none-match"] === file.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  res.writeHead(200, { ...headers, "Content-Length": String(file.body.length) });
  res.end(file.body);
}

function redirect(res: ServerResponse, status: 301 | 307, location: string): void {
  res.writeHead(status, { Location: location, "Content-Type": "text/plain; charset=utf-8" });
  res.end(`${location}\n`);
}

/** The routes over one bundle directory (tests give their own; the agent the default). */
export function uiRoutes(dir: string = DEFAULT_UI_DIR): { root: Route; ui: Route } {
  let bundle: UiBundle | null | undefined;
  const load = () => (bundle === undefined ? (bundle = loadUiBundle(dir)) : bundle);
  return {
    async root(ctx) {
      const raw = ctx.req.url ?? "/";
      const q = raw.indexOf("?");
      redirect(ctx.res, 307, q >= 0 && q < raw.length - 1 ? `/ui/${raw.slice(q)}` : "/ui/");
    },
    async ui(ctx) {
      const pathname = (ctx.req.url ?? "/ui").split("?")[0] ?? "/ui";
      if (pathname === "/ui") return redirect(ctx.res, 301, "/ui/");
      const b = load();
      if (!b) {
        throw new BerthError(
          "ERR_NOT_FOUND",
          "the web UI is not in this build of berth (dist/ui is missing): run `npm run build`",
        );
      }
      if (pathname.startsWith(ASSET_PREFIX)) {
        const file = b.assets.get(pathname.slice(ASSET_PREFIX.length));
        if (!file)
          return sendError(
            ctx.res,
            new BerthError("ERR_NOT_FOUND", `no UI asset at ${JSON.stringify(pathname.slice(0, 200))}`),
          );
        return send(ctx.req, ctx.res, file, IMMUTABLE);
      }
      send(ctx.req, ctx.res, b.index, "no-cache");
    },
  };
}

const routes = uiRoutes();
export const uiRoot: Route = routes.root;
export const uiPage: Route = routes.ui;

/**
 * The UI's files are public, as Nomad's: they carry no data. The token a browser sends along is
 * not even resolved, so a stale or wrong token in the tab never locks the user out of the UI that
 * lets them replace it.
 */
export const UI_PUBLIC: Guard = {
  needs: "none (public: the web UI's static files, as Nomad's)",
  check: () => undefined,
  resolvesToken: false,
};
