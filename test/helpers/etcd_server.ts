/**
 * Runs a real etcd server (Debian's `etcd-server` package, `/usr/bin/etcd`) for tests and
 * benchmarks: one member on loopback ports, its data in a temp dir removed when it stops.
 *
 * Contract: `startEtcd()` resolves once the member answers `GET /health` with `"health":"true"`;
 * `stop()` kills it (SIGKILL is fine: the data dir is thrown away) and waits for the process to
 * exit; every member still running when the test process exits is killed then, so a failed test
 * never leaves an etcd behind. `pause()`/`resume()` stop and continue the process (SIGSTOP /
 * SIGCONT) to show what berth does while etcd is unavailable.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { freePort } from "./agent_process.js";

export const ETCD_BIN = process.env.BERTH_TEST_ETCD ?? "/usr/bin/etcd";

export interface EtcdServer {
  /** Client URL, e.g. http://127.0.0.1:23791, as `-etcd-endpoints` takes it. */
  endpoint: string;
  dataDir: string;
  process: ChildProcess;
  /** Output of the member (for a failing test's message). */
  log(): string;
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const p of running) p.kill("SIGKILL");
});

/** Whether this machine has etcd (CI installs it; a test may skip with a clear reason without). */
export function etcdAvailable(): boolean {
  return fs.existsSync(ETCD_BIN);
}

export async function startEtcd(opts: { timeoutMs?: number } = {}): Promise<EtcdServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "berth-etcd-"));
  const clientPort = await freePort();
  const peerPort = await freePort();
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const name = `berth-test-${clientPort}`;
  const child = spawn(
    ETCD_BIN,
    [
      `--name=${name}`,
      `--data-dir=${path.join(dataDir, "member")}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=${name}=${peer}`,
      "--initial-cluster-state=new",
      "--log-level=warn",
      "--logger=zap",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  running.add(child);
  let output = "";
  const keep = (b: Buffer) => {
    output = (output + b.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<void>((resolve) =>
    child.once("exit", () => {
      running.delete(child);
      resolve();
    }),
  );
  const server: EtcdServer = {
    endpoint: client,
    dataDir,
    process: child,
    log: () => output,
    pause: () => child.kill("SIGSTOP"),
    resume: () => child.kill("SIGCONT"),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGCONT");
        child.kill("SIGKILL");
      }
      await exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + (opts.timeoutMs ?? 20_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    if (await healthy(client)) return server;
    await new Promise((r) => setTimeout(r, 100));
  }
  await server.stop();
  throw new Error(`etcd did not become healthy at ${client}:\n${output}`);
}

function healthy(endpoint: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(`${endpoint}/health`, { timeout: 1000 }, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve(res.statusCode === 200 && /"health":\s*"true"/.test(body)));
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => {
      req.destroy();
      resolve(false);
    });
  });
}
