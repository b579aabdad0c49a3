// Type-aware lint: the rules that catch floating promises and unsafe `any` matter most in an
// orchestrator where every long operation is async and cancellable.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// docs/design.md's layering arrows (structs ← csi ← client; structs ← server; api ← cli; server ✗ client),
// one block per layer in src/: each names the layers that layer must not import. Plain regexes over
// the import string (no resolver, no type-aware pass, so they cost nothing): every cross-layer import
// climbs out of its folder, `(../)+LAYER/`, and no folder inside a layer bears a layer's name.
// Import cycles (type-only included) are not an ESLint rule: dependency-cruiser checks them in the
// `lint` script (.dependency-cruiser.json).
const LAYERS = [
  "hcl1",
  "gotemplate",
  "structs",
  "internal",
  "csi",
  "server",
  "client",
  "api",
  "cli",
  "agent",
  "nodesim",
];
const GRPC = {
  regex: "^@grpc/",
  message: "Only src/csi/ knows gRPC and protobuf (docs/design.md): go through csi/'s client.",
};

// Outside test/unit/, an import that climbs into test/unit/ (`../../unit/`, `../test/unit/`).
const TEST_UNIT = {
  regex: "^(\\.\\./)+(test/)?unit/",
  message:
    "Only test/unit/ imports from test/unit/: take shared fakes from test/fakes/ and builders from test/builders/.",
};

/** The rule block for the files of `layer` (src/LAYER/**), which may import only `allowed` layers. */
function layer(layer, allowed, why, { grpc = false } = {}) {
  const forbidden = LAYERS.filter((l) => l !== layer && !allowed.includes(l));
  const regex = `^(\\.\\./)+(${[...forbidden, "test", "bench"].join("|")})/`;
  const message = `src/${layer}/ may import only ${[layer, ...allowed].join(", ")}: ${why} (docs/design.md's arrows).`;
  return {
    files: [`src/${layer}/**/*.ts`],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex, message }, ...(grpc ? [] : [GRPC])] }],
      // no-restricted-imports does not see `import()`; a lazy import crosses a layer all the same.
      "no-restricted-syntax": [
        "error",
        { selector: `ImportExpression[source.value=/${regex.replaceAll("/", "\\/")}/]`, message },
        ...(grpc ? [] : [{ selector: "ImportExpression[source.value=/^@grpc\\//]", message: GRPC.message }]),
      ],
    },
  };
}

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", "eslint.config.js", "bin/"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      "@typescript-eslint/no-floating-promises": [
        "error",
        {
          // node:test's registration functions return promises the runner itself awaits.
          allowForKnownSafeCalls: [
            {
              from: "package",
              package: "node:test",
              name: ["test", "it", "describe", "suite", "before", "after", "beforeEach", "afterEach"],
            },
          ],
        },
      ],
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/require-await": "off",
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  {
    files: ["test/**/*.ts", "bench/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
  {
    // test/unit/ is private to the unit tests: shared fakes live in test/fakes/, record and job
    // builders in test/builders/, and everything else (integration, e2e, conformance, bench) takes
    // them from there, never from test/unit/.
    files: ["test/**/*.ts", "bench/**/*.ts"],
    ignores: ["test/unit/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ regex: TEST_UNIT.regex, message: TEST_UNIT.message }] },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: `ImportExpression[source.value=/${TEST_UNIT.regex.replaceAll("/", "\\/")}/]`,
          message: TEST_UNIT.message,
        },
      ],
    },
  },
  layer("hcl1", [], "the HCL 1 reader is pure and imports nothing"),
  layer("gotemplate", [], "Go's text/template engine is pure and imports nothing"),
  layer(
    "structs",
    ["hcl1"],
    "domain types and rules are pure and sit at the bottom (ACL policies are HCL 1)",
  ),
  layer("internal", ["structs"], "helpers usable by every layer (rpc/peer.ts carries structs' errors)"),
  layer("csi", ["structs", "internal"], "structs ← csi", { grpc: true }),
  layer("client", ["csi", "structs", "internal", "gotemplate"], "structs ← csi ← client; server ✗ client"),
  layer(
    "server",
    ["hcl1", "structs", "internal"],
    "structs ← server; server ✗ client, they meet in structs/",
  ),
  layer("api", ["hcl1"], "the HTTP client keeps its own DTOs"),
  layer("cli", ["hcl1", "gotemplate", "api"], "api ← cli: the CLI is a client of the HTTP API only"),
  layer("nodesim", ["structs", "internal", "csi", "client"], "the node simulator runs the node agent's code"),
  layer(
    "agent",
    ["hcl1", "structs", "internal", "csi", "server", "client", "api"],
    "the agent wires server and client",
  ),
  {
    // Files stay small (docs/design.md: a few hundred lines, one concern each): every real line counts,
    // blank and comment lines included, so a file cannot dodge the limit by its layout.
    files: ["src/**/*.ts"],
    rules: { "max-lines": ["error", { max: 400, skipBlankLines: false, skipComments: false }] },
  },
  {
    // The web UI (ui/src, browser code, type-checked by ui/tsconfig.json) talks to berth only through
    // the HTTP API: besides preact it may import only the API's DTOs (src/api/types*.ts, type-only).
    files: ["ui/src/**/*.ts", "ui/src/**/*.tsx"],
    rules: {
      "max-lines": ["error", { max: 400, skipBlankLines: false, skipComments: false }],
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            {
              regex: "^(\\.\\./){2,}(?!\\.\\./)(?!src/api/types(_\\w+)?\\.js$)",
              message: "ui/ may import only preact and src/api/types*.ts: it is a client of the HTTP API.",
            },
          ],
        },
      ],
    },
  },
  {
    // ui/build.mjs runs under Node at build time and belongs to no TypeScript project.
    files: ["ui/build.mjs"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The program router (src/main.ts) may load any layer; still no gRPC outside src/csi/.
    files: ["src/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: [GRPC] }] },
  },
);
