/**
 * The Go text/template engine behind `-t`: a table of template × data × what Go prints, and of
 * templates that fail with Go's error line. Expected outputs follow Go's text/template and fmt.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { render } from "../../../src/cli/gotemplate/exec.js";
import { TemplateError } from "../../../src/cli/gotemplate/ast.js";

const JOB = {
  ID: "web",
  Name: "web",
  Priority: 50,
  Stop: false,
  Meta: { Owner: "ops", Tier: "1" },
  TaskGroups: [
    { Name: "front", Count: 2, Tasks: [{ Name: "nginx", Driver: "docker" }] },
    { Name: "back", Count: 1, Tasks: [{ Name: "api", Driver: "exec" }] },
  ],
};
const DATA = {
  ID: "5b1f7c2e-aaaa-bbbb-cccc-000000000001",
  Job: JOB,
  Allocs: [
    { ID: "a1", ClientStatus: "running", TaskStates: { nginx: { State: "running" } } },
    { ID: "a2", ClientStatus: "failed", TaskStates: { nginx: { State: "dead" } } },
  ],
  CPU: 12.5,
  Big: 1700000000000000000,
  Empty: [],
  Nil: null,
  Text: "a b&c<d>",
};

const CASES: [template: string, expected: string, data?: unknown][] = [
  // Fields and chains.
  ["{{.ID}}", "5b1f7c2e-aaaa-bbbb-cccc-000000000001"],
  ["{{.Job.Name}}/{{.Job.Priority}}/{{.Job.Stop}}", "web/50/false"],
  ["{{.Job.TaskGroups}}", "[{front 2 [{nginx docker}]} {back 1 [{api exec}]}]"],
  ["{{.Job.Meta}}", "map[Owner:ops Tier:1]"],
  ["{{.Job.Meta.Owner}} {{.Job.Meta.Missing}}", "ops <no value>"],
  ["{{.Nil}} {{.Big}} {{.CPU}}", "<nil> 1700000000000000000 12.5"],
  ["{{.}}", "[1 2 3]", [1, 2, 3]],
  // range, with indexes, over maps (sorted), with else, break and continue.
  ["{{range .Allocs}}{{.ID}}={{.ClientStatus}} {{end}}", "a1=running a2=failed "],
  ["{{range $i, $a := .Allocs}}{{$i}}:{{$a.ID}};{{end}}", "0:a1;1:a2;"],
  ["{{range $k, $v := .Job.Meta}}{{$k}}={{$v}},{{end}}", "Owner=ops,Tier=1,"],
  ["{{range .Empty}}x{{else}}none{{end}}", "none"],
  ['{{range .Allocs}}{{if eq .ClientStatus "failed"}}{{break}}{{end}}{{.ID}}{{end}}', "a1"],
  ['{{range .Allocs}}{{if eq .ID "a1"}}{{continue}}{{end}}{{.ID}}{{end}}', "a2"],
  [
    "{{range .Job.TaskGroups}}{{$g := .Name}}{{range .Tasks}}{{$g}}/{{.Name}} {{end}}{{end}}",
    "front/nginx back/api ",
  ],
  ["{{range $.Allocs}}{{$.Job.ID}}{{end}}", "webweb"],
  // if / else if / else, with, and/or/not.
  ["{{if .Job.Stop}}stopped{{else if gt .Job.Priority 40}}high{{else}}low{{end}}", "high"],
  ["{{with .Job.Meta.Owner}}owner={{.}}{{else}}nobody{{end}}", "owner=ops"],
  ["{{with .Job.Meta.Nope}}{{.}}{{else}}nobody{{end}}", "nobody"],
  ['{{and 1 0 2}} {{or 0 "" "z"}} {{not .Empty}} {{and .Job .Job.Name}}', "0 z true web"],
  // Variables, assignment, pipelines, parentheses.
  ['{{$x := .Job.Name}}{{$x = printf "%s!" $x}}{{$x}}', "web!"],
  ['{{.Job.Name | printf "%q"}}', '"web"'],
  ['{{printf "%s-%d" .Job.Name (len .Allocs)}}', "web-2"],
  ["{{(index .Allocs 1).ID}}", "a2"],
  // Trim markers and comments.
  ["a  {{- .Job.Name -}}  b", "awebb"],
  ["{{/* a comment */}}x{{- /* trimmed */ -}}  y", "xy"],
  ["{{range .Allocs -}}\n  {{.ID}}\n{{- end}}", "a1a2"],
  // Literals.
  ["{{\"s\"}} {{`raw\\n`}} {{1}} {{1.5}} {{-2}} {{0x10}} {{true}} {{'a'}}", "s raw\\n 1 1.5 -2 16 true 97"],
  // printf's verbs, widths, precisions and complaints.
  [
    '{{printf "%5s|%-5s|%d|%v|%q|%t|%f|%x|%X" "a" "b" 3 .CPU "q" true .CPU 255 "hi"}}',
    '    a|b    |3|12.5|"q"|true|12.500000|ff|6869',
  ],
  [
    '{{printf "%.2f|%05d|%+d|%e|%g|%g|%8.3f|%o|%b|%c|%U" 3.14159 42 5 1234567.0 0.00001 100000.0 2.5 8 5 65 65}}',
    "3.14|00042|+5|1.234567e+06|1e-05|100000|   2.500|10|101|A|U+0041",
  ],
  [
    '{{printf "%d" "x"}}|{{printf "%s %s" "x"}}|{{printf "%s" "x" 3}}|{{printf "%s" .Nil}}',
    "%!d(string=x)|x %!s(MISSING)|x%!(EXTRA int=3)|%!s(<nil>)",
  ],
  ['{{printf "%s" .Empty}}|{{printf "%d" (sprig_list 1 2)}}|{{printf "%%"}}', "[]|[1 2]|%"],
  ['{{printf "%T %T %T %T" 1 1.5 "s" .Allocs}}', "int float64 string []interface {}"],
  // Go's builtins.
  ['{{len .Allocs}} {{len .Job.Meta}} {{len "héllo"}}', "2 2 6"],
  [
    '{{index .Allocs 0 | printf "%v"}} {{index .Job.Meta "Owner"}} {{index .Job.Meta "x"}}|',
    "{a1 running map[nginx:{running}]} ops |",
  ],
  ["{{slice .Job.Name 1}} {{slice .Job.Name 0 2}} {{slice .Allocs 1 | len}}", "eb we 1"],
  [
    '{{eq .Job.Name "web" "api"}} {{ne 1 2}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1.5 2}}',
    "true true true true true false",
  ],
  ['{{print "a" 1 2 "b"}}|{{println "a" 1}}|', "a1 2b|a 1\n|"],
  [
    '{{html .Text}} {{js "it\'s <x>"}} {{urlquery .Text}}',
    "a b&amp;c&lt;d&gt; it\\'s \\u003Cx\\u003E a+b%26c%3Cd%3E",
  ],
  // Nomad's sprig_ functions.
  [
    '{{sprig_join ", " (sprig_list "a" "b")}} {{sprig_upper .Job.Name}} {{sprig_lower "AB"}} {{sprig_trim "  x "}}',
    "a, b WEB ab x",
  ],
  [
    '{{sprig_default "none" .Job.Meta.Nope}} {{sprig_default "none" .Job.Meta.Owner}} {{.Job.Meta.Nope | sprig_default "d"}}',
    "none ops d",
  ],
  [
    '{{sprig_contains "eb" .Job.Name}} {{sprig_hasPrefix "we" .Job.Name}} {{sprig_hasSuffix "x" .Job.Name}}',
    "true true false",
  ],
  [
    '{{sprig_replace "-" "_" "a-b-c"}} {{(sprig_split "," "x,y")._1}} {{sprig_splitList "," "x,y"}}',
    "a_b_c y [x y]",
  ],
  ["{{.Job.Meta | sprig_toJson}}", '{"Owner":"ops","Tier":"1"}'],
  ["{{sprig_toPrettyJson .Job.TaskGroups}}", JSON.stringify(JOB.TaskGroups, null, 2)],
  ['{{sprig_toJson "<&>"}}', '"\\u003c\\u0026\\u003e"'],
];

