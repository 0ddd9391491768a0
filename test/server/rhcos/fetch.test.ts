import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testCertificates } from '../../../lab/pki.js';
import { buildReleasePayload } from '../../../lab/release.js';
import { CopyEngine } from '../../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import { partialPathFor } from '../../../src/net/download.js';
import { fetchBootImages, type FetchBootImagesOptions } from '../../../src/server/rhcos/fetch.js';
import { readBootImagesManifest } from '../../../src/server/rhcos/manifest.js';
import type { ProgressEvent } from '../../../src/util/progress.js';
import {
  ARTIFACT_SIZES,
  sha256Hex,
  startFileServer,
  syntheticStream,
  type FileServer,
  type SyntheticStream,
} from '../../helpers/boot-files.js';
import { clientFor, tempDir } from '../../helpers/fixtures.js';
import { rejection } from '../../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { ServerError } from '../../../src/server/errors.js';

const fast = { retries: 3, baseDelayMs: 5 };

/** Serve a synthetic stream's files and its JSON (at /streams/<name>.json). */
function serve(server: FileServer, s: SyntheticStream): string {
  for (const [p, b] of s.files) server.files.set(p, b);
  const path = `/streams/${s.stream.stream}.json`;
  server.files.set(path, Buffer.from(JSON.stringify(s.stream, null, 2)));
  return `${server.base}${path}`;
}

async function newDir(root: string, name: string): Promise<string> {
  const d = join(root, name);
  await mkdir(d);
  return d;
}

