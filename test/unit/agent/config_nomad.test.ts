/**
 * The agent config file in Nomad's language (HCL 1 and its JSON form) and shape: each documented
 * key read into the agent's options field by field, in Nomad's idioms (multi-line and one-line
 * blocks, quoted keys, JSON), the flags winning over the files, raw_exec off by default, and every
 * key berth does not honour refused by name.
 */
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import {
  parseAgentConfig,
  readAgentConfigFiles,
  type AgentFileConfig,
} from "../../../src/agent/config_file.js";
import {
  loadAgentOptions,
  parseAgentFlags,
  resolveAgentOptions,
  type AgentOptions,
} from "../../../src/agent/options.js";
import { DEFAULT_DOCKER_SETTINGS } from "../../../src/agent/config_plugins.js";
import { DEFAULT_TASK_USER_POLICY } from "../../../src/structs/task_user.js";
import { REPO_ROOT } from "../../helpers/agent_process.js";

const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "berth-nomadcfg-")));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A server+client node as Nomad's agent configuration docs write one. */
const FULL_HCL = `# a single-node cluster
name       = "node-1"
region     = "global"
datacenter = "eu-west-1a"
data_dir   = "/var/lib/berth"
bind_addr  = "127.0.0.2"
log_level  = "DEBUG"

ports {
  http = 5656
}

addresses {
  http = "127.0.0.3"
}

server {
  enabled          = true
  bootstrap_expect = 1
}

client {
  enabled    = true
  servers    = ["127.0.0.3:5656"]
  node_class = "storage"

  meta {
    rack             = "r1"
    "storage.tier"   = "ssd"
  }

  host_volume "data" {
    path      = "/srv/data"
    read_only = true
  }

  reserved {
    cpu    = 500
    memory = 256
    disk   = 1024
  }

  cpu_total_compute = 8000

  options {
    "driver.raw_exec.enable" = "1"
  }
}

plugin "raw_exec" {
  config {
    enabled = true
  }
}

plugin "exec" {
  config {}
}
`;

/** The same settings in one-line blocks and quoted keys. */
const ONE_LINE_HCL = `"name" = "node-1", region = "global", datacenter = "eu-west-1a"
data_dir = "/var/lib/berth", bind_addr = "127.0.0.2", log_level = "debug"
ports { http = 5656 }
addresses { http = "127.0.0.3" }
server { enabled = true, bootstrap_expect = 1 }
client {
  enabled = true, servers = ["127.0.0.3:5656"], node_class = "storage"
  meta { rack = "r1", "storage.tier" = "ssd" }
  host_volume "data" { path = "/srv/data", read_only = true }
  reserved { cpu = 500, memory = 256, disk = 1024 }
  cpu_total_compute = 8000
  options = { "driver.raw_exec.enable" = "1" }
}
plugin "raw_exec" { config { enabled = true } }
plugin "exec" { config {} }
`;

/** The same settings in HCL's JSON form, as Nomad accepts a `.json` config file. */
const FULL_JSON = JSON.stringify({
  name: "node-1",
  region: "global",
  datacenter: "eu-west-1a",
  data_dir: "/var/lib/berth",
  bind_addr: "127.0.0.2",
  log_level: "DEBUG",
  ports: { http: 5656 },
  addresses: { http: "127.0.0.3" },
  server: { enabled: true, bootstrap_expect: 1 },
  client: {
    enabled: true,
    servers: ["127.0.0.3:5656"],
    node_class: "storage",
    meta: { rack: "r1", "storage.tier": "ssd" },
    host_volume: { data: { path: "/srv/data", read_only: true } },
    reserved: { cpu: 500, memory: 256, disk: 1024 },
    cpu_total_compute: 8000,
    options: { "driver.raw_exec.enable": "1" },
  },
  // Nomad's own JSON fixtures wrap every block in a list; both forms decode alike.
  plugin: [{ raw_exec: [{ config: [{ enabled: true }] }] }, { exec: [{ config: [{}] }] }],
});

/** JSON objects whose values are all objects, which hcl v1 flattens into several items. */
const FLATTENED_JSON = JSON.stringify({
  client: {
    host_volume: { data: { path: "/srv/data" } },
    meta: { rack: "r1" },
    options: { "driver.raw_exec.enable": "1" },
  },
  plugin: { raw_exec: { config: { enabled: true } } },
  server: {},
});

