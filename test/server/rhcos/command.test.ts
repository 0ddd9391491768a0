import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReleasePayload } from '../../../lab/release.js';
import { CopyEngine } from '../../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import { airgap, spawnAirgap } from '../../helpers/cli.js';
import {
  ARTIFACT_SIZES,
  startFileServer,
  syntheticStream,
  type FileServer,
  type SyntheticStream,
} from '../../helpers/boot-files.js';
import { clientFor, tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { ServerError } from '../../../src/server/errors.js';

describe('airgap images fetch (the CLI)', () => {
  let server: FileServer;
  let synth: SyntheticStream;
  let root: string;
  let streamFile: string;
  let streamUrl: string;

  beforeAll(async () => {
    server = await startFileServer();
    synth = syntheticStream(server.base, { arches: ['x86_64', 'aarch64'] });
    for (const [p, b] of synth.files) server.files.set(p, b);
    server.files.set('/stream.json', Buffer.from(JSON.stringify(synth.stream)));
    streamUrl = `${server.base}/stream.json`;
    root = await tempDir('airgap-images-cli-');
    streamFile = join(root, 'stream.json');
    await writeFile(streamFile, JSON.stringify(synth.stream, null, 2));
  });
  afterAll(async () => {
    await server?.close();
  });

  const dirFor = async (name: string) => {
    const d = join(root, name);
    await mkdir(d);
    return d;
  };

  it('--help is written for the bastion: sources, what is fetched, resume, examples', async () => {
    const r = await airgap(['images', 'fetch', '--help']);
    expect(r.exitCode).toBe(0);
    for (const s of [
      '--release',
      '--stream-file',
      '--stream-url',
      '--pxe',
      '--arch',
      '--dir',
      'EXAMPLES',
      'Range',
      'sha256',
    ])
      expect(r.stdout).toContain(s);
  });

  it('fetches from a stream file; a second run with --json says nothing was downloaded', async () => {
    const dir = await dirFor('file');
    const r = await airgap([
      'images',
      'fetch',
      '--stream-file',
      streamFile,
      '--dir',
      dir,
      '--arch',
      'amd64',
      '--pxe',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const x = synth.artifacts.x86_64!;
    expect(r.stdout).toContain('stream rhcos-4.18 (OpenShift 4.18)');
    for (const k of ['iso', 'rootfs', 'kernel', 'initramfs']) expect(r.stdout).toContain(x[k]!.file);
    expect(r.stdout).toContain(`wrote ${join(dir, 'images', 'airgap-images.json')}`);
    for (const k of ['iso', 'rootfs', 'kernel', 'initramfs'])
      expect((await readFile(join(dir, 'images', x[k]!.file))).equals(x[k]!.data)).toBe(true);

    const again = await airgap([
      'images',
      'fetch',
      '--stream-file',
      streamFile,
      '--dir',
      dir,
      '--pxe',
      '--json',
    ]);
    expect(again.exitCode, again.stderr).toBe(0);
    const out = JSON.parse(again.stdout) as {
      files: { downloaded: boolean }[];
      manifest: { images: unknown[] };
    };
    expect(out.files.map((f) => f.downloaded)).toEqual([false, false, false, false]);
    expect(out.manifest.images).toHaveLength(4);
  });

  it('from a URL with every architecture of the stream', async () => {
    const dir = await dirFor('url');
    const r = await airgap([
      'images',
      'fetch',
      '--stream-url',
      streamUrl,
      '--dir',
      dir,
      '--arch',
      'all',
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { files: { arch: string; artifact: string }[] };
    expect(out.files.map((f) => `${f.arch}/${f.artifact}`)).toEqual([
      'x86_64/iso',
      'x86_64/rootfs',
      'aarch64/iso',
      'aarch64/rootfs',
    ]);
  });

  it('killed with -9 mid-download, the next run continues the partial file with Range', async () => {
    const dir = await dirFor('kill');
    const iso = synth.artifacts.aarch64!.iso!;
    const half = ARTIFACT_SIZES.iso / 2;
    server.fault(iso.path, { stallAfter: half });
    const args = ['images', 'fetch', '--stream-file', streamFile, '--dir', dir, '--arch', 'aarch64'];
    const child = spawnAirgap(args);
    const partial = join(dir, 'images', `.${iso.file}.partial`);
    const deadline = Date.now() + 30_000;
    while (((await stat(partial).catch(() => undefined))?.size ?? 0) < half) {
      if (Date.now() > deadline) throw new Error('the partial file never reached half the ISO');
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    await child;
    expect(await readdir(join(dir, 'images'))).not.toContain(iso.file);

    const before = server.gets(iso.path).length;
    const r = await airgap(args);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain('downloaded (resumed)');
    const gets = server.gets(iso.path).slice(before);
    expect(gets.map((g) => g.range)).toEqual([`bytes=${half}-`]);
    expect((await readFile(join(dir, 'images', iso.file))).equals(iso.data)).toBe(true);
    expect((await readdir(join(dir, 'images'))).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('bad input: exit 2 for what the person gave, exit 1 for a server that cannot be reached', async () => {
    const dir = await dirFor('bad');
    const arch = await airgap([
      'images',
      'fetch',
      '--stream-file',
      streamFile,
      '--dir',
      dir,
      '--arch',
      's390x',
    ]);
    expect(arch.exitCode).toBe(2);
    expect(arch.stderr).toContain(ServerError.STREAM_ARCH_MISSING);
    expect(arch.stderr).toContain('it has x86_64, aarch64');

    const missing = join(root, 'missing.json');
    const unreadable = await airgap(['images', 'fetch', '--stream-file', missing, '--dir', dir]);
    expect(unreadable.exitCode).toBe(2);
    expect(unreadable.stderr).toContain(`cannot read the stream file ${missing}: it does not exist`);

    const down = await airgap([
      'images',
      'fetch',
      '--stream-url',
      'http://127.0.0.1:1/stream.json',
      '--dir',
      dir,
      '--retry-times',
      '0',
    ]);
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toContain('STREAM_URL_UNREACHABLE');

    const noParent = await airgap([
      'images',
      'fetch',
      '--stream-file',
      streamFile,
      '--dir',
      join(root, 'no', 'such'),
    ]);
    expect(noParent.exitCode).toBe(2);
    expect(noParent.stderr).toContain(ServerError.IMAGES_DIR_MISSING);

    const none = await airgap(['images', 'fetch', '--dir', dir]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('--stream-file');
    const two = await airgap([
      'images',
      'fetch',
      '--stream-file',
      streamFile,
      '--stream-url',
      streamUrl,
      '--dir',
      dir,
    ]);
    expect(two.exitCode).toBe(2);
    const badArch = await airgap([
      'images',
      'fetch',
      '--stream-file',
      streamFile,
      '--dir',
      dir,
      '--arch',
      'sparc',
    ]);
    expect(badArch.exitCode).toBe(2);
    expect(badArch.stderr).toContain(ServerError.ARCH_INVALID);
    const json = await airgap(['images', 'fetch', '--stream-file', missing, '--dir', dir, '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ error: { code: ServerError.STREAM_UNREADABLE } });
    expect(await readdir(dir)).toEqual([]);
  });

  describe('--release through a registry', () => {
    let reg: TestRegistry;
    let release: string;

    beforeAll(async () => {
      reg = await startRegistry();
      const layout = await OciLayout.open(join(root, 'layout'));
      const built = await buildReleasePayload(layout, {
        version: '4.18.7',
        components: 2,
        registryPrefix: `${reg.host}/openshift-release-dev/ocp-v4.0-art-dev`,
        releaseRepo: 'ocp/openshift/release-images',
        bootImages: synth.stream,
      });
      release = `${reg.host}/${built.repo}:${built.tag}`;
      const client = clientFor(reg);
      const src = new LayoutEndpoint(layout);
      const dest = new RegistryEndpoint(client);
      const summary = await new CopyEngine({ parallel: 4 }).run(
        (await layout.entries()).map((e) => {
          const at = e.refName.indexOf('@');
          const cut = at >= 0 ? at : e.refName.lastIndexOf(':');
          const repo = e.refName.slice(0, cut);
          const ref = e.refName.slice(cut + 1);
          return {
            source: { endpoint: src, repo, ref },
            dest: { endpoint: dest, repo, ref },
            digest: e.descriptor.digest,
          };
        }),
      );
      await client.close();
      expect(summary.failed).toBe(0);
    });
    afterAll(async () => {
      await reg?.stop();
    });

    it('reads the stream from the mirrored release with --authfile and --ca-file', async () => {
      const dir = await dirFor('release');
      const r = await airgap([
        'images',
        'fetch',
        '--release',
        release,
        '--authfile',
        reg.authFile,
        '--ca-file',
        reg.caFile,
        '--dir',
        dir,
        '--arch',
        'aarch64',
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain('(OpenShift 4.18)');
      expect(r.stdout).toContain(`from ${reg.host}/ocp/openshift/release-images@sha256:`);
      expect(r.stdout).toContain(synth.artifacts.aarch64!.iso!.file);

      const noCa = await airgap([
        'images',
        'fetch',
        '--release',
        release,
        '--authfile',
        reg.authFile,
        '--dir',
        dir,
      ]);
      expect(noCa.exitCode).toBe(1);
      expect(noCa.stderr).toContain('--ca-file');
    });
  });
});
