import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", ".data/**", "coverage/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-restricted-syntax": [
        "error",
        {
          selector: "MemberExpression[object.name='process'][property.name='env']",
          message: "Read configuration once, through a zod schema in the service's config (libs/config).",
        },
      ],
    },
  },
  {
    // Config parsing, the test helpers and the CLI entry are where the environment is read.
    files: ["libs/config/**", "libs/testing/**", "libs/logging/**", "**/test/**", "**/cli.ts", "**/main.ts", "**/runService.ts", "**/cluster.ts", "**/examples/**", "vitest.config.ts"],
    rules: { "no-restricted-syntax": "off" },
  },
);
