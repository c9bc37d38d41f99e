/**
 * ESLint (flat config). TypeScript (lib, schema, test, sample-app) is linted with typescript-eslint's
 * type-aware `recommendedTypeChecked`, each file against the tsconfig.json nearest to it; JavaScript
 * (bench/*.mjs, the test helpers and the config files) with ESLint's `recommended` and Node's globals.
 * No stylistic rules: layout is Prettier's (eslint-config-prettier comes last and turns off any that
 * would fight it). sample-app imports `nestjs-pgqueue` from dist/, so lint after `npm run build`
 * (as `npm test` does), or its files see `any` everywhere.
 */
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores(['dist/', 'sample-app/dist/', 'coverage/', 'bench/node_modules/', '.pgdata/']),
  { linterOptions: { reportUnusedDisableDirectives: 'error' } },
  js.configs.recommended,
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // SQL builders share one signature `(s: string) => string` whether or not they use the schema.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' },
      ],
      // Passing on a rejection reason we were handed (typed unknown) is not inventing a non-Error one.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // Not in the preset; no violations today. A `return promise` inside try/catch/finally skips the
      // catch and runs the finally too early (a released connection, a lease given up before the work ends).
      '@typescript-eslint/return-await': ['error', 'in-try-catch'],
      // A switch over a union (job states, policies) must name every member or have a default.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Jest idioms type as `any`: `.catch((e) => e)`, pg's untyped `rows`, `res.json()`, `expect.any()`.
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // Tests throw and reject with non-Errors on purpose (poison handlers) and stringify unknowns in messages.
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/prefer-promise-reject-errors': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'sample-app/**/*.ts'],
    rules: {
      // Handlers and factories are async by contract; a test's or the sample's body often has nothing to await.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    // the dashboard's page script runs in the browser
    files: ['lib/dashboard/assets/**/*.js'],
    languageOptions: { globals: { ...globals.browser } },
  },
  prettier,
);
