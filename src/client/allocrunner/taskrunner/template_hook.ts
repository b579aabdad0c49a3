/**
 * template hook (Nomad's `template` stanza): before each start of the task, after its directories
 * exist, renders each template — the inline `data` (EmbeddedTmpl) or the `source` file (SourcePath,
 * read from inside the alloc dir) — to its `destination` (DestPath) with its `perms`, and for
 * `env = true` adds the output's KEY=VALUE lines to the task's environment (the later template wins
 * on a name, as Nomad's map copy does). Paths and file handling: template/files.ts; the language:
 * template/render.ts.
 *
 * The template's `env` sees the task's environment as the task will (its `env` block, NOMAD_* with
 * the paths the task sees) plus Nomad's node variables (`node.unique.name`, `attr.kernel.name`,
 * `meta.rack`, …); any other name reads as "", as Nomad masks the agent's own environment.
 *
 * `change_mode`, `change_signal` and `splay` are accepted and have nothing to act on: with no Consul,
 * Vault or Nomad variables a template's inputs (the task env, node variables, a source file read
 * at start) cannot change while the task runs, so berth renders at each start and runs no watcher.
 *
 * Any failure fails the task without a restart, as Nomad's "Template failed: …" does: a template
 * error names the destination, line and column, and a Consul/Vault lookup names the function.
 */
import type { Template } from "../../../structs/job_stanzas.js";
import { NonRecoverableError, type PrestartHook, type PrestartResult } from "./hooks.js";
import { buildTaskEnv, interpolate, nodeVars } from "./task_env.js";
import { parseEnvFile } from "./template/env_file.js";
import {
  parsePerms,
  readTemplateSource,
  resolveTemplatePath,
  writeTemplateOutput,
  type AllocRelPath,
} from "./template/files.js";
import { renderTemplate } from "./template/render.js";
import type { TaskRunnerConfig } from "./task_runner_config.js";
import { effectiveTaskUser, taskEnvInput } from "./task_start.js";
import { lookupUser, type TaskUser } from "../../drivers/shared/user.js";

export class TemplateHook implements PrestartHook {
  readonly name = "template";
  /** The task's user, looked up once per hook (every start renders again). */
  private user: Promise<TaskUser> | undefined;

  constructor(
    private readonly cfg: TaskRunnerConfig,
    private readonly templates: Template[],
    /** The clock `timestamp` reads; tests pin it. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  async prestart(): Promise<PrestartResult | undefined> {
    if (this.templates.length === 0) return undefined;
    const input = taskEnvInput(this.cfg);
    const taskEnv = { ...buildTaskEnv(input, {}).env, ...nodeVars(this.cfg.node) };
    // Paths are the host's: NOMAD_TASK_DIR etc. as the agent sees them (Nomad's ClientPath).
    const hostScope = buildTaskEnv({ ...input, taskView: false }, {}).scope;
    const allocRoot = this.cfg.allocDir.root;
    const taskDir = this.cfg.allocDir.taskDir(this.cfg.task.Name);
    const env: Record<string, string> = {};
    for (const [i, t] of this.templates.entries()) {
      const label = t.DestPath || `template[${i}]`;
      let dest: AllocRelPath;
      let output: string;
      try {
        if (t.DestPath === "") throw new Error("destination is required");
        dest = resolveTemplatePath(
          interpolate(t.DestPath, hostScope),
          taskDir,
          allocRoot,
          true,
          "destination",
        );
        const mode = parsePerms(t.Perms);
        let src = t.EmbeddedTmpl;
        if (t.SourcePath !== "") {
          if (t.EmbeddedTmpl !== "") throw new Error("source and data are mutually exclusive");
          const source = resolveTemplatePath(
            interpolate(t.SourcePath, hostScope),
            taskDir,
            allocRoot,
            false,
            "source",
          );
          src = await readTemplateSource(allocRoot, source);
        }
        output = renderTemplate(src, {
          name: t.DestPath,
          env: taskEnv,
          now: this.now,
          leftDelim: t.LeftDelim,
          rightDelim: t.RightDelim,
          errMissingKey: t.ErrMissingKey,
        });
        await writeTemplateOutput(allocRoot, dest, output, mode, await this.ownerOf(t));
      } catch (err) {
        throw new NonRecoverableError("ERR_VALIDATION", `Template failed: ${label}: ${messageOf(err)}`);
      }
      if (!t.Envvars) continue;
      try {
        Object.assign(env, parseEnvFile(output));
      } catch (err) {
        throw new NonRecoverableError(
          "ERR_VALIDATION",
          `Template failed to read environment variables: error parsing env template ${JSON.stringify(dest.shown)}: ${messageOf(err)}`,
        );
      }
    }
    return Object.keys(env).length > 0 ? { env } : undefined;
  }

  /**
   * Who owns a rendered file: the template's `uid`/`gid` where set (a negative one: the agent's);
   * with neither, the user the task runs as (exec: nobody by default), so a task that is not root
   * can read its own `perms = "0600"` file. Nomad gives the agent's user instead, which such a
   * task could not read. undefined: the agent's user, nothing to change.
   */
  private async ownerOf(t: Template): Promise<{ uid: number; gid: number } | undefined> {
    const id = (v: number | null | undefined) => (typeof v === "number" && v >= 0 ? v : -1);
    if (typeof t.Uid === "number" || typeof t.Gid === "number") return { uid: id(t.Uid), gid: id(t.Gid) };
    const user = effectiveTaskUser(this.cfg);
    if (user === "") return undefined;
    this.user ??= lookupUser(this.cfg.task.Name, user);
    const { uid, gid } = await this.user;
    return { uid, gid };
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
