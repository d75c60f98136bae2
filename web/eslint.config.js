import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

// Drawers come from src/lib/Drawer (Esc closes them even when a tooltip opened above).
const drawerImport = { name: 'antd', importNames: ['Drawer'], message: 'Use Drawer from src/lib/Drawer (Esc closes it reliably).' };

// One web client: every api call goes through src/api/typed.ts (openapi-fetch over the generated schema).
const removedClient = {
  group: ['**/api/client', '**/api/endpoints', '**/api/types'],
  message: 'The hand-written client is gone: call the api with fetchClient / $api from src/api/typed, types from src/api/models.',
};
const FETCH_API = 'Call the api through fetchClient / $api (src/api/typed.ts), not fetch: it adds the session, 401 handling and ApiError.';
const apiFetch = ['fetch', 'window.fetch', 'globalThis.fetch', 'self.fetch'].flatMap((callee) => {
  const match = callee.includes('.')
    ? `[callee.object.name='${callee.split('.')[0]}'][callee.property.name='fetch']`
    : `[callee.name='fetch']`;
  return [
    { selector: `CallExpression${match}[arguments.0.value=/\\/api\\//]`, message: FETCH_API },
    { selector: `CallExpression${match}[arguments.0.quasis.0.value.raw=/\\/api\\//]`, message: FETCH_API },
    { selector: `CallExpression${match}[arguments.0.type='NewExpression'][arguments.0.arguments.0.value=/\\/api\\//]`, message: FETCH_API },
  ];
});

export default tseslint.config(
  { ignores: ['dist', 'node_modules', 'src/api/schema.d.ts'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      ecmaVersion: 2022,
      globals: { ...globals.browser },
    },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [drawerImport], patterns: [removedClient] }],
      'no-restricted-syntax': ['error', ...apiFetch],
    },
  },
  { files: ['src/lib/Drawer.tsx'], rules: { 'no-restricted-imports': ['error', { patterns: [removedClient] }] } },
  // The client module is the one place that hands requests to fetch.
  { files: ['src/api/typed.ts'], rules: { 'no-restricted-syntax': 'off' } },
  {
    files: ['eslint.config.js', 'scripts/**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
);
