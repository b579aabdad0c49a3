import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { prefixListed, startFakeApi, type FakeApi } from "../../fakes/api.js";
import { allocStatus } from "../../../src/cli/commands/alloc_status.js";
import { jobStatus } from "../../../src/cli/commands/job_status.js";
import { nodeStatus } from "../../../src/cli/commands/node_status.js";
import { pluginStatus } from "../../../src/cli/commands/plugin_status.js";
import { volumeStatus } from "../../../src/cli/commands/volume_status.js";
import * as fx from "../../builders/api_records.js";
import { captureIO } from "../../fakes/command_io.js";

let api: FakeApi;

const USAGE = {
  MemoryStats: {
    RSS: 3 * 1024 * 1024,
    Cache: 0,
    Swap: 0,
    Usage: 5 * 1024 * 1024,
    MaxUsage: 0,
    KernelUsage: 0,
    KernelMaxUsage: 0,
    Measured: ["RSS", "Usage"],
  },
  CpuStats: {
    SystemMode: 1,
    UserMode: 2.5,
    TotalTicks: 12.7,
    ThrottledPeriods: 0,
    ThrottledTime: 0,
    Percent: 3.5,
    Measured: ["Percent", "User Mode", "System Mode"],
  },
  DeviceStats: [],
};
const WRITER_STATS = {
  ResourceUsage: USAGE,
  Tasks: { writer: { ResourceUsage: USAGE, Timestamp: 1, Pids: {} } },
  Timestamp: 1,
};

before(async () => {
  api = await startFakeApi({
    "GET /v1/jobs": prefixListed([fx.jobStub]),
    "GET /v1/job/writer": { json: fx.job },
    "GET /v1/job/writer/allocations": { json: [fx.allocStub] },
    "GET /v1/job/writer/evaluations": { json: [] },
    [`GET /v1/allocation/${fx.ALLOC_ID}`]: { json: fx.alloc },
    [`GET /v1/client/allocation/${fx.ALLOC_ID}/stats`]: { json: WRITER_STATS },
    "GET /v1/allocations": {
      json: [fx.allocStub, { ...fx.allocStub, ID: "a1ffffff-0000-4000-8000-000000000009" }],
    },
    "GET /v1/nodes": { json: [fx.nodeStub] },
    [`GET /v1/node/${fx.NODE_ID}`]: { json: fx.node },
    "GET /v1/volumes": { json: [fx.volumeStub] },
    "GET /v1/volume/csi/demo": { json: fx.volume },
    "GET /v1/plugins": { json: [fx.pluginStub] },
    "GET /v1/plugin/csi/hostpath": { json: fx.plugin },
    "GET /v1/plugin/csi/host": {
      status: 404,
      text: "not found",
      headers: { "X-Berth-Error-Code": "ERR_NOT_FOUND" },
    },
  });
});

after(() => api.close());

const io = () => captureIO(api.address);