const ERRORS: [template: string, message: string][] = [
  ["{{.ID}", 'template: :1: unexpected "}" in operand'],
  ["{{if .ID}}x", "template: :1: unexpected EOF"],
  ["x{{end}}", "template: :1: unexpected {{end}}"],
  ["{{else}}", "template: :1: unexpected {{else}}"],
  ["{{nope .ID}}", 'template: :1: function "nope" not defined'],
  ["{{$y}}", 'template: :1: undefined variable "$y"'],
  ['{{"abc}}', "template: :1: unterminated quoted string"],
  ["{{.ID", "template: :1: unclosed action"],
  ["{{}}", "template: :1: missing value for command"],
  ["{{break}}", "template: :1: {{break}} outside {{range}}"],
  ["a\n{{.ID | 3}}", "template: :2: non executable command in pipeline stage 2"],
  ["{{.Job.Nope}}", 'template: :1:6: executing "" at <.Job.Nope>: can\'t evaluate field Nope in type struct'],
  [
    "{{.Job.Name.Length}}",
    'template: :1:6: executing "" at <.Job.Name.Length>: can\'t evaluate field Length in type string',
  ],
  [
    "{{index .Allocs 5}}",
    'template: :1:2: executing "" at <index .Allocs 5>: error calling index: index out of range: 5',
  ],
  [
    "{{range .Job}}{{end}}",
    'template: :1:2: executing "" at <range .Job>: range can\'t iterate over {web web 50 false map[Owner:ops Tier:1] [{front 2 [{nginx docker}]} {back 1 [{api exec}]}]}',
  ],
  [
    "{{lt .Job 1}}",
    'template: :1:2: executing "" at <lt .Job 1>: error calling lt: invalid type for comparison',
  ],
  [
    "{{sprig_upper .CPU}}",
    'template: :1:2: executing "" at <sprig_upper .CPU>: wrong type for value; expected string; got float64',
  ],
  ["{{len}}", 'template: :1:2: executing "" at <len>: wrong number of args for len: want 1 got 0'],
  ["{{.Nil.X}}", 'template: :1:6: executing "" at <.Nil.X>: nil pointer evaluating interface {}.X'],
];

describe("gotemplate: Go's text/template", () => {
  for (const [template, expected, data] of CASES) {
    it(`renders ${JSON.stringify(template)}`, () => {
      assert.equal(render(template, data ?? DATA), expected);
    });
  }

  for (const [template, message] of ERRORS) {
    it(`fails ${JSON.stringify(template)} as Go does`, () => {
      assert.throws(
        () => render(template, DATA),
        (err: unknown) => err instanceof TemplateError && err.message === message,
        `expected: ${message}\n  got: ${(() => {
          try {
            return JSON.stringify(render(template, DATA));
          } catch (e) {
            return (e as Error).message;
          }
        })()}`,
      );
    });
  }

  it("an empty template prints nothing; text without actions prints as it is", () => {
    assert.equal(render("", DATA), "");
    assert.equal(render("plain {text}\n", DATA), "plain {text}\n");
  });

  it("a field of a map reached through a map-typed field (Meta) is a missing key, not an error", () => {
    assert.equal(render("{{.Meta.Zone}}", { ID: "n1", Meta: { Rack: "r1" } }), "<no value>");
  });
});
