/** What a command needs from the world, passed in so commands run as plain functions in tests. */
import { readFile } from "node:fs/promises";
import type { ApiClient } from "../api/index.js";

export interface CommandIO {
  stdout(line: string): void;
  stderr(line: string): void;
  api: ApiClient;
  /** Reads a spec file; "-" is standard input. */
  readFile(path: string): Promise<string>;
  /** Unix milliseconds, for "3m ago" columns. */
  now(): number;
}

export async function readFileOrStdin(path: string): Promise<string> {
  if (path !== "-") return readFile(path, "utf8");
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export function processIO(api: ApiClient): CommandIO {
  return {
    stdout: (line) => process.stdout.write(line + "\n"),
    stderr: (line) => process.stderr.write(line + "\n"),
    api,
    readFile: readFileOrStdin,
    now: () => Date.now(),
  };
}
