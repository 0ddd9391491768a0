/**
 * The graph data read back from a graph image in a registry: built as `airgap mirror` builds it
 * (graph-image.ts, on a ubi-like base) from the graph-data tarball of the real stable-4.13 graph,
 * pushed, then read with readMirroredGraph; a missing image is undefined, and images that are not
 * usable graph data are GRAPH_IMAGE_INVALID errors naming the image.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntheticGraphData } from '../../../lab/graph-server.js';
import { buildImages, putImageManifest } from '../../../lab/images.js';
import { CopyEngine } from '../../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { CommonError } from '../../../src/util/errors.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import { MediaType } from '../../../src/mirror/media-types.js';
import { parseGraph } from '../../../src/mirror/openshift/graph.js';
import { decideEdge } from '../../../src/mirror/openshift/graph-edges.js';
import { buildGraphImage } from '../../../src/mirror/openshift/graph-image.js';
import { graphImageRepo, readMirroredGraph } from '../../../src/mirror/openshift/graph-mirrored.js';
import type { RegistryClient } from '../../../src/mirror/registry/client.js';
import { billionLaughs, clientFor, tarGz, tempDir } from '../../helpers/fixtures.js';
import { lazy, realdata, rejection, withRealdata } from '../../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';

/** The real stable-4.13 graph (read on first use: it needs the realdata). */
const sample = lazy(() =>
  parseGraph(
    JSON.parse(
      readFileSync(realdata('samples', 'update-graph', 'cincinnati-amd64-stable-4.13.json'), 'utf8'),
    ),
  ),
);

