import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildImages, type BuiltImage } from '../../../lab/images.js';
import {
  GRAPH_DATA_PATH,
  startGraphServer,
  syntheticGraphData,
  type GraphServer,
} from '../../../lab/graph-server.js';
import { testCertificates } from '../../../lab/pki.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import { MediaType } from '../../../src/mirror/media-types.js';
import { OCP_UPDATE_URL, graphEndpoint, parseGraph } from '../../../src/mirror/openshift/graph.js';
import {
  OCP_GRAPH_DATA_URL,
  downloadGraphData,
  graphDataUrl,
} from '../../../src/mirror/openshift/graph-data.js';
import { GRAPH_IMAGE_CMD, buildGraphImage } from '../../../src/mirror/openshift/graph-image.js';
import { startConnectProxy } from '../../helpers/connect-proxy.js';
import { tempDir } from '../../helpers/fixtures.js';
import { lazy, realdata, rejection, withRealdata } from '../../helpers/realdata.js';
import { skopeoCopy, skopeoInspect } from '../../helpers/skopeo.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const readGraph = (file: string) =>
  parseGraph(JSON.parse(readFileSync(realdata('samples', 'update-graph', file), 'utf8')));
/** The real graphs the lab serves here (read on first use: they need the realdata). */
const sample = lazy(() => readGraph('cincinnati-amd64-stable-4.13.json'));
const graphs = lazy(() => ({
  'stable-4.13/amd64': sample(),
  'candidate-4.12/multi': readGraph('cincinnati-candidate-4.12-multi.json'),
}));

const sha256 = (b: Buffer): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** `tar -tv` of a file, one line per entry, with GNU tar's --numeric-owner when asked. */
async function tarList(file: string, numeric = false): Promise<string[]> {
  const args = ['-tvzf', file, ...(numeric ? ['--numeric-owner'] : [])];
  const { stdout } = await execa('tar', args, { env: { TZ: 'UTC', LC_ALL: 'C' } });
  return stdout.split('\n').filter(Boolean);
}

/** The path column of `tar -tv` lines (symlinks keep their ` -> target`). */
const pathsOf = (lines: string[]): string[] => lines.map((l) => l.split(/\s+/).slice(5).join(' '));

/** A tiny HTTP server for redirects and failures; `handler` decides per request. */
async function httpServer(
  handler: Parameters<typeof createServer>[1],
): Promise<{ base: string; close(): Promise<void> }> {
  const srv: Server = createServer(handler);
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => srv.close(() => r())),
  };
}

describe('graphDataUrl', () => {
  it('derives the tarball URL from the graph endpoint', () => {
    expect(graphDataUrl(OCP_UPDATE_URL)).toBe(OCP_GRAPH_DATA_URL);
    expect(graphDataUrl()).toBe(OCP_GRAPH_DATA_URL);
    expect(graphDataUrl('http://127.0.0.1:8080/api/upgrades_info/v1/graph?x=1')).toBe(
      'http://127.0.0.1:8080/api/upgrades_info/graph-data',
    );
    expect(graphDataUrl('https://osus.example.com/prefix/api/upgrades_info/v1/graph/')).toBe(
      'https://osus.example.com/prefix/api/upgrades_info/graph-data',
    );
    // Not a /v1/graph endpoint: oc-mirror's rule (scheme and host of the override, the public path).
    expect(graphDataUrl('http://origin-release.example.com:81/graph')).toBe(
      'http://origin-release.example.com:81/api/upgrades_info/graph-data',
    );
  });

  it('moves with UPDATE_URL_OVERRIDE and --graph-url; a bad URL is a usage error', async () => {
    expect(
      graphDataUrl(
        graphEndpoint(undefined, { UPDATE_URL_OVERRIDE: 'http://osus:9/api/upgrades_info/v1/graph' }),
      ),
    ).toBe('http://osus:9/api/upgrades_info/graph-data');
    expect(graphDataUrl(graphEndpoint('https://g.example/api/upgrades_info/v1/graph', {}))).toBe(
      'https://g.example/api/upgrades_info/graph-data',
    );
    let err: unknown;
    try {
      graphDataUrl('not a url');
    } catch (e) {
      err = e;
    }
    expect((err as { code?: string }).code).toBe(MirrorError.GRAPH_URL_INVALID);
    expect((err as { exitCode?: number }).exitCode).toBe(2);
  });
});