describe("job status", () => {
  it("lists jobs", async () => {
    const o = io();
    assert.equal(await jobStatus.run(jobStatus.parse([]), o), 0);
    assert.deepEqual(o.out, [
      "ID      Type   Priority  Status   Submit Date",
      "writer  batch  50        running  2026-01-01T11:00:00Z",
    ]);
    assert.deepEqual(o.err, []);
  });

  it("shows one job with its summary and allocations", async () => {
    const o = io();
    assert.equal(await jobStatus.run(jobStatus.parse(["writer"]), o), 0);
    assert.deepEqual(o.out, [
      "ID          = writer",
      "Name        = writer",
      "Submit Date = 2026-01-01T11:00:00Z",
      "Type        = batch",
      "Priority    = 50",
      "Datacenters = dc1",
      "Namespace   = default",
      "Status      = running",
      "",
      "Summary",
      "Task Group  Starting  Running  Failed  Complete  Lost  Unknown",
      "writer      0         1        0       0         0     0",
      "",
      "Allocations",
      "ID        Node ID   Task Group  Desired  Status   Created  Modified",
      "a1b2c3d4  f00dfeed  writer      run      running  5m ago   4m ago",
    ]);
  });

  it("-verbose shows full IDs", async () => {
    const o = io();
    await jobStatus.run(jobStatus.parse(["-verbose", "writer"]), o);
    assert.ok(
      o.out.some((l) => l.startsWith(`${fx.ALLOC_ID}  ${fx.NODE_ID}  writer`)),
      o.out.join("\n"),
    );
  });

  it("-json prints the API's JSON, pretty", async () => {
    const o = io();
    assert.equal(await jobStatus.run(jobStatus.parse(["-json", "writer"]), o), 0);
    assert.equal(o.out.join("\n"), JSON.stringify(fx.job, null, 2));
    const l = io();
    await jobStatus.run(jobStatus.parse(["-json"]), l);
    assert.deepEqual(JSON.parse(l.out.join("\n")), [fx.jobStub]);
  });

  it("a missing job is one error line and exit 1", async () => {
    const o = io();
    assert.equal(await jobStatus.run(jobStatus.parse(["nope"]), o), 1);
    assert.deepEqual(o.err, ['Error querying job: No job(s) with prefix or ID "nope" found']);
    assert.deepEqual(o.out, []);
  });
});

describe("alloc status", () => {
  it("shows the alloc, its CSI volumes and each task's recent events", async () => {
    const o = io();
    assert.equal(await allocStatus.run(allocStatus.parse([fx.ALLOC_ID]), o), 0);
    assert.deepEqual(o.out, [
      "ID                  = a1b2c3d4",
      "Name                = writer.writer[0]",
      "Node ID             = f00dfeed",
      "Node Name           = node-1",
      "Job ID              = writer",
      "Job Version         = 2",
      "Client Status       = running",
      "Client Description  = Tasks are running",
      "Desired Status      = run",
      "Desired Description = <none>",
      "Created             = 5m ago",
      "Modified            = 4m ago",
      "",
      "CSI Volumes:",
      "ID    Plugin    Provider            Schedulable  Read Only  Mount Options",
      "demo  hostpath  hostpath.csi.berth  true         false      fs_type: ext4 flags: [REDACTED]",
      "",
      'Task "writer" is "running"',
      "Restarts    = 0",
      "Failed      = false",
      "Started At  = 2026-01-01T11:56:00Z",
      "Finished At = <none>",
      "",
      "Task Resources:",
      "CPU         Memory           Disk     Addresses",
      "12/100 MHz  3.0 MiB/300 MiB  300 MiB",
      "",
      "Recent Events:",
      "Time                  Type      Description",
      "2026-01-01T11:56:00Z  Started   Task started by client",
      "2026-01-01T11:55:00Z  Received  Task received by client",
    ]);
  });

  it("-stats adds the measured fields; stats that cannot be read are a warning, not an error", async () => {
    const o = io();
    assert.equal(await allocStatus.run(allocStatus.parse(["-stats", fx.ALLOC_ID]), o), 0);
    const at = o.out.indexOf("Task Resources:");
    assert.deepEqual(o.out.slice(at + 3, at + 11), [
      "",
      "Memory Stats",
      "RSS      Usage",
      "3.0 MiB  5.0 MiB",
      "",
      "CPU Stats",
      "Percent  System Mode  User Mode",
      "3.50%    1.00%        2.50%",
    ]);
    const other = "a1ffffff-0000-4000-8000-000000000009";
    const failing = await startFakeApi({
      [`GET /v1/allocation/${other}`]: { json: { ...fx.alloc, ID: other } },
    });
    try {
      const w = captureIO(failing.address);
      assert.equal(await allocStatus.run(allocStatus.parse([other]), w), 0);
      assert.ok(
        w.out.some((l) => l.startsWith("Couldn't retrieve stats: ")),
        w.out.join("\n"),
      );
      assert.ok(w.out.includes("100 MHz  300 MiB  300 MiB"));
    } finally {
      await failing.close();
    }
  });

  it("accepts the short ID the tables print, and refuses an ambiguous one", async () => {
    const o = io();
    assert.equal(await allocStatus.run(allocStatus.parse(["a1b2c3d4"]), o), 0);
    assert.equal(o.out[0], "ID                  = a1b2c3d4");
    assert.ok(api.requests.some((r) => r.url === "/v1/allocations?prefix=a1b2c3d4"));
    assert.ok(api.requests.some((r) => r.url === `/v1/allocation/${fx.ALLOC_ID}`));

    const a = io();
    assert.equal(await allocStatus.run(allocStatus.parse(["a1"]), a), 1);
    assert.deepEqual(a.err, [
      `Error querying allocation: prefix "a1" matched 2 allocations: ${fx.ALLOC_ID}, a1ffffff-0000-4000-8000-000000000009`,
    ]);
  });

  it("an unknown alloc is an error", async () => {
    const o = io();
    assert.equal(await allocStatus.run(allocStatus.parse(["zzz"]), o), 1);
    assert.deepEqual(o.err, ["Error querying allocation: Unexpected response code: 404 (not found)"]);
  });
});

