import { test } from "node:test";
import assert from "node:assert/strict";
import { sourceAddressFor } from "../../../src/nodesim/source_addr.js";

test("nodesim source addresses: one loopback address per node against a loopback server, else the OS's", () => {
  const server = "http://127.0.0.1:4646";
  assert.equal(sourceAddressFor(server, 0), "127.2.0.1");
  assert.equal(sourceAddressFor(server, 254), "127.2.0.255");
  assert.equal(sourceAddressFor(server, 255), "127.2.1.0");
  assert.equal(sourceAddressFor("https://127.9.8.7:4646", 4999), "127.2.19.136");
  const all = new Set(Array.from({ length: 5000 }, (_, i) => sourceAddressFor(server, i)));
  assert.equal(all.size, 5000, "5,000 nodes, 5,000 addresses");
  for (const other of ["http://10.0.0.5:4646", "http://localhost:4646", "http://[::1]:4646", "not a url"]) {
    assert.equal(sourceAddressFor(other, 3), undefined, other);
  }
});