describe('fetchBootImages from a stream file or URL', () => {
  let server: FileServer;
  let synth: SyntheticStream;
  let root: string;
  let streamFile: string;
  let streamUrl: string;

  beforeAll(async () => {
    server = await startFileServer();
    synth = syntheticStream(server.base, { arches: ['x86_64', 'aarch64', 's390x'] });
    streamUrl = serve(server, synth);
    root = await tempDir('airgap-fetch-');
    streamFile = join(root, 'stream.json');
    await writeFile(streamFile, JSON.stringify(synth.stream, null, 2));
  });
  afterAll(async () => {
    await server?.close();
  });

  const fetch = (o: Partial<FetchBootImagesOptions> & Pick<FetchBootImagesOptions, 'dir'>) =>
    fetchBootImages({ source: { file: streamFile }, ...fast, ...o });

  it('puts the live ISO and rootfs in <dir>/images under their own names, with a manifest; a second run fetches nothing', async () => {
    const dir = await newDir(root, 'basic');
    const events: ProgressEvent[] = [];
    const r = await fetch({ dir, progress: (e) => events.push(e) });
    const x = synth.artifacts.x86_64!;
    expect(r.files.map((f) => [f.arch, f.artifact, f.file, f.downloaded])).toEqual([
      ['x86_64', 'iso', x.iso!.file, true],
      ['x86_64', 'rootfs', x.rootfs!.file, true],
    ]);
    expect(x.iso!.file).toBe('rhcos-9.6.20250402-0-live-iso.x86_64.iso');
    for (const f of r.files) {
      const want = x[f.artifact]!.data;
      expect((await readFile(join(dir, 'images', f.file))).equals(want)).toBe(true);
      expect(f.sha256).toBe(sha256Hex(want));
      expect(f.size).toBe(want.length);
    }
    expect((await readdir(join(dir, 'images'))).sort()).toEqual(
      ['airgap-images.json', x.iso!.file, x.rootfs!.file].sort(),
    );
    expect(r.stream).toBe('rhcos-4.18');
    expect(r.openshiftVersion).toBe('4.18'); // from the stream name
    expect(r.source).toBe(streamFile);

    const m = await readBootImagesManifest(dir, { checkFiles: true });
    expect(m).toEqual(r.manifest);
    expect(m).toMatchObject({
      kind: 'AirgapBootImages',
      version: 1,
      stream: 'rhcos-4.18',
      openshiftVersion: '4.18',
    });
    expect(m.images).toEqual([
      {
        architecture: 'x86_64',
        artifact: 'iso',
        release: '9.6.20250402-0',
        file: x.iso!.file,
        sha256: sha256Hex(x.iso!.data),
        size: ARTIFACT_SIZES.iso,
        location: `${server.base}${x.iso!.path}`,
        stream: 'rhcos-4.18',
        openshiftVersion: '4.18',
      },
      {
        architecture: 'x86_64',
        artifact: 'rootfs',
        release: '9.6.20250402-0',
        file: x.rootfs!.file,
        sha256: sha256Hex(x.rootfs!.data),
        size: ARTIFACT_SIZES.rootfs,
        location: `${server.base}${x.rootfs!.path}`,
        stream: 'rhcos-4.18',
        openshiftVersion: '4.18',
      },
    ]);

    const bytes = events.filter((e) => e.type === 'bytes').reduce((n, e) => n + e.bytes, 0);
    const planned = events.filter((e) => e.type === 'bytes-planned').reduce((n, e) => n + e.bytes, 0);
    expect(bytes).toBe(ARTIFACT_SIZES.iso + ARTIFACT_SIZES.rootfs);
    expect(planned).toBe(bytes);
    expect(events).toContainEqual({ type: 'items-total', total: 2 });
    expect(events.filter((e) => e.type === 'item-done' && e.ok)).toHaveLength(2);

    const gets = () => server.gets(x.iso!.path).length + server.gets(x.rootfs!.path).length;
    const before = gets();
    const again = await fetch({ dir });
    expect(again.files.map((f) => f.downloaded)).toEqual([false, false]);
    expect(gets()).toBe(before); // the server saw no GET
    expect(again.manifest).toEqual(m);
  });

  it('--pxe from a URL, arm64 as an alias; a second architecture merges into the manifest', async () => {
    const dir = await newDir(root, 'pxe');
    await fetch({ dir });
    const r = await fetchBootImages({
      source: { url: streamUrl },
      dir,
      arches: ['arm64'],
      pxe: true,
      ...fast,
    });
    const a = synth.artifacts.aarch64!;
    expect(r.files.map((f) => f.file)).toEqual([
      a.iso!.file,
      a.rootfs!.file,
      a.kernel!.file,
      a.initramfs!.file,
    ]);
    expect(r.source).toBe(streamUrl);
    for (const f of r.files) expect((await readFile(f.path)).equals(a[f.artifact]!.data)).toBe(true);
    const m = await readBootImagesManifest(dir, { checkFiles: true });
    expect(m.images.map((i) => `${i.architecture}/${i.artifact}`)).toEqual([
      'aarch64/iso',
      'aarch64/rootfs',
      'aarch64/kernel',
      'aarch64/initramfs',
      'x86_64/iso',
      'x86_64/rootfs',
    ]);
    expect(m.source).toBe(streamUrl);
  });

  it('a connection dropped halfway is resumed with Range: about one file crosses', async () => {
    const dir = await newDir(root, 'drop');
    const iso = synth.artifacts.s390x!.iso!;
    server.fault(iso.path, { dropAfter: ARTIFACT_SIZES.iso / 2 });
    const r = await fetch({ dir, arches: ['s390x'] });
    const gets = server.gets(iso.path);
    expect(gets).toHaveLength(2);
    expect(gets[0]!.range).toBeUndefined();
    expect(gets[1]!.range).toMatch(/^bytes=\d+-$/);
    expect(gets[1]!.status).toBe(206);
    expect(server.sent(iso.path)).toBeLessThan(ARTIFACT_SIZES.iso * 1.1);
    expect((await readFile(join(dir, 'images', iso.file))).equals(iso.data)).toBe(true);
    expect(r.files[0]!.downloaded).toBe(true);
  });

  it('a corrupted file is rejected and not kept; the good one is kept and listed', async () => {
    const dir = await newDir(root, 'corrupt');
    const x = synth.artifacts.x86_64!;
    const bad = Buffer.from(x.rootfs!.data);
    bad[1000]! ^= 0x01;
    server.fault(x.rootfs!.path, { body: bad, times: Infinity });
    try {
      const e = await rejection(fetch({ dir }));
      expect(e.code).toBe('IMAGES_DOWNLOAD_DIGEST_MISMATCH');
      expect(e.exitCode).toBe(1);
      expect(e.message).toContain(`${server.base}${x.rootfs!.path}`);
      expect(e.message).toContain(sha256Hex(x.rootfs!.data));
      expect(e.message).toContain(sha256Hex(bad));
      const files = await readdir(join(dir, 'images'));
      expect(files.sort()).toEqual(['airgap-images.json', x.iso!.file].sort());
      expect(files).not.toContain(partialPathFor(x.rootfs!.file));
      const m = await readBootImagesManifest(dir, { checkFiles: true });
      expect(m.images.map((i) => i.artifact)).toEqual(['iso']);
    } finally {
      server.fault(x.rootfs!.path, { times: 0 });
    }
    // Fixed at the source: the next run fetches only the rootfs.
    const isoGets = server.gets(x.iso!.path).length;
    const r = await fetch({ dir });
    expect(r.files.map((f) => f.downloaded)).toEqual([false, true]);
    expect(server.gets(x.iso!.path).length).toBe(isoGets);
  });

  it('bad input: an architecture the stream lacks, an unreadable file, an unreachable URL, a missing directory', async () => {
    const dir = await newDir(root, 'bad');
    const arch = await rejection(fetch({ dir, arches: ['ppc64le'] }));
    expect(arch.code).toBe(ServerError.STREAM_ARCH_MISSING);
    expect(arch.exitCode).toBe(2);
    expect(arch.message).toContain('x86_64, aarch64, s390x');
    expect(arch.where).toBe(streamFile);

    const missing = join(root, 'nope.json');
    const unreadable = await rejection(fetchBootImages({ source: { file: missing }, dir }));
    expect(unreadable.code).toBe(ServerError.STREAM_UNREADABLE);
    expect(unreadable.exitCode).toBe(2);
    expect(unreadable.message).toContain(missing);
    if (process.getuid?.() !== 0) {
      const locked = join(root, 'locked.json');
      await writeFile(locked, '{}');
      await chmod(locked, 0);
      expect((await rejection(fetchBootImages({ source: { file: locked }, dir }))).message).toContain(
        'permission denied',
      );
    }
    const garbage = join(root, 'garbage.json');
    await writeFile(garbage, '<html>captive portal</html>');
    const g = await rejection(fetchBootImages({ source: { file: garbage }, dir }));
    expect(g.code).toBe(ServerError.STREAM_INVALID);
    expect(g.exitCode).toBe(2);

    const url = `${server.base.replace(/:\d+$/, ':1')}/stream.json`;
    const down = await rejection(fetchBootImages({ source: { url }, dir, retries: 0 }));
    expect(down.code).toBe('STREAM_URL_UNREACHABLE');
    expect(down.exitCode).toBe(1);
    expect(down.message).toContain(url);
    const notFound = await rejection(
      fetchBootImages({ source: { url: `${server.base}/streams/none.json` }, dir, retries: 0 }),
    );
    expect(notFound.code).toBe('STREAM_URL_STATUS');

    const noParent = join(root, 'missing', 'dir');
    const d = await rejection(fetch({ dir: noParent }));
    expect(d.code).toBe(ServerError.IMAGES_DIR_MISSING);
    expect(d.exitCode).toBe(2);
    expect(d.hint).toContain('mkdir -p');
    expect(await readdir(dir)).toEqual([]); // nothing was written for the bad inputs
  });

  it('over HTTPS, trusting the CA file', async () => {
    const { ca, server: cert } = testCertificates();
    const tls = await startFileServer(new Map(), { tls: cert });
    try {
      const s = syntheticStream(tls.base, { arches: ['x86_64'], name: 'rhcos-4.19' });
      const url = serve(tls, s);
      const caFile = join(root, 'ca.crt');
      await writeFile(caFile, ca.certPem);
      const dir = await newDir(root, 'tls');
      const r = await fetchBootImages({
        source: { url },
        dir,
        pxe: true,
        tls: { caFiles: [caFile], certDirs: [] },
        ...fast,
      });
      expect(r.openshiftVersion).toBe('4.19');
      expect(r.files).toHaveLength(4);
      const e = await rejection(
        fetchBootImages({
          source: { url },
          dir: await newDir(root, 'tls2'),
          tls: { certDirs: [] },
          retries: 0,
        }),
      );
      expect(e.code).toBe('STREAM_URL_TLS');
    } finally {
      await tls.close();
    }
  });
});