withRealdata.describe('the lab graph-data tarball', () => {
  let server: GraphServer;
  let dir: string;

  beforeAll(async () => {
    server = await startGraphServer({ graphs: { ...graphs() } });
    dir = await tempDir('airgap-graphdata-');
  });
  afterAll(async () => {
    await server.stop();
  });

  it('is served at /api/upgrades_info/graph-data, recorded, and shaped like cincinnati-graph-data', async () => {
    expect(server.graphDataUrl).toBe(graphDataUrl(server.url));
    const res = await fetch(server.graphDataUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/gzip');
    const body = Buffer.from(await res.arrayBuffer());
    expect(server.requests.at(-1)?.path).toBe(GRAPH_DATA_PATH);
    const file = join(dir, 'lab.tar.gz');
    await writeFile(file, body);
    const paths = pathsOf(await tarList(file));
    expect(paths).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'version',
        'channels/',
        'channels/stable-4.13.yaml',
        'channels/candidate-4.12.yaml',
        'blocked-edges/',
        'raw/',
        'raw/metadata.json',
      ]),
    );
    expect(paths.filter((p) => p.startsWith('blocked-edges/') && p.endsWith('.yaml')).length).toBeGreaterThan(
      0,
    );
    const { stdout } = await execa('tar', ['-xzOf', file, 'channels/stable-4.13.yaml']);
    expect(stdout.startsWith('name: stable-4.13\nversions:\n- 4.')).toBe(true);
    const versions = stdout.split('\n').filter((l) => l.startsWith('- '));
    expect(versions).toHaveLength(new Set(sample().nodes.map((n) => n.version)).size);
    const risk = sample().conditionalEdges[0]!;
    const edge = risk.edges[0]!;
    const blocked = await execa('tar', [
      '-xzOf',
      file,
      `blocked-edges/${edge.to}-${risk.risks[0]!.name}.yaml`,
    ]);
    expect(blocked.stdout).toContain(`to: ${edge.to}`);
    expect(blocked.stdout).toContain(`name: ${risk.risks[0]!.name}`);
    expect(blocked.stdout).toContain('matchingRules:');
  });

  it('is deterministic for the same graphs, and serves replacement bytes when set', async () => {
    expect(syntheticGraphData(graphs()).equals(syntheticGraphData({ ...graphs() }))).toBe(true);
    const a = Buffer.from(await (await fetch(server.graphDataUrl)).arrayBuffer());
    const b = Buffer.from(await (await fetch(server.graphDataUrl)).arrayBuffer());
    expect(a.equals(b)).toBe(true);
    server.graphData = Buffer.from('replacement');
    try {
      expect(await (await fetch(server.graphDataUrl)).text()).toBe('replacement');
    } finally {
      delete server.graphData;
    }
  });
});

