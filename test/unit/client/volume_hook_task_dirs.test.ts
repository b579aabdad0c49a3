/**
 * A volume_mount destination written with Nomad's task directories (`${NOMAD_TASK_DIR}/data`,
 * `${NOMAD_ALLOC_DIR}/…`, `${NOMAD_SECRETS_DIR}/…`, as Nomad's CSI demos write them) reaches the
 * driver as the path inside the task: the task's hooks (task_hooks.ts) give the volume hook the
 * task's environment, in the task's view for a chrooting driver (exec: /local, /alloc, /secrets).
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import { after, before, test } from "node:test";
import { taskHooks } from "../../../src/client/allocrunner/taskrunner/task_hooks.js";
import { nullLogger } from "../../../src/internal/log.js";
import { FakeDriver } from "../../fakes/driver.js";
import { makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";

let dataDir: string;
before(async () => {
  dataDir = await tempDataDir("berth-vhdirs-");
});
after(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

test("${NOMAD_TASK_DIR}, ${NOMAD_ALLOC_DIR} and ${NOMAD_SECRETS_DIR} destinations are the task's own paths", async () => {
  const mount = (Destination: string) => ({
    Volume: "data",
    Destination,
    ReadOnly: false,
    PropagationMode: "private" as const,
  });
  const task = makeTask({
    VolumeMounts: [
      mount("${NOMAD_TASK_DIR}/data"),
      mount("${NOMAD_ALLOC_DIR}/shared"),
      mount("${NOMAD_SECRETS_DIR}/certs"),
    ],
  });
  const group = {
    Name: "g",
    Count: 1,
    Tasks: [task],
    RestartPolicy: null,
    Volumes: {
      data: {
        Name: "data",
        Type: "csi" as const,
        Source: "vol1",
        ReadOnly: false,
        AccessMode: "single-node-writer" as const,
        AttachmentMode: "file-system" as const,
        MountOptions: null,
        PerAlloc: false,
      },
    },
  };
  const cfg = runnerConfig(dataDir, task, new FakeDriver("exec"), { group });
  cfg.resources.setCsiMounts(
    new Map([["data", { source: "/host/pub/data", readOnly: false, volumeId: "vol1" }]]),
  );
  const lifecycle = {
    emitEvent: () => undefined,
    restart: async () => undefined,
  };
  const { volumeHook } = taskHooks(cfg, group, lifecycle, nullLogger);
  assert.deepEqual(
    volumeHook.mounts().map((m) => m.taskPath),
    ["/local/data", "/alloc/shared", "/secrets/certs"],
  );
});
