// Style sheets are bundled by esbuild (ui/build.mjs) into the page's one .css file.
declare module "*.css";
