/**
 * The template prestart hook on a real alloc dir: destination and source paths as Nomad resolves
 * them, perms, atomic replace, links never followed, `env = true`, and failures that fail the task.
 */
import assert from "node:assert/strict";
import fs from "node:fs/promises";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { isRecoverable } from "../../../src/client/allocrunner/taskrunner/hooks.js";
import { TemplateHook } from "../../../src/client/allocrunner/taskrunner/template_hook.js";
import type { Template } from "../../../src/structs/job_stanzas.js";
import { makeTask, runnerConfig, tempDataDir } from "../../builders/task_runner.js";
import { FakeDriver } from "../../fakes/driver.js";

function tmpl(over: Partial<Template>): Template {
  return {
    SourcePath: "",
    DestPath: "local/out.txt",
    EmbeddedTmpl: "",
    ChangeMode: "restart",
    ChangeSignal: "",
    Splay: 5_000_000_000,
    Perms: "0644",
    LeftDelim: "{{",
    RightDelim: "}}",
    Envvars: false,
    ErrMissingKey: false,
    ...over,
  };
}

describe("template hook", () => {
  let dataDir: string;
  before(async () => {
    dataDir = await tempDataDir("berth-tmplhook-");
  });
  after(async () => {
    await fs.rm(dataDir, { recursive: true, force: true });
  });

  async function run(
    templates: Template[],
  ): Promise<{ env: Record<string, string> | undefined; taskDir: string }> {
    const task = makeTask({ Env: { APP: "demo-${NOMAD_ALLOC_INDEX}" }, Templates: templates });
    const cfg = runnerConfig(dataDir, task, new FakeDriver(), {
      node: { id: "node-1", name: "n1", attributes: { "kernel.name": "linux" }, meta: { rack: "r7" } },
    });
    await cfg.allocDir.build([task.Name]);
    const hook = new TemplateHook(cfg, templates);
    const res = await hook.prestart();
    return { env: res?.env, taskDir: cfg.allocDir.taskDir(task.Name) };
  }

  it("renders inline data with the task env and node variables, with its perms", async () => {
    const { env, taskDir } = await run([
      tmpl({
        EmbeddedTmpl:
          'app={{ env "APP" }} alloc={{ env "NOMAD_ALLOC_NAME" }} node={{ env "node.unique.name" }} ' +
          'kernel={{ env "attr.kernel.name" }} rack={{ env "meta.rack" }} dir={{ env "NOMAD_TASK_DIR" }}\n',
        DestPath: "${NOMAD_TASK_DIR}/conf/app.conf",
        Perms: "0600",
      }),
    ]);
    const file = path.join(taskDir, "local/conf/app.conf");
    assert.equal(
      await fs.readFile(file, "utf8"),
      `app=demo-2 alloc=example.g[2] node=n1 kernel=linux rack=r7 dir=${path.join(taskDir, "local")}\n`,
    );
    assert.equal((await fs.stat(file)).mode & 0o7777, 0o600);
    assert.equal(env, undefined);
    // Nothing but the output is left in the directory (the temporary file was renamed).
    assert.deepEqual(await fs.readdir(path.join(taskDir, "local/conf")), ["app.conf"]);
  });

  it("env = true adds the output's variables; a later template wins", async () => {
    const { env } = await run([
      tmpl({ EmbeddedTmpl: 'A=1\nB="two words"\n', DestPath: "secrets/a.env", Envvars: true }),
      tmpl({ EmbeddedTmpl: "B=three # why\n", DestPath: "secrets/b.env", Envvars: true }),
      tmpl({ EmbeddedTmpl: "NOT_ENV=1\n", DestPath: "local/plain" }),
    ]);
    assert.deepEqual(env, { A: "1", B: "three" });
  });

  it("reads a source from the alloc dir and writes into the shared alloc dir", async () => {
    const shared = path.join(dataDir, "alloc/alloc-1/alloc");
    await fs.mkdir(shared, { recursive: true });
    await fs.writeFile(path.join(shared, "in.tpl"), '{{ env "NOMAD_TASK_NAME" | toUpper }}');
    await run([tmpl({ SourcePath: "../alloc/in.tpl", DestPath: "${NOMAD_ALLOC_DIR}/out.txt" })]);
    assert.equal(await fs.readFile(path.join(shared, "out.txt"), "utf8"), "WEB");
  });

  it("an absolute destination is taken under the task dir; an escaping one fails", async () => {
    const { taskDir } = await run([tmpl({ EmbeddedTmpl: "x", DestPath: "/etc/berth-test.conf" })]);
    assert.equal(await fs.readFile(path.join(taskDir, "etc/berth-test.conf"), "utf8"), "x");
    await assert.rejects(run([tmpl({ EmbeddedTmpl: "x", DestPath: "../../escape" })]), (err: Error) => {
      assert.equal(
        err.message,
        "Template failed: ../../escape: template destination path escapes alloc directory",
      );
      assert.equal(isRecoverable(err), false);
      return true;
    });
    await assert.rejects(run([tmpl({ SourcePath: "/etc/passwd", DestPath: "local/p" })]), {
      message: "Template failed: local/p: template source path escapes alloc directory",
    });
  });

  it("never follows a link the task planted, at the destination or on the way", async () => {
    const outside = path.join(dataDir, "outside");
    await fs.mkdir(outside, { recursive: true });
    await fs.writeFile(path.join(outside, "victim"), "keep");
    const taskDir = path.join(dataDir, "alloc/alloc-1/web");
    await fs.mkdir(path.join(taskDir, "local"), { recursive: true });
    await fs.rm(path.join(taskDir, "local/victim"), { force: true });
    await fs.symlink(path.join(outside, "victim"), path.join(taskDir, "local/victim"));
    await run([tmpl({ EmbeddedTmpl: "new", DestPath: "local/victim" })]);
    assert.equal(await fs.readFile(path.join(outside, "victim"), "utf8"), "keep");
    assert.equal((await fs.lstat(path.join(taskDir, "local/victim"))).isFile(), true);

    await fs.symlink(outside, path.join(taskDir, "local/linkdir"));
    await assert.rejects(
      run([tmpl({ EmbeddedTmpl: "new", DestPath: "local/linkdir/victim" })]),
      /is a symlink or not a directory/,
    );
    await assert.rejects(
      run([tmpl({ SourcePath: "local/linkdir/victim", DestPath: "local/z" })]),
      /is a symlink or not a directory/,
    );
    assert.equal(await fs.readFile(path.join(outside, "victim"), "utf8"), "keep");
  });

  it("a template error or a Consul lookup fails the task, naming the line and column", async () => {
    await assert.rejects(
      run([tmpl({ EmbeddedTmpl: "ok\n  {{ if true }}", DestPath: "local/bad" })]),
      (err: Error) => {
        assert.equal(
          err.message,
          "Template failed: local/bad: template: local/bad:2:3: unexpected EOF: {{if}} has no {{end}}",
        );
        assert.equal(isRecoverable(err), false);
        return true;
      },
    );
    await assert.rejects(run([tmpl({ EmbeddedTmpl: '{{ key "redis/port" }}', DestPath: "local/k" })]), {
      message:
        'Template failed: local/k: template: local/k:1:4: executing "local/k" at <key>: error calling key: key reads from Consul, Vault or Nomad variables; berth has no Consul, Vault or Nomad variables',
    });
    await assert.rejects(
      run([tmpl({ EmbeddedTmpl: "no equals\n", DestPath: "local/e.env", Envvars: true })]),
      {
        message:
          /^Template failed to read environment variables: error parsing env template ".*\/local\/e\.env": error on line 1: missing "="$/,
      },
    );
    await assert.rejects(run([tmpl({ EmbeddedTmpl: "x", DestPath: "local/p", Perms: "999" })]), {
      message: 'Template failed: local/p: Failed to parse "999" as octal',
    });
  });
});
