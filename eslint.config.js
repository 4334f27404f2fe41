import js from "@eslint/js";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative, sep } from "node:path";
import tseslint from "typescript-eslint";

// The boundaries of docs/architecture.md, as rules: each service folder and the package name it is imported by.
const root = import.meta.dirname;
const services = readdirSync(join(root, "services"))
  .filter((dir) => existsSync(join(root, "services", dir, "package.json")))
  .map((dir) => ({ dir, name: JSON.parse(readFileSync(join(root, "services", dir, "package.json"), "utf8")).name }));
/** The one place that may import every service: it wires them into one process (standalone) or many (cluster). */
const WIRING = "standalone";
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
/** Imports of a service, by package name or by a relative path into its folder. */
const importsOf = (list) => [
  { regex: `^(${list.map((s) => escape(s.name)).join("|")})(/.*)?$`, message: "No service imports another: call it over the bus through its contract in proto/." },
  { regex: `^(\\.\\./)+(services/)?(${list.map((s) => escape(s.dir)).join("|")})/`, message: "No relative import into another service's folder; shared test helpers live in libs/testing." },
];
const DATABASE_CODE = ["@sched/db", "@sched/outbox", "knex", "pg", "@electric-sql/pglite"];
const READ_ENV_ONCE = {
  selector: "MemberExpression[object.name='process'][property.name='env']",
  message: "Read configuration once, through a zod schema in the service's config (libs/config).",
};
/** A bus subject (`meetings.v1.http.get`) is spelled in proto/ alone: everyone else takes it from the contract. */
const SUBJECT_TEXT = "/^[a-z][a-z-]*\\.v[0-9]+\\./";
const SUBJECTS_FROM_PROTO = [
  { selector: `Literal[value=${SUBJECT_TEXT}]`, message: "Take the subject from its contract in proto/, never spell it." },
  { selector: `TemplateElement[value.raw=${SUBJECT_TEXT}]`, message: "Take the subject from its contract in proto/, never spell it." },
];

/**
 * What a file under services/<name>/src/ may be, by its first path segment
 * (docs/design.md, "A service's folders"): the same few folders in every service, the gateway's included.
 */
const SERVICE_LAYOUT = ["inbound", "consumers", "outbound", "domain", "db", "main.ts", "index.ts", "service.ts", "cli.ts", "cli"];
const layout = {
  rules: {
    "service-folders": {
      meta: { type: "problem", schema: [{ type: "array", items: { type: "string" } }] },
      create(context) {
        const [, service, , first] = relative(root, context.filename).split(sep);
        const allowed = context.options[0];
        return {
          Program(node) {
            if (allowed.includes(first)) return;
            context.report({ node, message: `services/${service}/src/ holds only ${allowed.join(", ")}: put ${first} in the folder that says what it is.` });
          },
        };
      },
    },
  },
};

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", ".data/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-syntax": ["error", READ_ENV_ONCE, ...SUBJECTS_FROM_PROTO],
    },
  },
  ...services
    .filter((service) => service.dir !== WIRING)
    .map((service) => ({
      files: [`services/${service.dir}/src/**/*.ts`],
      plugins: { layout },
      rules: {
        "layout/service-folders": ["error", SERVICE_LAYOUT],
        "no-restricted-imports": [
          "error",
          {
            patterns: [
              ...importsOf(services.filter((other) => other.dir !== service.dir)),
              ...(service.dir === "gateway"
                ? [
                    { group: DATABASE_CODE, message: "The gateway has no database code: it asks the services over the bus." },
                    { regex: "^@sched/runtime(/.*)?$", message: "The gateway runs in @sched/process, the shell without database code." },
                  ]
                : []),
            ],
          },
        ],
      },
    })),
  {
    // A service's tests may start its real neighbours (by package), never reach into their files by path; the wiring imports every module.
    files: [`services/*/test/**/*.ts`, `services/${WIRING}/**/*.ts`],
    rules: { "no-restricted-imports": ["error", { patterns: importsOf(services.filter((s) => s.dir !== WIRING)).slice(1) }] },
  },
  {
    files: ["libs/**/*.ts"],
    rules: { "no-restricted-imports": ["error", { patterns: importsOf(services) }] },
  },
  {
    files: ["proto/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [{ regex: "^(?!zod$|\\.{1,2}/)", message: "The contract in proto/ depends on zod alone, so every side can load it." }] }],
      // The contract is where subjects are spelled.
      "no-restricted-syntax": ["error", READ_ENV_ONCE],
    },
  },
  {
    // Config parsing and the entry points are where the environment is read; a subject is still taken from proto/ there.
    files: ["libs/config/**", "libs/logging/**", "**/cli.ts", "**/main.ts", "**/runService.ts", "**/cluster.ts"],
    rules: { "no-restricted-syntax": ["error", ...SUBJECTS_FROM_PROTO] },
  },
  {
    // Tests and their helpers read the environment, and spell subjects to pin the contract's names and define test-only endpoints.
    files: ["libs/testing/**", "**/test/**", "**/examples/**", "vitest.config.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
);
