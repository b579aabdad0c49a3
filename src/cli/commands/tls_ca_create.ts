/**
 * `berth tls ca create [-days N] [-common-name NAME]` (Nomad's `tls ca create`): makes the cluster's
 * certificate authority in the current directory, `<domain>-agent-ca.pem` and
 * `<domain>-agent-ca-key.pem` (nomad-agent-ca.pem by default, as Nomad names them), never over an
 * existing file. The key signs every agent's certificate: keep it off the agents.
 */
import { fail, type Command, type Parsed } from "../command.js";
import { expectArgs, parseCommandArgs, UsageError } from "../flags.js";
import { assertAbsent, CERT_MODE, daysFlag, dnsPart, generator, KEY_MODE, writeNew } from "./tls_files.js";

export interface TlsCaCreateArgs extends Parsed {
  days: number;
  domain: string;
  commonName: string | undefined;
}

/** Nomad's CA lifetime: five years. */
export const DEFAULT_CA_DAYS = 1825;

export const tlsCaCreate: Command<TlsCaCreateArgs> = {
  usage: "Usage: berth tls ca create [options]",
  help: `Creates a certificate authority for the cluster's mutual TLS: <domain>-agent-ca.pem and <domain>-agent-ca-key.pem (nomad-agent-ca.pem by default) in the current directory; existing files are never replaced. -days sets its lifetime (default ${DEFAULT_CA_DAYS}), -common-name its name, -domain the file names' prefix (default nomad).`,
  parse(argv) {
    const { values, positionals } = parseCommandArgs(argv, {
      days: { type: "string" },
      domain: { type: "string" },
      "common-name": { type: "string" },
    });
    if (positionals[0] !== "create") throw new UsageError('the subcommand is "tls ca create"');
    expectArgs(positionals.slice(1), 0, 0, "no arguments");
    return {
      address: values.address,
      days: daysFlag(values.days, DEFAULT_CA_DAYS),
      domain: dnsPart("-domain", values.domain ?? "nomad"),
      commonName: values["common-name"] || undefined,
    };
  },
  async run(p, io) {
    const certFile = `${p.domain}-agent-ca.pem`;
    const keyFile = `${p.domain}-agent-ca-key.pem`;
    try {
      await assertAbsent([
        { path: certFile, what: "CA certificate" },
        { path: keyFile, what: "CA key" },
      ]);
      const ca = await (await generator()).generateCa({ days: p.days, commonName: p.commonName });
      await writeNew(certFile, ca.cert, CERT_MODE);
      io.stdout(`==> CA certificate saved to: ${certFile}`);
      await writeNew(keyFile, ca.key, KEY_MODE);
      io.stdout(`==> CA certificate key saved to: ${keyFile}`);
      return 0;
    } catch (err) {
      return fail(io, "creating the CA", err);
    }
  },
};
