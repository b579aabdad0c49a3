/**
 * A fingerprint whose connection is replaced while it is in flight (the plugin registered again,
 * e.g. restored after an agent restart, and the manager reconnected without cancelling) fails with
 * "closed" on the old connection. That failure describes the old connection, not the plugin: the
 * instance fingerprints the new connection at once instead of reporting the plugin unhealthy until
 * the next round (which was 30 s of stalled claims and releases after every agent restart).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { PluginInstance } from "../../../src/client/csimanager/instance.js";
import { BerthError } from "../../../src/structs/errors.js";
import { nullLogger } from "../../../src/internal/log.js";
import type { CsiCallOptions } from "../../../src/csi/types.js";
import { FakeCsiClient } from "../../fakes/csi_client.js";
import { plugin } from "../../builders/client_records.js";

/** GetPluginInfo waits until the client is closed, then fails as grpc-js does for a closed channel. */
class ClosingClient extends FakeCsiClient {
  private onClose: (() => void) | undefined;
  override getPluginInfo(_o?: CsiCallOptions): ReturnType<FakeCsiClient["getPluginInfo"]> {
    return new Promise((_, reject) => {
      this.onClose = () =>
        reject(new BerthError("ERR_CSI_UNAVAILABLE", "Channel closed before call started"));
    });
  }
  override close(): void {
    super.close();
    this.onClose?.();
  }
}

test("a fingerprint cut off by a reconnect is taken again on the new connection", async () => {
  const clients: FakeCsiClient[] = [];
  const instance = new PluginInstance(
    plugin({ allocId: "pa" }),
    () => {
      const c = clients.length === 0 ? new ClosingClient() : new FakeCsiClient();
      clients.push(c);
      return c;
    },
    { intervalMs: 60_000, callTimeoutMs: 5_000, log: nullLogger, onChange: () => undefined },
  );
  const refreshed = instance.refresh();
  // The plugin registers again: the manager replaces the connection and lets calls in flight end.
  await new Promise((r) => setImmediate(r));
  instance.reconnect("plugin registered again", false);
  const fp = await refreshed;
  assert.equal(clients.length, 2, "the second fingerprint used the new connection");
  assert.equal(fp.info.Healthy, true, `healthy, not: ${fp.info.HealthDescription}`);
  assert.equal(instance.fingerprint?.info.Healthy, true);
  await instance.stop();
});
