/**
 * The template language of Nomad's `template` stanza (Go text/template + consul-template helpers):
 * each construct, the functions, and errors with their line:column.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renderTemplate } from "../../../src/client/allocrunner/taskrunner/template/render.js";
import { parseEnvFile } from "../../../src/client/allocrunner/taskrunner/template/env_file.js";

const ENV = {
  NOMAD_ALLOC_ID: "0123abcd-0000-0000-0000-000000000000",
  NOMAD_TASK_NAME: "web",
  GREETING: "hello",
  "node.unique.name": "node-a",
  "attr.kernel.name": "linux",
  "meta.rack": "r1",
};

function r(
  src: string,
  extra: { leftDelim?: string; rightDelim?: string; errMissingKey?: boolean } = {},
): string {
  return renderTemplate(src, {
    name: "local/out.conf",
    env: ENV,
    now: () => new Date("2026-03-04T05:06:07.089Z"),
    ...extra,
  });
}

function fails(src: string, pattern: RegExp): void {
  assert.throws(() => r(src), pattern);
}

describe("template language", () => {
  it("copies text and prints actions, env and the node's variables", () => {
    assert.equal(r("plain\n"), "plain\n");
    assert.equal(r('id={{ env "NOMAD_ALLOC_ID" }}'), `id=${ENV.NOMAD_ALLOC_ID}`);
    assert.equal(
      r('{{ env "node.unique.name" }}/{{ env "attr.kernel.name" }}/{{ env "meta.rack" }}'),
      "node-a/linux/r1",
    );
    assert.equal(r('[{{ env "UNSET" }}]'), "[]");
    assert.equal(r('{{ envOrDefault "UNSET" "dflt" }} {{ envOrDefault "GREETING" "x" }}'), "dflt hello");
    assert.throws(
      () => r('{{ mustEnv "UNSET" }}'),
      /error calling mustEnv: environment variable UNSET is not set/,
    );
  });

  it("pipelines pass the value as the last argument", () => {
    assert.equal(r('{{ env "GREETING" | toUpper }}'), "HELLO");
    assert.equal(r('{{ "a,b,c" | split "," | join "-" }}'), "a-b-c");
    assert.equal(r('{{ "x.y.z" | replaceAll "." "/" }}'), "x/y/z");
    assert.equal(r("{{ 7 | subtract 2 }} {{ 10 | divide 3 }} {{ add 1 2 }} {{ 2 | multiply 4 }}"), "5 3 3 8");
    assert.equal(r('{{ "  pad  " | trimSpace | printf "%q" }}'), '"pad"');
    assert.equal(r('{{ ("A" | toLower) }}{{ (parseJSON `{"x":"y"}`).x }}'), "ay");
  });

  it("if / else if / else, and/or/not and comparisons", () => {
    const t =
      '{{ if eq (env "GREETING") "hi" }}A{{ else if eq (env "GREETING") "hello" }}B{{ else }}C{{ end }}';
    assert.equal(r(t), "B");
    assert.equal(r('{{ if and 1 0 }}y{{ else }}n{{ end }}{{ or 0 "" "z" }}{{ and 1 2 }}'), "nz2");
    assert.equal(
      r("{{ not true }} {{ lt 1 2 }} {{ le 2 2 }} {{ gt 1 2 }} {{ ge 3 2 }} {{ ne 1 2 }}"),
      "false true true false true true",
    );
    assert.equal(r('{{ eq "a" "b" "a" }} {{ lt "abc" "abd" }}'), "true true");
    assert.throws(() => r('{{ lt 1 "a" }}'), /incompatible types for comparison/);
  });

  it("range over lists, maps and ints, with variables, else, break and continue", () => {
    assert.equal(r('{{ range split "," "a,b,c" }}<{{ . }}>{{ end }}'), "<a><b><c>");
    assert.equal(r('{{ range $i, $e := split "," "a,b" }}{{ $i }}={{ $e }};{{ end }}'), "0=a;1=b;");
    assert.equal(r('{{ range $k, $v := parseJSON `{"b":2,"a":1}` }}{{ $k }}:{{ $v }} {{ end }}'), "a:1 b:2 ");
    assert.equal(r("{{ range 3 }}{{ . }}{{ end }}"), "012");
    assert.equal(r('{{ range split "," "" }}x{{ else }}empty{{ end }}'), "empty");
    assert.equal(
      r(
        "{{ range $i := loop 10 }}{{ if eq $i 1 }}{{ continue }}{{ end }}{{ if eq $i 4 }}{{ break }}{{ end }}{{ $i }}{{ end }}",
      ),
      "023",
    );
    assert.equal(r('{{ $x := "one" }}{{ $x }}{{ $x = "two" }} {{ $x }}'), "one two");
    assert.throws(() => r("{{ range loop 2 }}{{ $y := 1 }}{{ end }}{{ $y }}"), /undefined variable: \$y/);
  });

  it("with, fields of parsed JSON, index, len, slice", () => {
    const json = '{{ $c := parseJSON `{"db":{"host":"h1","ports":[5432,5433]}}` }}';
    assert.equal(r(`${json}{{ with $c.db }}{{ .host }}:{{ index .ports 1 }}{{ end }}`), "h1:5433");
    assert.equal(r(`${json}{{ with $c.none }}x{{ else }}none{{ end }}`), "none");
    assert.equal(r(`${json}{{ len $c.db.ports }} {{ len "héllo" }} {{ slice "abcdef" 1 3 }}`), "2 6 bc");
    assert.equal(r(`${json}[{{ $c.db.missing }}]`), "[<no value>]");
    assert.throws(
      () => r(`${json}{{ $c.db.missing }}`, { errMissingKey: true }),
      /map has no entry for key "missing"/,
    );
    assert.equal(r(`${json}{{ toJSON $c }}`), '{"db":{"host":"h1","ports":[5432,5433]}}');
  });

  it("trim markers, comments, literals and custom delimiters", () => {
    assert.equal(r("a  {{- 1 -}}  \n b"), "a1b");
    assert.equal(r("a {{/* a comment */}}b{{- /* trimmed */ -}} c"), "a bc");
    assert.equal(
      r('{{ "q\\t\\"" }}|{{ `raw\\n` }}|{{ 0x1F }}|{{ 1.5 }}|{{ \'a\' }}|{{ -3 }}|{{ 1e3 }}'),
      'q\t"|raw\\n|31|1.5|97|-3|1000',
    );
    assert.equal(
      r('[[ env "GREETING" ]] {{ keep }}', { leftDelim: "[[", rightDelim: "]]" }),
      "hello {{ keep }}",
    );
  });

  it("printf, print and the conversion helpers", () => {
    assert.equal(
      r('{{ printf "%s-%05d-%.2f-%v-%x-%t-%%" "a" 42 3.14159 true 255 false }}'),
      "a-00042-3.14-true-ff-false-%",
    );
    assert.equal(r('{{ printf "%-4s|%4s|%q" "ab" "cd" "e" }}'), 'ab  |  cd|"e"');
    assert.equal(r('{{ printf "%d" "x" }} {{ printf "%s" }}'), "%!d(string=x) %!s(MISSING)");
    assert.equal(r('{{ print "a" 1 2 "b" }}'), "a1 2b");
    assert.equal(
      r('{{ parseInt "42" | add 1 }} {{ parseBool "true" }} {{ parseFloat "2.5" }}'),
      "43 true 2.5",
    );
    assert.throws(
      () => r('{{ parseInt "4x" }}'),
      /error calling parseInt: strconv.ParseInt: parsing "4x": invalid syntax/,
    );
    assert.equal(
      r('{{ base64Encode "hi" }} {{ base64Decode "aGk=" }} {{ sha256Hex "" | printf "%.8s" }}'),
      "aGk= hi e3b0c442",
    );
    assert.equal(
      r('{{ "a b" | contains "a" }} {{ split "," "x,y" | contains "y" }} {{ in (split "," "x,y") "z" }}'),
      "true true false",
    );
    assert.equal(
      r('{{ regexReplaceAll "(\\\\d+)" "<$1>" "a12b" }} {{ regexMatch "^a" "abc" }}'),
      "a<12>b true",
    );
    assert.equal(
      r('{{ timestamp }} {{ timestamp "unix" }} {{ timestamp "2006-01-02 15:04" }}'),
      "2026-03-04T05:06:07Z 1772600767 2026-03-04 05:06",
    );
    assert.equal(r('{{ "hello world" | toTitle }} {{ indent 2 "a\\nb" }}'), "Hello World   a\n  b");
  });

  it("errors carry the template name, line and column", () => {
    fails(
      "line1\n  {{ if true }}x",
      /^TemplateError: template: local\/out.conf:2:3: unexpected EOF: \{\{if\}\} has no \{\{end\}\}$/,
    );
    fails("ok\n{{ nosuchfn 1 }}", /template: local\/out.conf:2:4: function "nosuchfn" not defined/);
    fails("{{ end }}", /local\/out.conf:1:1: unexpected \{\{end\}\}/);
    fails("a {{ 1 ", /local\/out.conf:1:3: unclosed action/);
    fails('{{ "abc }}', /local\/out.conf:1:4: unterminated quoted string/);
    fails('{{ define "x" }}{{ end }}', /named templates\) is not supported/);
    fails("{{ break }}", /\{\{break\}\} outside \{\{range\}\}/);
    fails("{{ 1 2 }}", /can't give argument to non-function 1/);
  });

  it("bounds: positions deep in a long template, range iterations, Sprig names", () => {
    const long = `${"line\n".repeat(50_000)}  {{ nosuchfn }}`;
    assert.throws(() => r(long), /local\/out.conf:50001:6: function "nosuchfn" not defined/);
    assert.equal(r("{{ range 3 }}{{ end }}{{ range 0 }}x{{ else }}none{{ end }}"), "none");
    fails(
      "{{ range 100000000000 }}{{ end }}",
      /local\/out.conf:1:1: range exceeds 10000000 iterations in one render/,
    );
    fails(
      '{{ sprig_upper "a" }}',
      /error calling sprig_upper: berth's template renderer does not implement Sprig functions/,
    );
  });

  it("Consul, Vault and Nomad lookups fail naming the function; denied ones as Nomad's", () => {
    fails(
      'a\n  {{ key "service/redis/maxconns" }}',
      /local\/out.conf:2:6: executing "local\/out.conf" at <key>: error calling key: key reads from Consul, Vault or Nomad variables; berth has no Consul, Vault or Nomad variables/,
    );
    for (const fn of [
      "keyOrDefault",
      "service",
      "services",
      "secret",
      "secrets",
      "nomadVar",
      "nomadService",
    ]) {
      fails(
        `{{ ${fn} "x" }}`,
        new RegExp(`error calling ${fn}: ${fn} reads from Consul, Vault or Nomad variables`),
      );
    }
    // Only when called: an untaken branch renders.
    assert.equal(r('{{ if false }}{{ key "x" }}{{ end }}ok'), "ok");
    fails('{{ writeToFile "a" "b" "c" "d" }}', /error calling writeToFile: function is disabled/);
  });
});

describe("env file (template env = true)", () => {
  it("parses as go-envparse", () => {
    assert.deepEqual(
      parseEnvFile(
        'A=1\n\nexport B = two words  # comment\nC="q \\"x\\"\\n"\nD=\'lit # \\n\'\r\nE=\nF=a=b\n',
      ),
      { A: "1", B: "two words", C: 'q "x"\n', D: "lit # \\n", E: "", F: "a=b" },
    );
  });

  it("errors name the line", () => {
    assert.throws(() => parseEnvFile("A=1\n# comment\n"), /error on line 2: missing "="/);
    assert.throws(() => parseEnvFile('A=1\nB="open\n'), /error on line 2: unmatched "/);
    assert.throws(() => parseEnvFile("=x"), /error on line 1: empty key/);
    assert.throws(
      () => parseEnvFile("1A=x"),
      /error on line 1: key must start with \[A-Za-z_\] but found '1'/,
    );
    assert.throws(() => parseEnvFile('A="\\q"'), /invalid escape sequence: q/);
  });
});