withRealdata.describe('downloadGraphData', () => {
  let server: GraphServer;
  let dir: string;

  beforeAll(async () => {
    server = await startGraphServer({ graphs: { ...graphs() } });
    dir = await tempDir('airgap-graphdl-');
  });
  afterAll(async () => {
    await server.stop();
  });
  afterEach(() => {
    delete server.graphData;
  });

  it('streams the tarball to the destination, follows redirects and reports its digest', async () => {
    const dest = join(dir, 'ok', 'graph-data.tar.gz');
    const got = await downloadGraphData(server.graphDataUrl, dest);
    const bytes = await readFile(dest);
    expect(bytes.equals(syntheticGraphData(graphs()))).toBe(true);
    expect(got).toEqual({ url: server.graphDataUrl, bytes: bytes.length, digest: sha256(bytes) });

    const redirect = await httpServer((_req, res) => {
      res.writeHead(302, { location: server.graphDataUrl }).end();
    });
    try {
      const r = await downloadGraphData(
        `${redirect.base}/api/upgrades_info/graph-data`,
        join(dir, 'r.tar.gz'),
      );
      expect(r.url).toBe(server.graphDataUrl);
      expect(r.digest).toBe(got.digest);
    } finally {
      await redirect.close();
    }
  });

  it('an unreachable endpoint is GRAPH_DATA_UNREACHABLE naming the URL, with the hint', async () => {
    const dead = await httpServer(() => undefined);
    await dead.close();
    const url = `${dead.base}/api/upgrades_info/graph-data`;
    const dest = join(dir, 'dead.tar.gz');
    const e = await rejection(downloadGraphData(url, dest, { retries: 1, baseDelayMs: 5 }));
    expect(e.code).toBe(MirrorError.GRAPH_DATA_UNREACHABLE);
    expect(e.message).toContain(url);
    expect(e.hint).toContain('UPDATE_URL_OVERRIDE');
    expect(e.hint).toContain('--graph-url');
    expect(e.hint).toContain('HTTPS_PROXY');
    await expect(stat(dest)).rejects.toThrow();

    const missing = await rejection(downloadGraphData(`${server.graphDataUrl}-nope`, dest, { retries: 0 }));
    expect(missing.code).toBe(MirrorError.GRAPH_DATA_UNREACHABLE);
    expect(missing.message).toContain('HTTP 404');
  });

  it('retries 5xx and then succeeds', async () => {
    let calls = 0;
    const good = syntheticGraphData(graphs());
    const flaky = await httpServer((_req, res) => {
      calls++;
      if (calls < 3) res.writeHead(503).end('busy');
      else res.writeHead(200, { 'content-type': 'application/gzip' }).end(good);
    });
    try {
      const r = await downloadGraphData(
        `${flaky.base}/api/upgrades_info/graph-data`,
        join(dir, 'flaky.tar.gz'),
        {
          retries: 3,
          baseDelayMs: 5,
        },
      );
      expect(calls).toBe(3);
      expect(r.digest).toBe(sha256(good));
    } finally {
      await flaky.close();
    }
  });

  it('a body that is not a tar.gz is GRAPH_DATA_INVALID, and the previous file stays', async () => {
    const dest = join(dir, 'keep.tar.gz');
    await downloadGraphData(server.graphDataUrl, dest);
    const before = await readFile(dest);

    server.graphData = Buffer.from('<html><body>Proxy login required</body></html>');
    const html = await rejection(downloadGraphData(server.graphDataUrl, dest));
    expect(html.code).toBe(MirrorError.GRAPH_DATA_INVALID);
    expect(html.message).toContain(server.graphDataUrl);
    expect(html.message).toContain('<html>');
    expect(html.hint).toContain('UPDATE_URL_OVERRIDE');

    server.graphData = before.subarray(0, Math.floor(before.length / 2)); // truncated gzip
    const cut = await rejection(downloadGraphData(server.graphDataUrl, dest));
    expect(cut.code).toBe(MirrorError.GRAPH_DATA_INVALID);

    server.graphData = Buffer.from(
      (
        await execa('sh', ['-c', 'printf "not a tar archive at all, only text" | gzip -c'], {
          encoding: 'buffer',
        })
      ).stdout,
    );
    const notTar = await rejection(downloadGraphData(server.graphDataUrl, dest));
    expect(notTar.code).toBe(MirrorError.GRAPH_DATA_INVALID);

    server.graphData = Buffer.alloc(0);
    expect((await rejection(downloadGraphData(server.graphDataUrl, dest))).code).toBe(
      MirrorError.GRAPH_DATA_INVALID,
    );

    expect((await readFile(dest)).equals(before)).toBe(true);
  });

  it('goes through HTTPS_PROXY and trusts the CA file; without the CA it is GRAPH_DATA_TLS', async () => {
    const { ca, server: cert } = testCertificates();
    const tls = await startGraphServer({ graphs: { ...graphs() }, tls: cert });
    const proxy = await startConnectProxy();
    const caFile = join(dir, 'ca.crt');
    await writeFile(caFile, ca.certPem);
    const vars = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy'];
    const saved = Object.fromEntries(vars.map((v) => [v, process.env[v]]));
    try {
      for (const v of vars) delete process.env[v];
      process.env.HTTPS_PROXY = proxy.url;
      const r = await downloadGraphData(tls.graphDataUrl, join(dir, 'tls.tar.gz'), {
        caFiles: [caFile],
        certDirs: [],
      });
      expect(r.digest).toBe(sha256(syntheticGraphData(graphs())));
      expect(proxy.tunnels).toContain(new URL(tls.graphDataUrl).host);
      const e = await rejection(
        downloadGraphData(tls.graphDataUrl, join(dir, 'tls2.tar.gz'), { certDirs: [], retries: 0 }),
      );
      expect(e.code).toBe('GRAPH_DATA_TLS');
      expect(e.hint).toContain('--ca-file');
    } finally {
      for (const v of vars) {
        if (saved[v] === undefined) delete process.env[v];
        else process.env[v] = saved[v];
      }
      await proxy.stop();
      await tls.stop();
    }
  });
});