describe('graph data read from a graph image in a registry', () => {
  let reg: TestRegistry;
  let client: RegistryClient;

  beforeAll(async () => {
    reg = await startRegistry();
    client = clientFor(reg);
    const dir = await tempDir('airgap-graph-mirrored-');
    const layout = await OciLayout.open(join(dir, 'layout'));
    const [ubi] = await buildImages(layout, [
      { repo: 'ubi9/ubi', tag: 'latest', format: 'docker', layers: [{ id: 'ubi9', size: 32768 }] },
    ]);
    const graph = async (prefix: string, tarball: Buffer) => {
      const file = join(dir, `${prefix}.tar.gz`);
      await writeFile(file, tarball);
      await buildGraphImage(layout, ubi!.digest, file, { refName: `${graphImageRepo(prefix)}:latest` });
    };
    // The graph image of the real graph where it is here; the other images are made up.
    if (withRealdata.present()) await graph('', syntheticGraphData({ 'stable-4.13/amd64': sample() }));
    await graph('broken-yaml', tarGz({ version: '1.1.0\n', 'channels/stable-4.13.yaml': 'name: [stable\n' }));
    await graph(
      'schema-2',
      tarGz({ version: '2.0.0\n', 'channels/stable-4.13.yaml': 'name: stable-4.13\n' }),
    );
    await graph(
      'renamed',
      tarGz({ version: '1.1.0\n', 'channels/stable-4.13.yaml': 'name: fast-4.13\nversions: []\n' }),
    );
    // A blocked edge whose risk is a "billion laughs", and 20 blocked edges of 2 MiB each: more
    // than the 32 MiB the kept files of one graph image may hold.
    const laughs = billionLaughs();
    await graph(
      'edge-bomb',
      tarGz({
        version: '1.1.0\n',
        'channels/stable-4.13.yaml': 'name: stable-4.13\nversions: [4.13.1]\n',
        'blocked-edges/4.13.1-bomb.yaml': `${laughs.join('\n')}\nto: 4.13.1\nfrom: .*\nmatchingRules: [{type: Always, x: *l9}]\n`,
      }),
    );
    const big = (i: number) => `to: 4.13.${i}\nfrom: .*\nurl: ${'x'.repeat(2 * 1024 * 1024)}\n`;
    await graph(
      'many-edges',
      tarGz({
        version: '1.1.0\n',
        'channels/stable-4.13.yaml': 'name: stable-4.13\nversions: [4.13.1]\n',
        ...Object.fromEntries(
          Array.from({ length: 20 }, (_, i) => [`blocked-edges/4.13.${i}-big.yaml`, big(i)]),
        ),
      }),
    );
    // The base alone under the graph image's name, and an image whose layer is not a tar.
    const base = await layout.getManifest(ubi!.digest);
    await layout.setEntry(`${graphImageRepo('plain')}:latest`, base);
    const junk = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.alloc(200, 0x41)]);
    const config = Buffer.from(
      JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers' } }),
    );
    const m = await putImageManifest(
      layout,
      config,
      [{ mediaType: MediaType.DockerLayerGzip, digest: await layout.putBytes(junk), size: junk.length }],
      true,
    );
    await layout.setEntry(`${graphImageRepo('junk')}:latest`, m);

    const src = new LayoutEndpoint(layout);
    const dest = new RegistryEndpoint(client);
    const summary = await new CopyEngine({ parallel: 4 }).run(
      (await layout.entries()).map((e) => {
        const cut = e.refName.lastIndexOf(':');
        const [repo, ref] = [e.refName.slice(0, cut), e.refName.slice(cut + 1)];
        return {
          source: { endpoint: src, repo, ref },
          dest: { endpoint: dest, repo, ref },
          digest: e.descriptor.digest,
        };
      }),
    );
    expect(summary.failed).toBe(0);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await reg?.stop();
  });

  withRealdata.it(
    'reads the channel, every blocked edge and the schema, from the layer on the base',
    async () => {
      const g = (await readMirroredGraph(client, 'openshift/graph-image', 'latest', {
        channel: 'stable-4.13',
      }))!;
      expect(g.image).toBe(`${reg.host}/openshift/graph-image:latest`);
      expect(g.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(g.schema).toBe('1.1.0');
      expect(g.channels).toEqual(['stable-4.13']);
      expect(g.channel?.name).toBe('stable-4.13');
      expect(new Set(g.channel?.versions)).toEqual(new Set(sample().nodes.map((n) => n.version)));
      expect(g.blockedEdges.length).toBeGreaterThan(37);
      expect(g.blockedEdges.every((b) => b.file.startsWith('blocked-edges/') && b.risk)).toBe(true);

      // A published conditional update comes out conditional, with its risks, from the image.
      const ce = sample().conditionalEdges[0]!;
      const e = ce.edges[0]!;
      const d = decideEdge(g.channel!, g.blockedEdges, {
        from: e.from,
        target: { version: e.to, previous: [e.from] },
        arch: 'amd64',
      });
      expect(d.kind).toBe('conditional');
      for (const r of ce.risks) expect(d.risks.map((x) => x.name)).toContain(r.name);
    },
  );

  withRealdata.it('names the channels it has when it lacks the one asked for', async () => {
    const g = (await readMirroredGraph(client, 'openshift/graph-image', 'latest', { channel: 'fast-4.18' }))!;
    expect(g.channel).toBeUndefined();
    expect(g.channels).toEqual(['stable-4.13']);
  });

  it('is undefined where the mirror has no graph image', async () => {
    expect(
      await readMirroredGraph(client, 'ocp/openshift/graph-image', 'latest', { channel: 'x' }),
    ).toBeUndefined();
  });

  it('refuses what is not usable graph data, naming the image', async () => {
    const read = (prefix: string) =>
      rejection(readMirroredGraph(client, graphImageRepo(prefix), 'latest', { channel: 'stable-4.13' }));
    const cases: [string, string][] = [
      ['broken-yaml', 'has invalid graph data: channels/stable-4.13.yaml: not YAML'],
      ['schema-2', 'has invalid graph data: version: schema 2.0.0 is not one this airgap reads (1.x)'],
      ['renamed', 'channels/stable-4.13.yaml: it names channel fast-4.13, not stable-4.13'],
      [
        'plain',
        'is not readable: no layer holds /var/lib/cincinnati-graph-data/ (it is not a graph-data image)',
      ],
      ['junk', 'could not be read as a gzip tar'],
    ];
    for (const [prefix, why] of cases) {
      const e = await read(prefix);
      const image = `${reg.host}/${prefix}/openshift/graph-image:latest`;
      expect(e.code, prefix).toBe(MirrorError.GRAPH_IMAGE_INVALID);
      expect(e.message, prefix).toContain(`the graph image ${image} `);
      expect(e.message, prefix).toContain(why);
      expect(e.hint, prefix).toContain('--graph-url');
    }
  });

  it('refuses a YAML bomb, and more graph data than one image may hold, naming the image and the file', async () => {
    const read = (prefix: string) =>
      rejection(readMirroredGraph(client, graphImageRepo(prefix), 'latest', { channel: 'stable-4.13' }));
    const bomb = await read('edge-bomb');
    expect(bomb.code).toBe(CommonError.YAML_LIMIT);
    expect(bomb.message).toMatch(
      new RegExp(
        `^blocked-edges/4\\.13\\.1-bomb\\.yaml in the graph image ${reg.host}/edge-bomb/openshift/graph-image:latest: its aliases expand it to more than [\\d,]+ nodes \\(a "billion laughs" document\\)$`,
      ),
    );
    expect(bomb.hint).toContain('--graph-url');
    expect(bomb.exitCode).toBe(1);

    const many = await read('many-edges');
    expect(many.code).toBe(CommonError.YAML_LIMIT);
    expect(many.message).toMatch(
      new RegExp(
        `^the graph image ${reg.host}/many-edges/openshift/graph-image:latest: its YAML files come to more than 33,554,432 bytes \\(at blocked-edges/4\\.13\\.\\d+-big\\.yaml\\)$`,
      ),
    );
    expect(many.details).toMatchObject({ limit: 'budgetBytes' });
  });
});
