// Lint: typescript-eslint's recommended rules on every TypeScript source, with the few decisions
// the codebase takes deliberately written out below. Layout is Prettier's (`.prettierrc.json`);
// `max-len` only catches what Prettier cannot break: long comments and strings.
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", "dist/", ".test-output/", ".bench-output/", ".plugin-output/", "toolchain/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      // `_name` marks a parameter an interface requires and this implementation does not use.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "max-len": ["error", { code: 160 }],
    },
  },
  {
    files: ["**/*.js", "**/*.mjs"],
    // Jest's config and global hooks are CommonJS: Jest loads them before any TypeScript.
    languageOptions: { globals: { require: "readonly", module: "writable", process: "readonly", console: "readonly" } },
    rules: { "@typescript-eslint/no-require-imports": "off" },
  },
);
