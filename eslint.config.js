import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.work/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': [
        'error',
        {
          paths: [{ name: '@oclif/core', message: 'oclif belongs in src/commands only.' }],
        },
      ],
    },
  },
  {
    files: ['src/commands/**', 'src/util/command.ts', 'src/util/mirror-flags.ts', 'bin/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
