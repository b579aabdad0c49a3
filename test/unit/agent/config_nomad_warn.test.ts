/**
 * A Nomad agent config starts berth: Nomad's keys berth does not use are dropped with a warning
 * naming the key and its place, the network settings (ports, addresses, advertise, the RPC port,
 * bare server addresses) resolve as Nomad's do, and the join settings are read and checked.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAgentConfig } from "../../../src/agent/config_file.js";
import { parseAgentFlags, resolveAgentOptions } from "../../../src/agent/options.js";
import { serverUrl } from "../../../src/agent/listen_options.js";

async function warningsOf(text: string, file = "a.hcl"): Promise<string> {
  return (await parseAgentConfig(file, text)).warnings?.join("\n") ?? "";
}

describe("Nomad's keys berth does not use are accepted with a warning naming them", () => {
  const cases: [string, RegExp][] = [
    [
      'consul {\n  address = "127.0.0.1:8500"\n}',
      /a\.hcl:1:1: consul is accepted but not used: berth has no Consul/,
    ],
    [
      'vault {\n  enabled = true\n  address = "https://v:8200"\n}',
      /a\.hcl:1:1: vault is accepted but not used/,
    ],
    ["ui {\n  enabled = true\n}", /ui is accepted but not used: berth serves no web UI/],
    ["autopilot {\n  cleanup_dead_servers = true\n}", /autopilot is accepted but not used/],
    ['audit {\n  enabled = true\n  sink "file" {\n    path = "/x"\n  }\n}', /audit is accepted but not used/],
    ['sentinel {\n  import "x" {\n    path = "/x"\n  }\n}', /sentinel is accepted but not used/],
    ["reporting {\n  license {\n    enabled = false\n  }\n}", /reporting is accepted but not used/],
    ['keyring "awskms" {\n  active = true\n}', /keyring is accepted but not used/],
    [
      "telemetry {\n  publish_allocation_metrics = true\n  include_alloc_metadata_in_metrics = true\n}",
      /a\.hcl:3:3: telemetry\.include_alloc_metadata_in_metrics is accepted/,
    ],
    [
      'telemetry {\n  statsd_address = "127.0.0.1:8125"\n}',
      /telemetry\.statsd_address is accepted but not used: berth sends metrics nowhere/,
    ],
    ['acl {\n  token_ttl = "30s"\n}', /acl\.token_ttl is accepted but not used/],
    [
      'server {\n  enabled = true\n  raft_protocol = 3\n  encrypt = "abc="\n}',
      /a\.hcl:3:3: server\.raft_protocol is accepted[^\n]*\n.*a\.hcl:4:3: server\.encrypt is accepted/,
    ],
    [
      'server {\n  heartbeat_grace = "10s"\n}',
      /server\.heartbeat_grace is accepted but not used: use berth agent -heartbeat-ttl/,
    ],
    [
      'client {\n  cni_path = "/opt/cni/bin"\n  state_dir = "/x"\n}',
      /client\.cni_path is accepted but not used: berth's node agent sets up no task networking/,
    ],
    [
      'client {\n  host_network "public" {\n    cidr = "10.0.0.0/8"\n  }\n}',
      /client\.host_network is accepted/,
    ],
    ['limits {\n  https_handshake_timeout = "5s"\n}', /limits\.https_handshake_timeout is accepted/],
    [
      "ports {\n  serf = 4648\n}",
      /ports\.serf is accepted but not used: berth's servers have no Serf gossip/,
    ],
    ['addresses {\n  serf = "0.0.0.0"\n}', /addresses\.serf is accepted/],
    ['advertise {\n  serf = "10.0.0.1"\n}', /advertise\.serf is accepted/],
    [
      'plugin "podman" {\n  config {}\n}',
      /a\.hcl:1:8: plugin\.podman is accepted but not used: berth has no such task driver/,
    ],
    [
      'plugin "docker" {\n  config {\n    gc {\n      image = false\n    }\n  }\n}',
      /plugin\.docker\.config\.gc is accepted/,
    ],
    [
      'plugin "docker" {\n  config {\n    volumes {\n      selinuxlabel = "z"\n    }\n  }\n}',
      /plugin\.docker\.config\.volumes\.selinuxlabel/,
    ],
    [
      'plugin "raw_exec" {\n  args = ["-x"]\n}',
      /plugin\.raw_exec\.args is accepted but not used: berth's task drivers are built in/,
    ],
    [
      'plugin "exec" {\n  config {\n    no_pivot_root = true\n  }\n}',
      /plugin\.exec\.config\.no_pivot_root is accepted/,
    ],
    [
      'client {\n  options {\n    "driver.allowlist" = "exec"\n  }\n}',
      /client\.options "driver\.allowlist" is accepted but not used/,
    ],
    [
      "log_json = true\nenable_syslog = true\nleave_on_terminate = true",
      /log_json[^\n]*\n[^\n]*enable_syslog[^\n]*\n[^\n]*leave_on_terminate/,
    ],
    [
      "server {\n  enabled = true\n  bootstrap_expect = 3\n}",
      /server\.bootstrap_expect = 3 is not waited for: without server \{ etcd \} this server is the only one/,
    ],
    [
      'server {\n  bootstrap_expect = 3\n  etcd {\n    endpoints = ["http://127.0.0.1:2379"]\n  }\n}',
      /bootstrap_expect = 3 is not waited for: berth's servers share their state in etcd/,
    ],
    [
      'server {\n  server_join {\n    retry_join = ["10.0.0.1"]\n  }\n  start_join = ["10.0.0.2"]\n}',
      /server start_join, server_join: accepted but not used: berth's servers find each other through etcd/,
    ],
    [
      'client {\n  server_join {\n    retry_join = ["provider=aws tag_key=nomad"]\n    retry_max = 3\n  }\n}',
      /retry_max, retry_interval: accepted but not used[^\n]*\n.*cloud auto-join \("provider=aws tag_key=nomad"\) is skipped/,
    ],
  ];
  for (const [text, want] of cases) {
    it(text.split("\n")[0], async () => {
      assert.match(await warningsOf(text + "\n"), want);
    });
  }

  it("the JSON form warns the same, flattened or not", async () => {
    const flat = JSON.stringify({
      client: { template: { disable_file_sandbox: true } },
      consul: [{ address: "x" }],
    });
    const w = await warningsOf(flat, "a.json");
    assert.match(w, /a\.json:1:\d+: client\.template is accepted/);
    assert.match(w, /a\.json:1:\d+: consul is accepted/);
  });

  it("what berth reads is still read beside what it drops", async () => {
    const cfg = await parseAgentConfig(
      "a.hcl",
      'server {\n  enabled = true\n  raft_protocol = 3\n}\nclient {\n  enabled = true\n  cni_path = "/x"\n  servers = ["10.0.0.1"]\n}\nconsul {}\n',
    );
    assert.equal(cfg.serverEnabled, true);
    assert.equal(cfg.clientEnabled, true);
    assert.deepEqual(cfg.servers, ["10.0.0.1"]);
    assert.equal(cfg.warnings?.length, 3);
  });

  it("several files' warnings are all kept", async () => {
    const a = await parseAgentConfig("a.hcl", "consul {}\n");
    const b = await parseAgentConfig("b.hcl", "vault {}\n");
    assert.deepEqual([a.warnings?.length, b.warnings?.length], [1, 1]);
  });
});

describe("listeners and server addresses as Nomad's", () => {
  const resolve = async (text: string, argv: string[] = []) =>
    resolveAgentOptions(parseAgentFlags(argv), await parseAgentConfig("a.hcl", text));

  it("a server enabled by a config file also takes node agents on the RPC port, 4647 by default", async () => {
    const o = await resolve('data_dir = "/d"\nbind_addr = "10.1.2.3"\nserver { enabled = true }\n');
    assert.equal(o.httpAddr, "10.1.2.3:4646");
    assert.equal(o.rpcAddr, "10.1.2.3:4647");
    const set = await resolve(
      'data_dir = "/d"\nserver { enabled = true }\nports {\n  http = 5000\n  rpc = 5001\n}\naddresses { rpc = "127.0.0.2" }\n',
    );
    assert.deepEqual([set.httpAddr, set.rpcAddr], ["127.0.0.1:5000", "127.0.0.2:5001"]);
    const same = await resolve(
      'data_dir = "/d"\nserver { enabled = true }\nports {\n  http = 5000\n  rpc = 5000\n}\n',
    );
    assert.equal(same.rpcAddr, null, "one address is one listener");
  });

  it("flags alone open no RPC port; a client-only agent none either", async () => {
    assert.equal((await resolve("", ["-server", "-data-dir=/d"])).rpcAddr, null);
    assert.equal((await resolve("", ["-dev"])).rpcAddr, null);
    const client = await resolve(
      'data_dir = "/d"\nclient {\n  enabled = true\n  servers = ["a"]\n}\nports { rpc = 5001 }\n',
    );
    assert.equal(client.rpcAddr, null);
  });

  it("a server address without a port is dialled at 4647, from the file, server_join or the flag", async () => {
    const o = await resolve(
      'data_dir = "/d"\nclient {\n  enabled = true\n  servers = ["10.0.0.1", "10.0.0.2:4646"]\n  server_join {\n    retry_join = ["srv.example", "[fd00::1]"]\n  }\n}\n',
    );
    assert.deepEqual(o.servers, [
      "http://10.0.0.1:4647",
      "http://10.0.0.2:4646",
      "http://srv.example:4647",
      "http://[fd00::1]:4647",
    ]);
    assert.deepEqual((await resolve("", ["-client", "-data-dir=/d", "-servers=10.0.0.9"])).servers, [
      "http://10.0.0.9:4647",
    ]);
    assert.equal(serverUrl("https://x:1"), "https://x:1");
  });

  it("advertise is handed to the server as written", async () => {
    const o = await resolve(
      'data_dir = "/d"\nserver { enabled = true }\nadvertise {\n  http = "10.0.0.5"\n  rpc = "10.0.0.5:7000"\n}\n',
    );
    assert.deepEqual(o.advertise, { http: "10.0.0.5", rpc: "10.0.0.5:7000" });
  });
});
