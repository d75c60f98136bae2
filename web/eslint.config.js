import js from '@eslint/js';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

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
      // Drawers come from src/lib/Drawer (Esc closes them even when a tooltip opened above).
      'no-restricted-imports': [
        'error',
        { paths: [{ name: 'antd', importNames: ['Drawer'], message: "Use Drawer from src/lib/Drawer (Esc closes it reliably)." }] },
      ],
    },
  },
  { files: ['src/lib/Drawer.tsx'], rules: { 'no-restricted-imports': 'off' } },
  {
    files: ['eslint.config.js', 'scripts/**/*.mjs'],
    extends: [js.configs.recommended],
    languageOptions: { globals: { ...globals.node } },
  },
);