describe("node status", () => {
  it("lists nodes", async () => {
    const o = io();
    assert.equal(await nodeStatus.run(nodeStatus.parse([]), o), 0);
    assert.deepEqual(o.out, [
      "ID        DC   Name    Class   Drain  Eligibility  Status",
      "f00dfeed  dc1  node-1  <none>  false  eligible     ready",
    ]);
  });

  it("shows one node with its drivers and CSI plugins", async () => {
    const o = io();
    assert.equal(await nodeStatus.run(nodeStatus.parse([fx.NODE_ID]), o), 0);
    assert.deepEqual(o.out, [
      "ID                 = f00dfeed",
      "Name               = node-1",
      "Class              = <none>",
      "DC                 = dc1",
      "Drain              = false",
      "Eligibility        = eligible",
      "Status             = ready",
      "Status Description = <none>",
      "CSI Controllers    = hostpath",
      "CSI Drivers        = hostpath",
      "Drivers            = exec",
      "",
      "Drivers",
      "Driver  Detected  Healthy  Mounts  Message",
      "docker  false     false    true    not found",
      "exec    true      true     true    Healthy",
      "",
      "CSI Plugins",
      "ID        Type             Provider            Version  Healthy  Description",
      "hostpath  controller,node  hostpath.csi.berth  0.1.0    true     healthy",
    ]);
  });

  it("finds a node by the short ID the list prints", async () => {
    const o = io();
    assert.equal(await nodeStatus.run(nodeStatus.parse(["f00dfeed"]), o), 0);
    assert.equal(o.out[1], "Name               = node-1");
  });

  it("-json prints the node", async () => {
    const o = io();
    await nodeStatus.run(nodeStatus.parse(["-json", fx.NODE_ID]), o);
    assert.deepEqual(JSON.parse(o.out.join("\n")), fx.node);
  });
});

