/** `berth version` (also `-version`, `-v`), as `nomad version` prints its own: `berth v<package.json version>`. */
export const VERSION_WORDS = new Set(["version", "-version", "--version", "-v"]);
