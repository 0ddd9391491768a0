/**
 * knip (npm run lint, scripts/test.sh): no file, export or dependency that nothing uses. The entry
 * points are the CLI (bin/run.js, the oclif commands it loads from src/commands), the build and
 * release scripts, the lab's demo and the benchmarks (run from build/), and every test; a product
 * export that only a test imports counts as used.
 */
import type { KnipConfig } from 'knip';

const config: KnipConfig = {
  entry: [
    'src/commands/**/*.ts',
    'scripts/*.mjs',
    'lab/demo.ts',
    'bench/*.ts',
    // Run by bench/install.ts in a process of its own.
    'bench/lib/apply-dir.ts',
    // Run by the systemctl/journalctl shims lab/systemd-sim/index.ts writes, in processes of their own.
    'lab/systemd-sim/main.ts',
    'test/**/*.test.ts',
  ],
  project: ['bin/**/*.js', 'src/**/*.ts', 'scripts/**/*.mjs', 'lab/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts'],
  // A type or interface exported beside the function whose signature uses it stays exported.
  ignoreExportsUsedInFile: { interface: true, type: true },
  ignoreDependencies: [
    // scripts/dist.mjs runs node_modules/postject/dist/cli.js by path.
    'postject',
    // scripts/dist.mjs bundles it in place of Node's deprecated punycode (an esbuild alias).
    'punycode',
  ],
  // Programs the tests, the lab and the benchmarks run: Debian packages (scripts/test-deps.sh),
  // not npm ones.
  ignoreBinaries: [
    'gpg',
    'gpgconf',
    'htpasswd',
    'ip',
    'journalctl',
    'kubectl',
    'ldd',
    'mkfifo',
    'mount',
    'openssl',
    'podman',
    'script',
    'sha256sum',
    'skopeo',
    'systemd-analyze',
    'umount',
    'unshare',
    'wrk',
  ],
};

export default config;
