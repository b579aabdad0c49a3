/** berth's version: the one in the package.json beside the compiled tree (dist/src/api → root): the CLI prints it, the agent shows it on /v1/agent/self. */
import fs from "node:fs";

export function berthVersion(): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}
