import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const oclif = { name: '@oclif/core', message: 'oclif belongs in src/commands only.' };
const kubeClient = {
  name: '@kubernetes/client-node',
  message: '@kubernetes/client-node stays in src/cluster/kube.ts: use the Kube client.',
};

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.work/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { paths: [oclif, kubeClient] }],
    },
  },
  {
    files: [
      'src/commands/**',
      'src/util/command.ts',
      'src/util/mirror-flags.ts',
      'src/util/cluster-flags.ts',
      'bin/**',
    ],
    rules: { 'no-restricted-imports': ['error', { paths: [kubeClient] }] },
  },
  {
    // Tests may drive the cluster with the real client directly, as an independent check.
    files: ['src/cluster/kube.ts', 'test/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [oclif] }] },
  },
);
