/**
 * The exec WebSocket's TTY frames (src/server/http/exec_session_ws.ts) as the node's input, and the
 * shell line the node's `script` runs (src/client/rpc/client_exec_session.ts): bad frames are
 * refused naming the field; a command's words reach it unchanged, whatever they contain.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { test } from "node:test";
import { ttyShellLine } from "../../../src/client/rpc/client_exec_session.js";
import { inputOf } from "../../../src/server/http/exec_session_ws.js";
import { isBerthError } from "../../../src/structs/errors.js";

const frame = (v: unknown) => Buffer.from(JSON.stringify(v));

test("stdin, its end and tty_size frames become the node's input", () => {
  assert.deepEqual(inputOf(frame({ stdin: { data: "aGk=" } })), {
    Stdin: "aGk=",
    Close: false,
    Height: 0,
    Width: 0,
  });
  assert.deepEqual(inputOf(frame({ stdin: { close: true } })), {
    Stdin: "",
    Close: true,
    Height: 0,
    Width: 0,
  });
  assert.deepEqual(inputOf(frame({ tty_size: { height: 40, width: 120 } })), {
    Stdin: "",
    Close: false,
    Height: 40,
    Width: 120,
  });
});

test("bad frames are refused naming the field", () => {
  const refused = (raw: Buffer, field: string) =>
    assert.throws(
      () => inputOf(raw),
      (e: unknown) => isBerthError(e) && e.code === "ERR_VALIDATION" && e.message.includes(field),
    );
  refused(Buffer.from("{"), "frame");
  refused(frame({ stdin: { data: 5 } }), "stdin.data");
  refused(frame({ tty_size: { height: 0, width: 80 } }), "tty_size.height");
  refused(frame({ tty_size: { height: 24, width: "80" } }), "tty_size.width");
  refused(frame({ tty_size: { height: 24.5, width: 80 } }), "tty_size.height");
});

test("the shell line sets the start size, then runs the command's words unchanged", () => {
  const words = ["/bin/echo", "it's", "$HOME", "a b", "`id`", '"q"', ""];
  const line = ttyShellLine(words, 30, 100);
  assert.match(line, /^stty rows 30 cols 100 2>\/dev\/null; exec /);
  const out = execFileSync("/bin/sh", ["-c", ttyShellLine(["printf", "[%s]", ...words.slice(1)], 0, 0)]);
  assert.equal(out.toString(), '[it\'s][$HOME][a b][`id`]["q"][]');
});
