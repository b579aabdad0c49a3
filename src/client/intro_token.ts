/**
 * The node introduction token a new node agent presents in its Node.Register (Nomad 1.11's client
 * introduction; server/rpc/node_intro.ts). Taken, as Nomad takes it, from `-client-intro-token`,
 * then NOMAD_CLIENT_INTRO_TOKEN (BERTH_CLIENT_INTRO_TOKEN wins over it), then the file
 * `<data dir>/client/intro_token.jwt`; never from the agent config file (a token is a secret and
 * config files are shared). The server reads it only for a node ID it has never seen, so it is
 * sent with every registration and needs no cleanup; it expires on its own.
 */
import fs from "node:fs/promises";
import path from "node:path";

export const INTRO_TOKEN_FILE = "intro_token.jwt";

/** `{ IntroToken }` for the Node.Register request, or `{}` when the agent has none. */
export async function introTokenField(
  clientDir: string,
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ IntroToken?: string }> {
  const token =
    given || env.BERTH_CLIENT_INTRO_TOKEN || env.NOMAD_CLIENT_INTRO_TOKEN || (await readTokenFile(clientDir));
  return token ? { IntroToken: token.trim() } : {};
}

async function readTokenFile(clientDir: string): Promise<string> {
  try {
    return (await fs.readFile(path.join(clientDir, INTRO_TOKEN_FILE), "utf8")).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "";
    throw err;
  }
}