describe("volume status", () => {
  it("lists CSI volumes", async () => {
    const o = io();
    assert.equal(await volumeStatus.run(volumeStatus.parse([]), o), 0);
    assert.deepEqual(o.out, [
      "Container Storage Interface",
      "ID    Name  Namespace  Plugin ID  Schedulable  Access Mode",
      "demo  demo  default    hostpath   true         single-node-writer",
    ]);
    assert.equal(api.requests.at(-1)!.url, "/v1/volumes?type=csi");
  });

  it("shows one volume, mount flags redacted", async () => {
    const o = io();
    assert.equal(await volumeStatus.run(volumeStatus.parse(["demo"]), o), 0);
    assert.deepEqual(o.out, [
      "ID                   = demo",
      "Name                 = demo",
      "Namespace            = default",
      "External ID          = vol-123",
      "Plugin ID            = hostpath",
      "Provider             = hostpath.csi.berth",
      "Version              = 0.1.0",
      "Capacity             = 10 MiB",
      "Schedulable          = true",
      "Controllers Healthy  = 1",
      "Controllers Expected = 1",
      "Nodes Healthy        = 1",
      "Nodes Expected       = 2",
      "Access Mode          = single-node-writer",
      "Attachment Mode      = file-system",
      "Mount Options        = fs_type: ext4 flags: [REDACTED]",
      "",
      "Topologies",
      "Topology  Segments",
      "00        rack=r1",
      "",
      "Capabilities",
      "Access Mode         Attachment Mode",
      "single-node-writer  file-system",
      "",
      "Allocations",
      "ID        Node ID   Task Group  Desired  Status   Created  Modified",
      "a1b2c3d4  f00dfeed  writer      run      running  5m ago   4m ago",
    ]);
  });

  it("-json prints the volume", async () => {
    const o = io();
    await volumeStatus.run(volumeStatus.parse(["demo", "-json"]), o);
    assert.equal(o.out.join("\n"), JSON.stringify(fx.volume, null, 2));
  });
});

describe("plugin status", () => {
  it("lists CSI plugins", async () => {
    const o = io();
    assert.equal(await pluginStatus.run(pluginStatus.parse([]), o), 0);
    assert.deepEqual(o.out, [
      "Container Storage Interface",
      "ID        Provider            Controllers Healthy/Expected  Nodes Healthy/Expected",
      "hostpath  hostpath.csi.berth  1/1                           1/1",
    ]);
    assert.equal(api.requests.at(-1)!.url, "/v1/plugins?type=csi");
  });

  it("shows one plugin with its allocations", async () => {
    const o = io();
    assert.equal(await pluginStatus.run(pluginStatus.parse(["hostpath"]), o), 0);
    assert.deepEqual(o.out, [
      "ID                   = hostpath",
      "Provider             = hostpath.csi.berth",
      "Version              = 0.1.0",
      "Controllers Healthy  = 1",
      "Controllers Expected = 1",
      "Nodes Healthy        = 1",
      "Nodes Expected       = 1",
      "",
      "Allocations",
      "ID        Node ID   Task Group  Desired  Status   Created  Modified",
      "a1b2c3d4  f00dfeed  writer      run      running  5m ago   4m ago",
    ]);
  });

  it("-verbose adds the capabilities the instances advertise and their topologies; a prefix finds it", async () => {
    const o = io();
    assert.equal(await pluginStatus.run(pluginStatus.parse(["-verbose", "host"]), o), 0);
    const at = o.out.indexOf("Controller Capabilities");
    assert.deepEqual(o.out.slice(at, at + 13), [
      "Controller Capabilities",
      "  CONTROLLER_ATTACH_DETACH",
      "  CREATE_DELETE_VOLUME",
      "  LIST_SNAPSHOTS",
      "",
      "Node Capabilities",
      "  STAGE_UNSTAGE_VOLUME",
      "  VOLUME_ACCESSIBILITY_CONSTRAINTS",
      "",
      "Accessible Topologies",
      "Node ID   Accessible Topology",
      "f00dfeed  rack=r1,zone=z1",
      "",
    ]);
  });

  it("-json prints the plugin; a missing plugin is an error", async () => {
    const o = io();
    await pluginStatus.run(pluginStatus.parse(["-json", "hostpath"]), o);
    assert.deepEqual(JSON.parse(o.out.join("\n")), fx.plugin);
    const e = io();
    assert.equal(await pluginStatus.run(pluginStatus.parse(["nope"]), e), 1);
    assert.deepEqual(e.err, ["Error querying CSI plugin: Unexpected response code: 404 (not found)"]);
  });
});
