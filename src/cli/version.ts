/** `berth version` (also `-version`, `-v`), as `nomad version` prints its own: `berth v0.1.0`. */
export const VERSION_WORDS = new Set(["version", "-version", "--version", "-v"]);