const FULL_EXPECTED: AgentFileConfig = {
  nodeName: "node-1",
  region: "global",
  datacenter: "eu-west-1a",
  dataDir: "/var/lib/berth",
  bindAddr: "127.0.0.2",
  logLevel: "debug",
  httpPort: 5656,
  httpAddress: "127.0.0.3",
  serverEnabled: true,
  bootstrapExpect: 1,
  clientEnabled: true,
  servers: ["127.0.0.3:5656"],
  nodeClass: "storage",
  meta: { rack: "r1", "storage.tier": "ssd" },
  hostVolumes: [{ name: "data", path: "/srv/data", readOnly: true }],
  reserved: { cpu: 500, memory: 256, disk: 1024 },
  resourceOverrides: { cpuTotalCompute: 8000 },
  options: { "driver.raw_exec.enable": "1" },
  plugins: { raw_exec: { enabled: true }, exec: {} },
};

function resolved(file: AgentFileConfig, argv: string[] = []): AgentOptions {
  return resolveAgentOptions(parseAgentFlags(argv), file);
}

describe("agent config in Nomad's language and shape", () => {
  for (const [what, file, text] of [
    ["HCL", "agent.hcl", FULL_HCL],
    ["one-line blocks and quoted keys", "agent.hcl", ONE_LINE_HCL],
    ["JSON", "agent.json", FULL_JSON],
  ] as const) {
    it(`reads every key of a server+client config (${what})`, async () => {
      assert.deepEqual(await parseAgentConfig(file, text), FULL_EXPECTED);
    });
  }

  it("JSON objects that hcl v1 flattens decode as their HCL (Nomad's obj-len-one case)", async () => {
    assert.deepEqual(await parseAgentConfig("flat.json", FLATTENED_JSON), {
      hostVolumes: [{ name: "data", path: "/srv/data", readOnly: false }],
      meta: { rack: "r1" },
      options: { "driver.raw_exec.enable": "1" },
      plugins: { raw_exec: { enabled: true } },
    });
    // Two client blocks that set different things read as one, as hcl v1 decodes them into one struct.
    const two = await parseAgentConfig("two.hcl", 'client { enabled = true }\nclient { node_class = "x" }\n');
    assert.equal(two.clientEnabled, true);
    assert.equal(two.nodeClass, "x");
    await assert.rejects(
      parseAgentConfig("two.hcl", 'client { node_class = "a" }\nclient { node_class = "b" }\n'),
      /only one client block is allowed, found 2/,
    );
  });

  it("maps the settings onto the agent's options field by field", async () => {
    const o = resolved(await parseAgentConfig("agent.hcl", FULL_HCL));
    assert.equal(o.dev, false);
    assert.equal(o.server, true);
    assert.equal(o.client, true);
    assert.equal(o.dataDir, "/var/lib/berth");
    // addresses.http wins over bind_addr; ports.http gives the port.
    assert.equal(o.httpAddr, "127.0.0.3:5656");
    assert.deepEqual(o.servers, ["http://127.0.0.3:5656"]);
    assert.equal(o.nodeName, "node-1");
    assert.equal(o.datacenter, "eu-west-1a");
    assert.equal(o.nodeClass, "storage");
    assert.equal(o.logLevel, "debug");
    assert.deepEqual(o.meta, { rack: "r1", "storage.tier": "ssd" });
    assert.deepEqual(o.hostVolumes, [{ name: "data", path: "/srv/data", readOnly: true }]);
    assert.deepEqual(o.drivers, {
      rawExec: { enabled: true },
      docker: DEFAULT_DOCKER_SETTINGS,
      taskUsers: DEFAULT_TASK_USER_POLICY,
    });
    assert.deepEqual(o.fileConfig.reserved, { cpu: 500, memory: 256, disk: 1024 });
  });

  it("Nomad's defaults where the file is silent: bind 127.0.0.1 (berth's safe choice), port 4646, dc1", async () => {
    const o = resolved(await parseAgentConfig("a.hcl", 'data_dir = "/d"\nserver { enabled = true }\n'));
    assert.equal(o.httpAddr, "127.0.0.1:4646");
    assert.equal(o.datacenter, "dc1");
    assert.equal(o.nodeClass, "");
    assert.equal(o.logLevel, "info");
    assert.equal(o.client, false);
    const bound = resolved(
      await parseAgentConfig("a.hcl", 'data_dir = "/d"\nbind_addr = "10.1.2.3"\nserver { enabled = true }\n'),
    );
    assert.equal(
      bound.httpAddr,
      "10.1.2.3:4646",
      "bind_addr is the HTTP address when addresses.http is unset",
    );
  });

  it("the flags win over the files", async () => {
    const file = await parseAgentConfig("agent.hcl", FULL_HCL);
    const o = resolved(file, [
      "-data-dir=/other",
      "-http-addr=127.0.0.1:7000",
      "-servers=10.9.9.9:4646",
      "-node-name=flag-node",
      "-dc=dc9",
      "-node-class=flagclass",
      "-log-level=WARN",
      "-meta=rack=r9",
      "-host-volume=data:/flag",
    ]);
    assert.equal(o.dataDir, "/other");
    assert.equal(o.httpAddr, "127.0.0.1:7000");
    assert.deepEqual(o.servers, ["http://10.9.9.9:4646"]);
    assert.equal(o.nodeName, "flag-node");
    assert.equal(o.datacenter, "dc9");
    assert.equal(o.nodeClass, "flagclass");
    assert.equal(o.logLevel, "warn");
    assert.deepEqual(o.meta, { rack: "r9", "storage.tier": "ssd" });
    // The flag's host volume comes last, so it wins when the paths are resolved.
    assert.deepEqual(o.hostVolumes.at(-1), { name: "data", path: "/flag", readOnly: false });
  });

  it("-config FILE alone runs a server and a client, with the file's data dir", async () => {
    const f = path.join(dir, "both.hcl");
    fs.writeFileSync(f, `data_dir = "${dir}/data"\nserver { enabled = true }\nclient { enabled = true }\n`);
    const o = await loadAgentOptions(["-config", f]);
    assert.equal(o.server, true);
    assert.equal(o.client, true);
    assert.equal(o.dataDir, `${dir}/data`);
    assert.deepEqual(o.servers, [], "a client beside its server dials it");
    await assert.rejects(
      loadAgentOptions(["-config", path.join(dir, "missing.hcl")]),
      /-config: cannot read .*missing\.hcl.*ENOENT/,
    );
    const none = path.join(dir, "none.hcl");
    fs.writeFileSync(none, `data_dir = "${dir}/data"\n`);
    await assert.rejects(loadAgentOptions(["-config", none]), /one of -dev, -server or -client is required/);
  });

  it("the examples the README runs are valid configs", async () => {
    const repo = REPO_ROOT;
    const single = await loadAgentOptions(["-config", path.join(repo, "examples/agent/agent.hcl")]);
    assert.deepEqual([single.server, single.client, single.dataDir], [true, true, "/var/lib/berth"]);
    assert.equal(single.httpAddr, "127.0.0.1:4646");
    assert.equal(single.drivers.rawExec.enabled, false);
    const dev = await loadAgentOptions(["-dev", "-config", path.join(repo, "examples/hostpath/agent.hcl")]);
    assert.deepEqual(dev.hostVolumes, [{ name: "hostpath-data", path: "hostpath-data", readOnly: false }]);
    assert.equal(dev.drivers.rawExec.enabled, true);
    const secure = await loadAgentOptions(["-dev", "-config", path.join(repo, "examples/secure/agent.hcl")]);
    assert.equal(secure.fileConfig.acl?.enabled, true);
    assert.deepEqual(
      [secure.fileConfig.tls?.http, secure.fileConfig.tls?.rpc, secure.fileConfig.tls?.caFile],
      [true, true, "nomad-agent-ca.pem"],
    );
  });

  it("a directory: *.hcl and *.json in name order, no editor leftovers; servers append, maps merge", async () => {
    const d = path.join(dir, "conf.d");
    fs.mkdirSync(d);
    fs.writeFileSync(
      path.join(d, "10-base.hcl"),
      'client {\n  servers = ["a:1"]\n  meta { k = "base" }\n}\n',
    );
    fs.writeFileSync(
      path.join(d, "20-more.json"),
      '{"client": {"servers": ["b:2"], "meta": {"k2": "more"}}}',
    );
    fs.writeFileSync(path.join(d, "30-last.hcl~"), "not = [valid");
    fs.writeFileSync(path.join(d, ".#40-lock.hcl"), "not = [valid");
    fs.writeFileSync(path.join(d, "#50-auto.hcl#"), "not = [valid");
    fs.mkdirSync(path.join(d, "sub.hcl"));
    const cfg = await readAgentConfigFiles([d]);
    assert.deepEqual(cfg.servers, ["a:1", "b:2"]);
    assert.deepEqual(cfg.meta, { k: "base", k2: "more" });
  });

  it("log_level takes Nomad's levels in any case; TRACE logs as debug", async () => {
    for (const [v, want] of [
      ["TRACE", "debug"],
      ["Info", "info"],
      ["ERROR", "error"],
    ] as const) {
      assert.equal((await parseAgentConfig("a.hcl", `log_level = "${v}"\n`)).logLevel, want);
    }
    await assert.rejects(
      parseAgentConfig("a.hcl", 'log_level = "OFF"\n'),
      /a\.hcl: log_level: unknown level "OFF"/,
    );
    assert.throws(
      () => resolved({ hostVolumes: [], meta: {} }, ["-dev", "-log-level=loud"]),
      /unknown level "loud"/,
    );
  });
});

