/**
 * A node whose Docker daemon is not there: `berth agent -dev` with the docker driver's endpoint on
 * a socket nobody listens on comes up (never a crash), fingerprints docker as undetected and
 * unhealthy, and a docker job is not placed: its evaluation reports "missing drivers".
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { AgentProcess, eventually, freePort, runCli } from "../../helpers/agent_process.js";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-nodocker-")));
let agent: AgentProcess | null = null;

after(async () => {
  await agent?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function getJson<T>(addr: string, route: string): Promise<T | undefined> {
  const res = await fetch(`${addr}${route}`).catch(() => undefined);
  return res?.ok ? ((await res.json()) as T) : undefined;
}

test("no daemon: docker undetected, the agent runs, a docker job fails placement with missing drivers", async () => {
  const config = path.join(dir, "docker.hcl");
  fs.writeFileSync(
    config,
    `plugin "docker" {\n  config {\n    endpoint = "unix://${dir}/none.sock"\n  }\n}\n`,
  );
  const port = await freePort();
  const addr = `http://127.0.0.1:${port}`;
  agent = new AgentProcess(
    ["-dev", "-data-dir", path.join(dir, "data"), "-http-addr", `127.0.0.1:${port}`, "-config", config],
    path.join(dir, "agent.log"),
  );
  const node = await eventually("the node to be ready", async () => {
    const nodes = await getJson<{ ID: string; Status: string }[]>(addr, "/v1/nodes");
    const ready = nodes?.find((n) => n.Status === "ready");
    return ready
      ? getJson<{
          Drivers: Record<string, { Detected: boolean; Healthy: boolean; HealthDescription: string }>;
        }>(addr, `/v1/node/${ready.ID}`)
      : undefined;
  });
  const docker = node.Drivers.docker!;
  assert.deepEqual([docker.Detected, docker.Healthy], [false, false]);
  assert.match(docker.HealthDescription, /Failed to connect to docker daemon/);
  const job = path.join(dir, "job.hcl");
  fs.writeFileSync(
    job,
    'job "web" {\n  group "g" {\n    task "t" {\n      driver = "docker"\n      config {\n        image = "nginx:1"\n      }\n    }\n  }\n}\n',
  );
  const run = await runCli(["job", "run", job], { BERTH_ADDR: addr });
  assert.equal(run.code, 0, run.stderr);
  const failed = await eventually("the placement failure", async () => {
    const evals = await getJson<
      { FailedTGAllocs?: Record<string, { ConstraintFiltered?: Record<string, number> }> }[]
    >(addr, "/v1/job/web/evaluations");
    return evals?.find((e) => e.FailedTGAllocs?.g)?.FailedTGAllocs?.g;
  });
  assert.deepEqual(failed.ConstraintFiltered, { "missing drivers": 1 });
  assert.equal(agent.running, true, "the agent did not crash");
});