withRealdata.describe('buildGraphImage', () => {
  let server: GraphServer;
  let dir: string;
  let layout: OciLayout;
  let layoutDir: string;
  let ociBase: BuiltImage;
  let dockerBase: BuiltImage;
  let indexBase: BuiltImage;
  let tarball: string;

  beforeAll(async () => {
    server = await startGraphServer({ graphs: { ...graphs() } });
    dir = await tempDir('airgap-graphimg-');
    layoutDir = join(dir, 'layout');
    layout = await OciLayout.open(layoutDir);
    [ociBase, dockerBase, indexBase] = await buildImages(layout, [
      { repo: 'ubi9/ubi', tag: 'oci', layers: [{ size: 20_000 }, { size: 10_000 }] },
      { repo: 'ubi9/ubi', tag: 'docker', format: 'docker', layers: [{ size: 20_000 }] },
      { repo: 'ubi9/ubi', tag: 'latest', layers: [{ size: 20_000 }], arches: ['arm64', 'amd64', 's390x'] },
    ]);
    tarball = join(dir, 'graph-data.tar.gz');
    await downloadGraphData(server.graphDataUrl, tarball);
  });
  afterAll(async () => {
    await server.stop();
  });

  it("adds one root-owned gzip layer under var/lib/cincinnati-graph-data and oc-mirror's Cmd (OCI base)", async () => {
    const img = await buildGraphImage(layout, ociBase.digest, tarball, {
      refName: 'openshift/graph-image:latest',
    });
    expect(img.mediaType).toBe(MediaType.OciManifest);
    expect(img.layer.mediaType).toBe(MediaType.OciLayerGzip);

    // skopeo reads the image from the layout: config, Cmd, layers.
    const ref = `oci:${layoutDir}:openshift/graph-image:latest`;
    const inspect = await skopeoInspect(ref);
    expect(inspect.Digest).toBe(img.digest);
    expect(inspect.Layers).toHaveLength(3);
    expect(inspect.Layers.at(-1)).toBe(img.layer.digest);
    const config = JSON.parse((await execa('skopeo', ['inspect', '--config', ref])).stdout) as {
      config: { Cmd: string[]; Labels: Record<string, string> };
      rootfs: { diff_ids: string[] };
      history: { created_by: string; empty_layer?: boolean }[];
    };
    expect(config.config.Cmd).toEqual([...GRAPH_IMAGE_CMD]);
    expect(config.config.Cmd).toEqual([
      '/bin/bash',
      '-c',
      'exec cp -rp /var/lib/cincinnati-graph-data/* /var/lib/cincinnati/graph-data',
    ]);
    expect(config.config.Labels['io.airgap.synthetic']).toBe('ubi9/ubi'); // the base config is kept
    expect(config.rootfs.diff_ids).toHaveLength(3);
    expect(config.history.filter((h) => !h.empty_layer)).toHaveLength(1);

    // The layer: the diff_id is the sha256 of the uncompressed tar; GNU tar lists it.
    const blob = layout.blobPath(img.layer.digest);
    const gz = await readFile(blob);
    expect(sha256(gz)).toBe(img.layer.digest);
    expect(gz.length).toBe(img.layer.size);
    expect(sha256(gunzipSync(gz))).toBe(config.rootfs.diff_ids.at(-1));
    const lines = await tarList(blob);
    const numeric = await tarList(blob, true);
    const paths = pathsOf(lines);
    expect(paths.slice(0, 3)).toEqual(['var/', 'var/lib/', 'var/lib/cincinnati-graph-data/']);
    expect(paths.every((p) => p.startsWith('var/'))).toBe(true);
    expect(
      paths
        .filter((p) => !['var/', 'var/lib/'].includes(p))
        .every((p) => p.startsWith('var/lib/cincinnati-graph-data/')),
    ).toBe(true);
    expect(paths).toEqual(
      expect.arrayContaining([
        'var/lib/cincinnati-graph-data/channels/',
        'var/lib/cincinnati-graph-data/channels/stable-4.13.yaml',
        'var/lib/cincinnati-graph-data/blocked-edges/',
        'var/lib/cincinnati-graph-data/raw/metadata.json',
        'var/lib/cincinnati-graph-data/version',
      ]),
    );
    for (const l of lines) {
      expect(l.split(/\s+/)[1]).toBe('root/root');
      expect(l.startsWith('d') ? l.startsWith('drwxr-xr-x ') : l.startsWith('-rw-r--r-- ')).toBe(true);
      expect(l).toContain('1970-01-01 00:00');
    }
    for (const l of numeric) expect(l.split(/\s+/)[1]).toBe('0/0');

    // The file contents went through untouched.
    const { stdout } = await execa('tar', [
      '-xzOf',
      blob,
      'var/lib/cincinnati-graph-data/channels/stable-4.13.yaml',
    ]);
    const original = await execa('tar', ['-xzOf', tarball, 'channels/stable-4.13.yaml']);
    expect(stdout).toBe(original.stdout);

    // skopeo copies it out of the layout, verifying every digest on the way.
    await skopeoCopy(ref, `dir:${join(dir, 'copied')}`);
    expect(
      (await readFile(join(dir, 'copied', 'manifest.json'))).equals(
        await readFile(layout.blobPath(img.digest)),
      ),
    ).toBe(true);
  });

  it('is deterministic: the same tarball and base give the same digest', async () => {
    const a = await buildGraphImage(layout, ociBase.digest, tarball);
    const copy = join(dir, 'copy-of-graph-data.tgz');
    await writeFile(copy, await readFile(tarball));
    const b = await buildGraphImage(layout, ociBase.digest, copy);
    expect(b.digest).toBe(a.digest);
    expect(b.layer).toEqual(a.layer);
    const later = await buildGraphImage(layout, ociBase.digest, tarball, {
      mtime: new Date('2026-01-01T00:00:00Z'),
    });
    expect(later.diffId).not.toBe(a.diffId);
  });

  it('follows a Docker schema 2 base with Docker media types', async () => {
    const img = await buildGraphImage(layout, dockerBase.digest, tarball, {
      refName: 'openshift/graph-image:docker',
    });
    expect(img.mediaType).toBe(MediaType.DockerManifest);
    expect(img.layer.mediaType).toBe(MediaType.DockerLayerGzip);
    expect(img.config.mediaType).toBe(MediaType.DockerConfig);
    // skopeo's oci: transport only resolves OCI-typed index entries, so hand the image to skopeo as a
    // dir: image (manifest.json plus blobs by hex), which takes Docker schema 2 as is.
    const manifest = await readFile(layout.blobPath(img.digest));
    const doc = JSON.parse(manifest.toString()) as {
      mediaType: string;
      config: { digest: string };
      layers: { mediaType: string; digest: string }[];
    };
    const dirImage = join(dir, 'docker-dir');
    await mkdir(dirImage, { recursive: true });
    await writeFile(join(dirImage, 'version'), 'Directory Transport Version: 1.1\n');
    await writeFile(join(dirImage, 'manifest.json'), manifest);
    for (const d of [doc.config, ...doc.layers]) {
      await writeFile(
        join(dirImage, d.digest.slice('sha256:'.length)),
        await readFile(layout.blobPath(d.digest)),
      );
    }
    expect(doc.mediaType).toBe(MediaType.DockerManifest);
    expect(doc.layers.map((l) => l.mediaType)).toEqual([
      MediaType.DockerLayerGzip,
      MediaType.DockerLayerGzip,
    ]);
    const config = JSON.parse((await execa('skopeo', ['inspect', '--config', `dir:${dirImage}`])).stdout) as {
      config: { Cmd: string[] };
      rootfs: { diff_ids: string[] };
    };
    expect(config.config.Cmd).toEqual([...GRAPH_IMAGE_CMD]);
    expect(config.rootfs.diff_ids.at(-1)).toBe(img.diffId);
    await skopeoCopy(`dir:${dirImage}`, `dir:${join(dir, 'docker-copied')}`);
    const lines = await tarList(join(dirImage, img.layer.digest.slice('sha256:'.length)), true);
    expect(lines.every((l) => l.split(/\s+/)[1] === '0/0')).toBe(true);
  });

  it('takes the linux/amd64 image of a multi-arch base', async () => {
    const img = await buildGraphImage(layout, indexBase.digest, tarball, {
      refName: 'openshift/graph-image:multi',
    });
    const inspect = await skopeoInspect(`oci:${layoutDir}:openshift/graph-image:multi`);
    expect(inspect.Architecture).toBe('amd64');
    const amd64 = JSON.parse((await readFile(layout.blobPath(indexBase.children!.amd64!))).toString()) as {
      layers: { digest: string }[];
    };
    expect(inspect.Layers).toEqual([...amd64.layers.map((l) => l.digest), img.layer.digest]);
    const e = await rejection(
      buildGraphImage(layout, indexBase.digest, tarball, {
        platform: { os: 'linux', architecture: 'ppc64le' },
      }),
    );
    expect(e.code).toBe(MirrorError.GRAPH_IMAGE_BASE);
    expect(e.message).toContain('linux/arm64, linux/amd64, linux/s390x');
  });

  it('strips a single top-level directory (a GitHub archive) and a ./ prefix, keeping everything else', async () => {
    const tree = join(dir, 'tree', 'cincinnati-graph-data-0123abc');
    await mkdir(join(tree, 'channels'), { recursive: true });
    await mkdir(join(tree, 'blocked-edges'), { recursive: true });
    await writeFile(join(tree, 'channels', 'stable-4.18.yaml'), 'name: stable-4.18\nversions:\n- 4.18.1\n', {
      mode: 0o600,
    });
    await writeFile(join(tree, 'blocked-edges', '4.18.1-Risk.yaml'), 'to: 4.18.1\nfrom: .*\n');
    await writeFile(join(tree, 'version'), '1.1.0\n', { mode: 0o755 });
    const long = `4.18.1-${'VeryLongRiskName'.repeat(8)}.yaml`; // > 100 bytes: GNU long name in, pax out
    await writeFile(join(tree, 'blocked-edges', long), 'to: 4.18.1\nfrom: .*\n');
    const github = join(dir, 'github.tar.gz');
    const dotted = join(dir, 'dotted.tar.gz');
    const onlyChannels = join(dir, 'only-channels.tar.gz');
    await execa('tar', ['-czf', github, '-C', join(dir, 'tree'), 'cincinnati-graph-data-0123abc']);
    await execa('tar', ['-czf', dotted, '-C', tree, '.']);
    await execa('tar', ['-czf', onlyChannels, '-C', tree, 'channels']);
    const expected = [
      'var/',
      'var/lib/',
      'var/lib/cincinnati-graph-data/',
      'var/lib/cincinnati-graph-data/blocked-edges/',
      'var/lib/cincinnati-graph-data/blocked-edges/4.18.1-Risk.yaml',
      `var/lib/cincinnati-graph-data/blocked-edges/${long}`,
      'var/lib/cincinnati-graph-data/channels/',
      'var/lib/cincinnati-graph-data/channels/stable-4.18.yaml',
      'var/lib/cincinnati-graph-data/version',
    ];
    const layerPaths = async (file: string) => {
      const img = await buildGraphImage(layout, ociBase.digest, file);
      return { img, lines: await tarList(layout.blobPath(img.layer.digest)) };
    };
    const gh = await layerPaths(github);
    expect(pathsOf(gh.lines).sort()).toEqual(expected);
    const dot = await layerPaths(dotted);
    expect(pathsOf(dot.lines).sort()).toEqual(expected);
    for (const l of [...gh.lines, ...dot.lines]) {
      expect(
        l.startsWith('d') ? l.startsWith('drwxr-xr-x root/root') : l.startsWith('-rw-r--r-- root/root'),
      ).toBe(true);
    }
    // A tarball whose only top-level directory is graph data itself is not stripped.
    const ch = await layerPaths(onlyChannels);
    expect(pathsOf(ch.lines)).toContain('var/lib/cincinnati-graph-data/channels/stable-4.18.yaml');
  });

  it('refuses a missing base and a file that is not a tar.gz', async () => {
    const missing = await rejection(buildGraphImage(layout, `sha256:${'0'.repeat(64)}`, tarball));
    expect(missing.code).toBe(MirrorError.GRAPH_IMAGE_BASE);
    expect(missing.hint).toContain('registry.access.redhat.com/ubi9/ubi:latest');
    const html = join(dir, 'page.html');
    await writeFile(html, '<html>oops</html>');
    const e = await rejection(buildGraphImage(layout, ociBase.digest, html));
    expect(e.code).toBe(MirrorError.GRAPH_DATA_INVALID);
    expect(e.message).toContain(html);
    const escaping = join(dir, 'escape.tar.gz');
    await execa('sh', [
      '-c',
      `cd ${dir} && mkdir -p esc/a && echo x > esc/x && tar -czPf ${escaping} -C esc/a ../x`,
    ]);
    const esc = await rejection(buildGraphImage(layout, ociBase.digest, escaping));
    expect(esc.code).toBe(MirrorError.GRAPH_DATA_INVALID);
    expect(esc.message).toContain('leaves the archive root');
  });
});