describe('plugin "docker" { config { … } } as Nomad\'s', () => {
  const docker = async (text: string) =>
    resolved(await parseAgentConfig("a.hcl", text), ["-server", "-client", "-data-dir=/d"]).drivers.docker;

  it("Nomad's defaults: the default socket, privileged and host volumes off", async () => {
    assert.deepEqual(await docker(""), {
      endpoint: "unix:///var/run/docker.sock",
      allowPrivileged: false,
      volumesEnabled: false,
    });
  });

  it("endpoint, allow_privileged and volumes { enabled } are read", async () => {
    const text = `plugin "docker" {
  config {
    endpoint         = "unix:///run/d.sock"
    allow_privileged = true
    volumes {
      enabled = true
    }
  }
}`;
    assert.deepEqual(await docker(text), {
      endpoint: "unix:///run/d.sock",
      allowPrivileged: true,
      volumesEnabled: true,
    });
  });
});

describe("raw_exec is disabled unless configured (Nomad's default)", () => {
  const drivers = async (text: string, argv: string[] = ["-server", "-client", "-data-dir=/d"]) =>
    resolved(await parseAgentConfig("a.hcl", text), argv).drivers.rawExec.enabled;

  it("off by default, on in -dev", async () => {
    assert.equal(await drivers(""), false);
    assert.equal(await drivers("", ["-dev"]), true);
  });

  it('plugin "raw_exec" { config { enabled } } decides; without enabled it is off', async () => {
    assert.equal(await drivers('plugin "raw_exec" { config { enabled = true } }'), true);
    assert.equal(await drivers('plugin "raw_exec" { config { enabled = false } }', ["-dev"]), false);
    assert.equal(await drivers('plugin "raw_exec" { config {} }'), false);
  });

  it("Nomad's legacy client option driver.raw_exec.enable, read as Go's ParseBool", async () => {
    for (const v of ["1", "true", "T", "TRUE"])
      assert.equal(await drivers(`client { options { "driver.raw_exec.enable" = "${v}" } }`), true, v);
    assert.equal(await drivers('client { options { "driver.raw_exec.enable" = "0" } }', ["-dev"]), false);
    // A plugin config replaces the options, as Nomad's plugin loader does.
    assert.equal(
      await drivers(
        'client { options { "driver.raw_exec.enable" = "1" } }\nplugin "raw_exec" { config { enabled = false } }',
      ),
      false,
    );
    await assert.rejects(
      parseAgentConfig("a.hcl", 'client { options { "driver.raw_exec.enable" = "yes" } }'),
      /options: "driver\.raw_exec\.enable" must be "1", "true", "0" or "false", got "yes"/,
    );
  });

  it("the task user policy from client options user.denylist and user.checked_drivers (Nomad's defaults otherwise)", async () => {
    const argv = ["-server", "-client", "-data-dir=/d"];
    const users = async (text: string) =>
      resolved(await parseAgentConfig("a.hcl", text), argv).drivers.taskUsers;
    assert.deepEqual(await users(""), DEFAULT_TASK_USER_POLICY);
    assert.deepEqual(
      await users(
        'client { options { "user.denylist" = "root,admin" "user.checked_drivers" = "exec,raw_exec" } }',
      ),
      { denylist: ["root", "admin"], checkedDrivers: ["exec", "raw_exec"] },
    );
    assert.deepEqual((await users('client { options { "user.denylist" = "" } }')).denylist, []);
  });

  it("a later file's plugin block replaces an earlier one's", async () => {
    const d = path.join(dir, "plugins.d");
    fs.mkdirSync(d);
    fs.writeFileSync(path.join(d, "a.hcl"), 'plugin "raw_exec" { config { enabled = true } }\n');
    fs.writeFileSync(path.join(d, "b.hcl"), 'plugin "raw_exec" { config { enabled = false } }\n');
    const o = resolved(await readAgentConfigFiles([d]), ["-dev"]);
    assert.equal(o.drivers.rawExec.enabled, false);
  });
});

