/**
 * Which volume work takes the cluster-wide lock (leader/volume_locks.ts mayAttach), and that
 * ClusterKeyedMutex asks its backend only then: a volume being created, one whose plugin attaches,
 * or one with a ControllerPublished claim does; a stored volume with no attach step does not.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { CSIVolume } from "../../../src/structs/volume.js";
import { ClusterKeyedMutex, mayAttach, type LockBackend } from "../../../src/server/leader/volume_locks.js";
import { claimOf } from "../../builders/claim.js";
import { makeVolume } from "../../builders/volume.js";

const storeOf = (vols: CSIVolume[]) => ({
  getVolume: (ns: string, id: string) => vols.find((v) => v.Namespace === ns && v.ID === id),
});

test("mayAttach: absent, attach-required or controller-published volumes take the cluster lock", () => {
  const plain = makeVolume("plain");
  const attach = makeVolume("attach", { ControllerRequired: true });
  const published = makeVolume("published", {
    PastClaims: {
      a1: { ...claimOf({ ID: "a1", NodeID: "n1" }, "node-detached"), ControllerPublishPluginID: "p1" },
    },
  });
  const claimed = makeVolume("claimed", { WriteClaims: { a2: claimOf({ ID: "a2", NodeID: "n1" }) } });
  const store = storeOf([plain, attach, published, claimed]);
  assert.deepEqual(
    [
      "default/plain",
      "default/attach",
      "default/published",
      "default/claimed",
      "default/new",
      "other/plain",
    ].map((k) => [k, mayAttach(store, k)]),
    [
      ["default/plain", false],
      ["default/attach", true],
      ["default/published", true],
      ["default/claimed", false],
      ["default/new", true],
      ["other/plain", true],
    ],
  );
});

test("ClusterKeyedMutex takes the backend's lock only for keys that need it, and frees it", async () => {
  const log: string[] = [];
  const backend: LockBackend = {
    acquire: async (key) => {
      log.push(`acquire ${key}`);
      return {
        release: async () => {
          log.push(`release ${key}`);
        },
        refusal: () => undefined,
      };
    },
  };
  const mutex = new ClusterKeyedMutex(
    () => backend,
    (key) => key !== "default/plain",
  );
  await mutex.run("default/plain", async () => log.push("work plain"));
  await mutex.run("default/attach", async () => log.push("work attach"));
  await assert.rejects(
    mutex.run("default/attach", async () => {
      throw new Error("boom");
    }),
    /boom/,
  );
  assert.deepEqual(log, [
    "work plain",
    "acquire default/attach",
    "work attach",
    "release default/attach",
    "acquire default/attach",
    "release default/attach",
  ]);
  // No backend (SQLite, or before the server joined etcd): the plain per-server lock.
  const solo = new ClusterKeyedMutex(() => null);
  assert.equal(await solo.run("default/attach", async () => "ran"), "ran");
});
