/**
 * `npm run demo`: a disconnected site on one machine. Two real registries (Debian's
 * docker-registry, TLS with a freshly minted CA, htpasswd auth) stand in for the internet-side
 * source and the bastion's mirror; a synthetic image set shaped like a release payload is pushed to
 * the source; then the real CLI mirrors it registry → registry, again (nothing to do), to an archive
 * on disk, verifies the archive, and pushes the archive into the mirror — printing what it ran.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import yaml from 'js-yaml';
import { CopyEngine } from '../mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../mirror/copy/endpoints.js';
import { OciLayout } from '../mirror/layout/store.js';
import { RegistryClient } from '../mirror/registry/client.js';
import { formatBytes } from '../util/progress.js';
import { buildImages, releaseShapedSpecs } from './images.js';
import { startRegistry, type TestRegistry } from './registry.js';

const MiB = 1024 * 1024;
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const bin = join(root, 'bin', 'run.js');

function say(text: string): void {
  process.stdout.write(`\n\x1b[1m== ${text}\x1b[0m\n`);
}

/**
 * Run the real CLI, echoing the command line a person would type. Asynchronously: the registries
 * are children of this process and their log pipes must keep draining while the CLI runs.
 */
async function cli(args: string[], shown: string[]): Promise<number> {
  process.stdout.write(`$ airgap ${shown.join(' ')}\n`);
  const child = spawn(process.execPath, [bin, ...args], { stdio: 'inherit' });
  const [code] = (await once(child, 'exit')) as [number | null];
  return code ?? 1;
}

async function seed(src: TestRegistry, work: string): Promise<number> {
  const layout = await OciLayout.open(join(work, 'synthetic'));
  const specs = releaseShapedSpecs({
    byDigest: 24,
    tagged: 4,
    shared: [12 * MiB, 6 * MiB, 3 * MiB],
    unique: 2,
    uniqueMin: MiB / 2,
    uniqueMax: 2 * MiB,
    repo: 'ocp/release',
  });
  specs.push({
    repo: 'ocp/multi-arch-tool',
    tag: 'v1',
    arches: ['amd64', 'arm64', 's390x'],
    layers: [{ id: 'base0', size: 12 * MiB }, { size: MiB }],
  });
  const built = await buildImages(layout, specs);
  const client = new RegistryClient(src.host, {
    caFiles: [src.caFile],
    certDirs: [],
    credentials: { authFile: src.authFile },
  });
  const summary = await new CopyEngine({ parallel: 8 }).run(
    built.map((b) => ({
      source: { endpoint: new LayoutEndpoint(layout), repo: b.repo, ref: b.tag ?? b.digest },
      dest: { endpoint: new RegistryEndpoint(client), repo: b.repo, ref: b.tag ?? b.digest },
      digest: b.digest,
    })),
  );
  await client.close();
  if (summary.failed > 0)
    throw new Error(
      `seeding the source registry failed: ${summary.images.find((i) => i.error)?.error?.message}`,
    );
  const isc = {
    kind: 'ImageSetConfiguration',
    apiVersion: 'mirror.openshift.io/v2alpha1',
    mirror: {
      additionalImages: built.map((b) => ({
        name: b.tag ? `${src.host}/${b.repo}:${b.tag}` : `${src.host}/${b.repo}@${b.digest}`,
      })),
      blockedImages: [{ name: '.*/ocp/tagged-3:.*' }],
    },
  };
  await writeFile(join(work, 'imageset-config.yaml'), yaml.dump(isc, { lineWidth: 200 }));
  return summary.bytes;
}

async function main(): Promise<void> {
  const work = join(root, '.work', 'demo');
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  say('Starting two registries: the "internet" source and the bastion mirror (TLS + htpasswd)');
  const [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
  let failed = 0;
  try {
    process.stdout.write(`source ${src.host}, mirror ${dst.host}\n`);
    const auth = join(work, 'auth.json');
    const b64 = (r: TestRegistry) => Buffer.from(`${r.username}:${r.password}`).toString('base64');
    await writeFile(
      auth,
      JSON.stringify({ auths: { [src.host]: { auth: b64(src) }, [dst.host]: { auth: b64(dst) } } }),
      { mode: 0o600 },
    );

    say('Building a synthetic release-shaped image set and pushing it to the source');
    const bytes = await seed(src, work);
    process.stdout.write(
      `${formatBytes(bytes)} pushed; image set written to ${join(work, 'imageset-config.yaml')}\n`,
    );

    const isc = join(work, 'imageset-config.yaml');
    const common = ['-c', isc, '--authfile', auth, '--ca-file', src.caFile];
    const shownCommon = [
      '-c',
      '.work/demo/imageset-config.yaml',
      '--authfile',
      '.work/demo/auth.json',
      '--ca-file',
      'ca.crt',
    ];

    say('Mirror to mirror');
    failed += await cli(
      ['mirror', ...common, '--workspace', `file://${work}/ws`, `docker://${dst.host}/ocp4`],
      ['mirror', ...shownCommon, '--workspace', 'file://.work/demo/ws', `docker://${dst.host}/ocp4`],
    );

    say('The same again: everything is already there');
    failed += await cli(
      ['mirror', ...common, '--workspace', `file://${work}/ws`, `docker://${dst.host}/ocp4`],
      ['mirror', ...shownCommon, '--workspace', 'file://.work/demo/ws', `docker://${dst.host}/ocp4`],
    );

    say('Mirror to disk, in archive parts of at most 40 MiB');
    failed += await cli(
      ['mirror', ...common, '--archive-size', '40M', `file://${work}/archive`],
      ['mirror', ...shownCommon, '--archive-size', '40M', 'file://.work/demo/archive'],
    );

    say('Verify the archive before carrying it across the air gap');
    failed += await cli(
      ['mirror', 'verify', `file://${work}/archive`],
      ['mirror', 'verify', 'file://.work/demo/archive'],
    );

    say('Disk to mirror, on the disconnected side');
    failed += await cli(
      ['mirror', ...common, '--from', `file://${work}/archive`, `docker://${dst.host}/from-archive`],
      ['mirror', ...shownCommon, '--from', 'file://.work/demo/archive', `docker://${dst.host}/from-archive`],
    );
  } finally {
    await Promise.all([src.stop(), dst.stop()]);
  }
  say(failed === 0 ? 'Demo complete' : 'Demo finished with failures');
  process.exitCode = failed === 0 ? 0 : 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`demo failed: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
