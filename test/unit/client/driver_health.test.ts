/**
 * Drivers fingerprinted again while the agent runs (client/driver_health.ts): a daemon that goes
 * away or comes back changes the driver's health and is reported once per change; a fingerprint
 * that throws counts as undetected; nothing is reported while nothing changes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { watchDriverHealth } from "../../../src/client/driver_health.js";
import type { TaskDriver } from "../../../src/client/drivers/driver.js";
import type { DriverInfo } from "../../../src/structs/node.js";

test("a driver's health change is written and reported; no change, no report", async () => {
  const answers: (DriverInfo | Error)[] = [
    { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: true },
    { Detected: false, Healthy: false, HealthDescription: "Failed to connect", SupportsMounts: true },
    new Error("boom"),
    { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: true },
  ];
  const fake = {
    name: "docker",
    capabilities: () => ({ supportsMounts: true }),
    fingerprint: async () => {
      const a = answers.shift() ?? {
        Detected: true,
        Healthy: true,
        HealthDescription: "Healthy",
        SupportsMounts: true,
      };
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as TaskDriver;
  const infos: Record<string, DriverInfo> = {
    docker: { Detected: true, Healthy: true, HealthDescription: "Healthy", SupportsMounts: true },
  };
  const seen: string[] = [];
  const ac = new AbortController();
  const done = watchDriverHealth(
    [fake],
    infos,
    ac.signal,
    () => seen.push(infos.docker!.HealthDescription),
    5,
  );
  while (answers.length > 0 || seen.length < 3) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 50));
  ac.abort();
  await done;
  assert.deepEqual(seen, ["Failed to connect", "fingerprint failed: boom", "Healthy"]);
  assert.equal(infos.docker!.Healthy, true);
});
