/** Where the CLI and UI find the agent: an explicit address, else BERTH_ADDR, else the local default. */
export const DEFAULT_ADDRESS = "http://127.0.0.1:4646";

export function resolveAddress(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const addr = flag || env.BERTH_ADDR || DEFAULT_ADDRESS;
  // Nomad accepts a bare host:port; fetch needs a scheme.
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(addr) ? addr.replace(/\/+$/, "") : `http://${addr}`;
}
