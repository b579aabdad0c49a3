/**
 * The HCL of a job (or one group) that runs berth's csi-hostpath as a CSI plugin task, plugin id
 * "hostpath", mount_dir "/csi". One builder for every test that runs the plugin through an agent;
 * a variant passes options.
 *
 * Under `exec` the task runs `berth csi-hostpath …` (berth on the task's PATH); under `raw_exec` it
 * runs `node <repo>/bin/berth csi-hostpath …`, so host paths (state dir, call log) can be passed.
 */
import { BERTH_BIN } from "../helpers/agent_process.js";

export interface HostpathPluginOptions {
  /** The task driver; default "exec". */
  driver?: "exec" | "raw_exec";
  /** The csi_plugin block's type; default "monolith". */
  type?: "monolith" | "controller" | "node";
  /** csi-hostpath's flags, after `csi-hostpath` (e.g. `--node-id=${node.unique.id}`, `--state-dir=…`). */
  args?: string[];
  /** Constrain the group to the node whose `${node.unique.name}` is this. */
  node?: string;
  /** Mount host volume `source` at `destination` in the task (e.g. the plugin's state dir). */
  hostVolume?: { source: string; destination: string };
  /** The csi_plugin block's stage_publish_base_dir. */
  stagePublishBaseDir?: string;
  /** A block put into the task as is, e.g. `restart { … }`. */
  taskExtra?: string;
}

export interface HostpathPluginJobOptions extends HostpathPluginOptions {
  /** The job's name; default "plugin". */
  job?: string;
  /** The group's name; default "plugin". */
  group?: string;
  /** The job's `type`; omitted (the default, service) unless given. */
  jobType?: string;
}

/** One `group "NAME" { … }` block (indented for a job) running csi-hostpath as a plugin task. */
export function hostpathPluginGroup(group: string, opts: HostpathPluginOptions = {}): string {
  const driver = opts.driver ?? "exec";
  const command = driver === "raw_exec" ? process.execPath : "berth";
  const args = [...(driver === "raw_exec" ? [BERTH_BIN] : []), "csi-hostpath", ...(opts.args ?? [])];
  const lines = [`  group ${JSON.stringify(group)} {`];
  if (opts.node !== undefined) {
    lines.push(
      "    constraint {",
      '      attribute = "${node.unique.name}"',
      `      value     = ${JSON.stringify(opts.node)}`,
      "    }",
    );
  }
  if (opts.hostVolume) {
    lines.push(
      '    volume "storage" {',
      '      type   = "host"',
      `      source = ${JSON.stringify(opts.hostVolume.source)}`,
      "    }",
    );
  }
  lines.push(
    '    task "plugin" {',
    `      driver = ${JSON.stringify(driver)}`,
    "      config {",
    `        command = ${JSON.stringify(command)}`,
    `        args    = ${JSON.stringify(args)}`,
    "      }",
  );
  if (opts.hostVolume) {
    lines.push(
      "      volume_mount {",
      '        volume      = "storage"',
      `        destination = ${JSON.stringify(opts.hostVolume.destination)}`,
      "      }",
    );
  }
  if (opts.taskExtra) lines.push(`      ${opts.taskExtra}`);
  lines.push(
    "      csi_plugin {",
    '        id        = "hostpath"',
    `        type      = ${JSON.stringify(opts.type ?? "monolith")}`,
    '        mount_dir = "/csi"',
  );
  if (opts.stagePublishBaseDir !== undefined) {
    lines.push(`        stage_publish_base_dir = ${JSON.stringify(opts.stagePublishBaseDir)}`);
  }
  lines.push("      }", "    }", "  }");
  return lines.join("\n");
}

/** A whole job of one group (see `hostpathPluginGroup`). */
export function hostpathPluginJob(opts: HostpathPluginJobOptions = {}): string {
  const { job = "plugin", group = "plugin", jobType, ...rest } = opts;
  return hostpathJobOf(job, [hostpathPluginGroup(group, rest)], jobType);
}

/** A job made of `groups` (from `hostpathPluginGroup`). */
export function hostpathJobOf(job: string, groups: string[], jobType?: string): string {
  const type = jobType === undefined ? "" : `  type = ${JSON.stringify(jobType)}\n`;
  return `job ${JSON.stringify(job)} {\n${type}${groups.join("\n")}\n}\n`;
}
