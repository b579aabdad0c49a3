/**
 * A parsed Go template: the node shapes of Go's text/template/parse that berth evaluates, and how a
 * node prints in an error's `at <…>` context (Go's Node.String).
 */

export type Arg =
  | { type: "field"; idents: string[]; pos: number }
  /** `$x.A.B`: idents[0] is the variable (`$x`, or `$`), the rest are fields. */
  | { type: "variable"; idents: string[]; pos: number }
  /** `(pipeline).A.B` */
  | { type: "chain"; node: Arg; fields: string[]; pos: number }
  | { type: "identifier"; name: string; pos: number }
  | { type: "dot"; pos: number }
  | { type: "nil"; pos: number }
  | { type: "bool"; value: boolean; pos: number }
  | { type: "number"; value: number; isInt: boolean; text: string; pos: number }
  | { type: "string"; value: string; quoted: string; pos: number }
  | { type: "pipe"; pipe: Pipe; pos: number };

export interface Command {
  args: Arg[];
  pos: number;
}

export interface Pipe {
  /** Variables declared (`$x :=`) or assigned (`$x =`), as written with their `$`. */
  decl: string[];
  isAssign: boolean;
  cmds: Command[];
  pos: number;
}

export interface ControlNode {
  type: "if" | "with" | "range";
  pipe: Pipe;
  list: Node[];
  elseList: Node[] | undefined;
  pos: number;
}

export type Node =
  | { type: "text"; text: string; pos: number }
  | { type: "action"; pipe: Pipe; pos: number }
  | ControlNode
  | { type: "break" | "continue"; pos: number };

export function argString(a: Arg): string {
  switch (a.type) {
    case "field":
      return a.idents.map((i) => "." + i).join("");
    case "variable":
      return a.idents.join(".");
    case "chain": {
      const inner = a.node.type === "pipe" ? `(${argString(a.node)})` : argString(a.node);
      return inner + a.fields.map((f) => "." + f).join("");
    }
    case "identifier":
      return a.name;
    case "dot":
      return ".";
    case "nil":
      return "nil";
    case "bool":
      return String(a.value);
    case "number":
      return a.text;
    case "string":
      return a.quoted;
    case "pipe":
      return pipeString(a.pipe);
  }
}

export function commandString(c: Command): string {
  return c.args.map((a) => (a.type === "pipe" ? `(${argString(a)})` : argString(a))).join(" ");
}

export function pipeString(p: Pipe): string {
  const decl = p.decl.length > 0 ? `${p.decl.join(", ")} ${p.isAssign ? "=" : ":="} ` : "";
  return decl + p.cmds.map(commandString).join(" | ");
}

/** A template that does not parse or fails while executing; the message is Go's whole line. */
export class TemplateError extends Error {
  override readonly name = "TemplateError";
}

/** Go's line of `pos` in `src` (1-based). */
export function lineOf(src: string, pos: number): number {
  let line = 1;
  for (let i = 0; i < pos && i < src.length; i++) if (src[i] === "\n") line++;
  return line;
}