describe("keys neither berth nor Nomad has, and bad values of keys berth reads, are refused by name", () => {
  const refusals: [string, RegExp][] = [
    ['bind_adr = "127.0.0.1"', /a\.hcl:1:1: unknown key "bind_adr": neither berth nor Nomad has it/],
    [
      "server {\n  enabled = true\n  bootstrap_expected = 3\n}",
      /a\.hcl:3:3: unknown key "server\.bootstrap_expected"/,
    ],
    [
      'client { server_join { retry_joins = ["x"] } }',
      /a\.hcl:1:24: unknown key "client\.server_join\.retry_joins"/,
    ],
    ['region = "europe"', /region "europe": berth runs a single region, "global"/],
    ['datacenter = "*"', /datacenter "\*"/],
    ['data_dir = "relative/dir"', /data_dir must be an absolute path/],
    ['bind_addr = "{{ GetPrivateIP }}"', /bind_addr: go-sockaddr templates are not supported/],
    ['addresses { http = "127.0.0.1 10.0.0.1" }', /addresses: http: berth listens on one address/],
    ["ports { http = 70000 }", /http must be a port between 0 and 65535/],
    ['ports { rpc = "x" }', /ports: rpc must be a number/],
    ['addresses { rpc = "a b" }', /addresses: rpc: berth listens on one address/],
    ['advertise { http = "0.0.0.0" }', /advertise: http: 0\.0\.0\.0 cannot be dialled/],
    ['advertise { rpc = "10.0.0.1:99999" }', /advertise: rpc must be a port between 0 and 65535/],
    ["server { bootstrap_expect = -1 }", /server: bootstrap_expect must be 0 or more, got -1/],
    ['server { bootstrap_expect = "three" }', /server: bootstrap_expect must be a number/],
    ['server { retry_interval = "soon" }', /server: retry_interval must be a duration/],
    ['client { server_join { start_join = ["10.0.0.1"] } }', /start_join is not supported for clients/],
    ['client { server_join { retry_max = "x" } }', /server_join: retry_max must be a number/],
    ['client { host_volume { path = "/x" } }', /host_volume blocks need a label/],
    ['plugin "docker" { config { allow_caps = ["all"] } }', /allow_caps is not supported by berth's driver/],
    ['plugin "docker" { config { endpoint = "/var/run/docker.sock" } }', /endpoint must be unix:\/\/\//],
    ['plugin "docker" { config { bogus = 1 } }', /a\.hcl:1:28: unknown key "plugin\.docker\.config\.bogus"/],
    [
      'plugin "raw_exec" { config { denied_host_uids = "0" } }',
      /denied_host_uids is not supported by berth's driver/,
    ],
    ['plugin "exec" { config { bogus = 1 } }', /unknown key "plugin\.exec\.config\.bogus"/],
    [
      'plugin "raw_exec" { config { enabled = true } }\nplugin "raw_exec" { config { enabled = false } }',
      /plugin "raw_exec" is defined 2 times/,
    ],
  ];
  for (const [text, want] of refusals) {
    it(text.split("\n")[0], async () => {
      await assert.rejects(parseAgentConfig("a.hcl", text + "\n"), (err: Error) => {
        assert.match(err.message, /^-config: /);
        assert.match(err.message, want);
        return true;
      });
    });
  }

  it("a syntax error names the file, line and column", async () => {
    await assert.rejects(parseAgentConfig("a.hcl", "client {\n  enabled = \n"), /-config: a\.hcl:\d+:\d+: /);
    await assert.rejects(parseAgentConfig("a.json", '{"client": '), /-config: a\.json:\d+:\d+: /);
  });

  it("a meta key must be a dotted name, from the file or a flag", async () => {
    const file = await parseAgentConfig("a.hcl", 'client { meta { "a..b" = "x" } }\n');
    assert.throws(() => resolved(file, ["-dev"]), /meta: key "a\.\.b" is not a dotted name/);
    assert.throws(() => resolved({ hostVolumes: [], meta: {} }, ["-dev", "-meta=.x=1"]), /key "\.x"/);
  });
});
