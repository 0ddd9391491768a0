// Fetch the Node.js runtime of another architecture for `npm run dist`: the node-linux-<arch>
// package at the version and integrity package-lock.json pins (an optional dependency, which npm
// does not install on a machine of another architecture). Unpacked into build/runtimes/; fetched
// once. A tarball whose integrity differs from the lockfile's is refused.
//   node scripts/fetch-runtime.mjs arm64
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { extract } from 'tar';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The path of the runtime binary for `arch`, fetching it first if needed. */
export async function runtimeFor(arch) {
  if (arch === process.arch) {
    const local = join(root, 'node_modules', `node-linux-${arch}`, 'bin', 'node');
    if (existsSync(local)) return local;
  }
  const name = `node-linux-${arch}`;
  const lock = JSON.parse(await readFile(join(root, 'package-lock.json'), 'utf8'));
  const entry = lock.packages[`node_modules/${name}`];
  if (!entry?.integrity) throw new Error(`${name} is not pinned in package-lock.json`);
  const dir = join(root, 'build', 'runtimes', `${name}-${entry.version}`);
  const bin = join(dir, 'bin', 'node');
  if (existsSync(bin)) return bin;
  await mkdir(join(root, 'build'), { recursive: true });
  const tmp = await mkdtemp(join(root, 'build', `.runtime-${arch}-`));
  try {
    execFileSync('npm', ['pack', `${name}@${entry.version}`, '--pack-destination', tmp, '--silent'], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const tgz = join(
      tmp,
      (await readdir(tmp)).find((f) => f.endsWith('.tgz')),
    );
    const [algo, expected] = entry.integrity.split('-');
    const got = createHash(algo)
      .update(await readFile(tgz))
      .digest('base64');
    if (got !== expected)
      throw new Error(
        `${name}@${entry.version}: integrity ${algo}-${got} differs from the lockfile's ${entry.integrity}`,
      );
    await extract({ file: tgz, cwd: tmp });
    await mkdir(dirname(dir), { recursive: true });
    await rename(join(tmp, 'package'), dir);
    return bin;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const arch of process.argv.slice(2)) process.stdout.write(`${await runtimeFor(arch)}\n`);
}