describe('fetchBootImages from a release payload in a registry', () => {
  let reg: TestRegistry;
  let server: FileServer;
  let root: string;
  let rhel9: SyntheticStream;
  let rhel10: SyntheticStream;
  let single: string;
  let multi: string;

  /** Push every entry of a layout into the registry under the same names. */
  async function push(layout: OciLayout): Promise<void> {
    const client = clientFor(reg);
    const src = new LayoutEndpoint(layout);
    const dest = new RegistryEndpoint(client);
    const pairs = (await layout.entries()).map((e) => {
      const at = e.refName.indexOf('@');
      const cut = at >= 0 ? at : e.refName.lastIndexOf(':');
      const repo = e.refName.slice(0, cut);
      const ref = e.refName.slice(cut + 1);
      return {
        source: { endpoint: src, repo, ref },
        dest: { endpoint: dest, repo, ref },
        digest: e.descriptor.digest,
      };
    });
    const summary = await new CopyEngine({ parallel: 8 }).run(pairs);
    await client.close();
    expect(summary.failed).toBe(0);
  }

  beforeAll(async () => {
    reg = await startRegistry();
    server = await startFileServer();
    root = await tempDir('airgap-fetch-release-');
    rhel9 = syntheticStream(server.base, { arches: ['x86_64', 'aarch64'], name: 'rhcos-4.18' });
    rhel10 = syntheticStream(server.base, {
      arches: ['x86_64'],
      name: 'rhcos-4.18-10.0',
      release: '10.0.20250402-0',
      rhel: '10.0',
    });
    serve(server, rhel9);
    serve(server, rhel10);
    const layout = await OciLayout.open(join(root, 'layout'));
    // A 4.10-style payload: data.stream only.
    const a = await buildReleasePayload(layout, {
      version: '4.18.3',
      components: 3,
      registryPrefix: `${reg.host}/openshift-release-dev/ocp-v4.0-art-dev`,
      bootImages: rhel9.stream,
    });
    single = `${reg.host}/${a.repo}:${a.tag}`;
    // A newer, multi-arch payload: data.stream (the default) and data.streams (rhel-9, rhel-10).
    const cm = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'coreos-bootimages', namespace: 'openshift-machine-config-operator' },
      data: {
        releaseVersion: '0.0.1-snapshot',
        stream: JSON.stringify(rhel9.stream),
        streams: JSON.stringify({ 'rhel-9': rhel9.stream, 'rhel-10': rhel10.stream }),
      },
    });
    const b = await buildReleasePayload(layout, {
      version: '4.19.0',
      arch: ['amd64', 'arm64'],
      components: 2,
      registryPrefix: `${reg.host}/openshift-release-dev/ocp-v4.0-art-dev`,
      releaseRepo: 'ocp/openshift/release-images',
      extraFiles: { '0000_50_installer_coreos-bootimages.yaml': cm },
    });
    multi = `${reg.host}/${b.repo}@${b.digest}`;
    await push(layout);
  });
  afterAll(async () => {
    await server?.close();
    await reg?.stop();
  });

  const client = () => ({ caFiles: [reg.caFile], certDirs: [], credentials: { authFile: reg.authFile } });

  it('reads the coreos-bootimages stream through the registry; the version comes from the release', async () => {
    const dir = await newDir(root, 'single');
    const r = await fetchBootImages({ source: { release: single, client: client() }, dir, ...fast });
    expect(r.releaseVersion).toBe('4.18.3');
    expect(r.openshiftVersion).toBe('4.18');
    expect(r.source).toMatch(
      new RegExp(`^${reg.host.replace(/[.[\]]/g, '\\$&')}/openshift-release-dev/ocp-release@sha256:`),
    );
    const x = rhel9.artifacts.x86_64!;
    expect(r.files.map((f) => f.file)).toEqual([x.iso!.file, x.rootfs!.file]);
    for (const f of r.files) expect((await readFile(f.path)).equals(x[f.artifact]!.data)).toBe(true);
    const m = await readBootImagesManifest(dir);
    expect(m).toMatchObject({ stream: 'rhcos-4.18', openshiftVersion: '4.18', source: r.source });
  });

  it('a payload with several streams: the default, or --os-stream; multi-arch follows the asked architecture', async () => {
    const dir = await newDir(root, 'multi');
    const def = await fetchBootImages({
      source: { release: multi, client: client() },
      dir,
      arches: ['aarch64'],
      ...fast,
    });
    expect(def.stream).toBe('rhcos-4.18');
    expect(def.openshiftVersion).toBe('4.19'); // the release's version wins over the stream name
    expect(def.files[0]!.file).toBe(rhel9.artifacts.aarch64!.iso!.file);

    const ten = await fetchBootImages({
      source: { release: multi, client: client() },
      dir,
      osStream: 'rhel-10',
      ...fast,
    });
    expect(ten.stream).toBe('rhcos-4.18-10.0');
    expect(ten.files.map((f) => f.file)).toEqual([
      'rhcos-10.0.20250402-0-live-iso.x86_64.iso',
      'rhcos-10.0.20250402-0-live-rootfs.x86_64.img',
    ]);
    const m = await readBootImagesManifest(dir, { checkFiles: true });
    expect(m.images.map((i) => `${i.stream}/${i.architecture}/${i.artifact}`)).toEqual([
      'rhcos-4.18/aarch64/iso',
      'rhcos-4.18/aarch64/rootfs',
      'rhcos-4.18-10.0/x86_64/iso',
      'rhcos-4.18-10.0/x86_64/rootfs',
    ]);
    expect(m.stream).toBe('rhcos-4.18-10.0');

    const e = await rejection(
      fetchBootImages({ source: { release: multi, client: client() }, dir, osStream: 'rhel-8', ...fast }),
    );
    expect(e.code).toBe(ServerError.STREAM_NOT_FOUND);
    expect(e.message).toContain('rhel-9 (rhcos-4.18), rhel-10 (rhcos-4.18-10.0)');
  });

  it('an architecture the payload stream lacks is exit 2, listing what it has', async () => {
    const e = await rejection(
      fetchBootImages({
        source: { release: single, client: client() },
        dir: await newDir(root, 'nos390x'),
        arches: ['s390x'],
      }),
    );
    expect(e.code).toBe(ServerError.STREAM_ARCH_MISSING);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('it has x86_64, aarch64');
  });
});
