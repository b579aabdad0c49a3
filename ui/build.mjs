// Bundles the web UI (ui/src, preact + TSX) with esbuild into dist/ui, which the agent serves at /ui
// (src/server/http/ui_static.ts). Run by `npm run build` after tsc has type-checked ui/ (esbuild
// only strips types). Everything the browser loads is in the bundle: no CDN, works offline.
// Asset names carry a content hash, so the server may let browsers cache them for good; only
// index.html, which names them, is revalidated on every load.
import * as esbuild from "esbuild";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const out = path.resolve(here, "..", "dist", "ui");
const assets = path.join(out, "assets");

fs.rmSync(out, { recursive: true, force: true });
const result = await esbuild.build({
  entryPoints: [path.join(here, "src", "main.tsx")],
  bundle: true,
  format: "esm",
  minify: true,
  target: ["es2020", "chrome100", "firefox100", "safari15"],
  jsx: "automatic",
  jsxImportSource: "preact",
  outdir: assets,
  entryNames: "[name]-[hash]",
  // preact's licence notice stays with the code it covers.
  legalComments: "eof",
  metafile: true,
  logLevel: "warning",
});

const outputs = Object.keys(result.metafile.outputs).map((f) => path.basename(f));
const script = outputs.find((f) => f.endsWith(".js"));
const style = outputs.find((f) => f.endsWith(".css"));
if (!script || !style) throw new Error(`ui/build.mjs: expected one .js and one .css output, got ${outputs}`);
const html = fs
  .readFileSync(path.join(here, "index.html"), "utf8")
  .replace("{{SCRIPT}}", script)
  .replace("{{STYLE}}", style);
fs.writeFileSync(path.join(out, "index.html"), html);
