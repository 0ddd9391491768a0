#!/usr/bin/env node
// airgap from a checkout. It runs on the Node 24 LTS runtime package-lock.json pins
// (node_modules/node-linux-<arch>, as scripts/runtime.sh chooses it for the tests and the demo):
// started by any other Node, it hands over to that runtime, so the checkout runs what the tests
// test and what the single-file executable carries. Without it (npm ci not run), a Node older than
// package.json's engines floor is refused with the reason instead of failing somewhere inside.
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import process from 'node:process';
import { URL, fileURLToPath } from 'node:url';

const pinned = fileURLToPath(new URL(`../node_modules/node-linux-${process.arch}/bin/node`, import.meta.url));
if (existsSync(pinned) && realpathSync(pinned) !== realpathSync(process.execPath)) {
  const { spawn } = await import('node:child_process');
  const child = spawn(
    pinned,
    [...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)],
    {
      stdio: 'inherit',
    },
  );
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('exit', (code, signal) => {
    if (signal) {
      process.removeAllListeners(signal);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
} else {
  const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const floor = engines.node.replace(/^>=\s*/, '');
  const [maj, min] = process.versions.node.split('.').map(Number);
  const [fmaj, fmin] = floor.split('.').map(Number);
  if (maj < fmaj || (maj === fmaj && min < fmin)) {
    process.stderr.write(
      `error: airgap needs Node ${floor} or later; this is Node ${process.versions.node} (${process.execPath}). Run 'npm ci' in the checkout (it installs the Node 24 runtime airgap runs on), or use the single-file airgap executable, which carries its own.\n`,
    );
    process.exit(2);
  }
  // V8's compiled code is kept on disk (in the temporary directory): later starts parse nothing.
  (await import('node:module')).enableCompileCache();
  const { execute, settings } = await import('@oclif/core');
  // airgap runs compiled JavaScript: oclif must never look for TypeScript sources (under NODE_ENV
  // development or test it would read tsconfig.json and load the TypeScript compiler, ~0.1 s).
  settings.enableAutoTranspile = false;
  await execute({ dir: import.meta.url });
}
