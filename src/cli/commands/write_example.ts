/** What `job init` and `volume init` share: write an example file once, never over another. */
import { fail } from "../command.js";
import type { CommandIO } from "../io.js";

export async function writeExample(
  io: CommandIO,
  file: string,
  text: string,
  say: { exists: string; written: string },
): Promise<number> {
  if (!io.writeNewFile) return fail(io, `writing ${file}`, new Error("this command cannot write files here"));
  try {
    await io.writeNewFile(file, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") {
      io.stderr(say.exists);
      return 1;
    }
    return fail(io, `writing ${file}`, err);
  }
  io.stdout(say.written);
  return 0;
}
