/**
 * `airgap mirror list releases` and `airgap mirror list operators` through the real CLI, as a user
 * runs them: releases against a loopback update service serving the real stable-4.13 graph (and the
 * channels its releases name, cut from it as the service would), operators against a real registry
 * (TLS, htpasswd) holding a multi-arch catalog image built from real file-based catalogs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCatalogImage } from '../../lab/catalog-image.js';
import { startGraphServer, type GraphServer } from '../../lab/graph-server.js';
import { CopyEngine } from '../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../src/mirror/copy/endpoints.js';
import { MirrorError } from '../../src/mirror/errors.js';
import { OciLayout } from '../../src/mirror/layout/store.js';
import { CHANNELS_METADATA } from '../../src/mirror/openshift/graph-channels.js';
import { parseGraph, type UpdateGraph } from '../../src/mirror/openshift/graph.js';
import { CommonError } from '../../src/util/errors.js';
import { airgap, type CliResult } from '../helpers/cli.js';
import { startFaultProxy } from '../helpers/fault-proxy.js';
import { clientFor, seedRegistry, tempDir } from '../helpers/fixtures.js';
import { realdata, withRealdata } from '../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { testCertificates } from '../helpers/tls.js';

const samples = realdata('samples', 'update-graph');

/** The graph of one channel as the update service cuts it: the releases that name the channel. */
function channelGraph(all: UpdateGraph, channel: string): UpdateGraph {
  const keep = all.nodes.flatMap((n, i) =>
    (n.metadata[CHANNELS_METADATA] ?? '').split(',').includes(channel) ? [i] : [],
  );
  const at = new Map(keep.map((old, i) => [old, i]));
  return {
    version: 1,
    nodes: keep.map((i) => all.nodes[i]!),
    edges: all.edges.flatMap(([a, b]) => (at.has(a) && at.has(b) ? [[at.get(a)!, at.get(b)!]] : [])) as [
      number,
      number,
    ][],
    conditionalEdges: [],
  };
}

/** `error [CODE]: …` and its hint, as the CLI prints them. */
function errorOf(r: CliResult): { code: string; text: string } {
  const m = /^error \[([A-Z_]+)\]: /m.exec(r.stderr);
  return { code: m?.[1] ?? '', text: r.stderr };
}

withRealdata.describe('airgap mirror list releases', () => {
  let graph: GraphServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    const stable = parseGraph(
      JSON.parse(await readFile(join(samples, 'cincinnati-amd64-stable-4.13.json'), 'utf8')),
    );
    const multi = parseGraph(
      JSON.parse(await readFile(join(samples, 'cincinnati-candidate-4.12-multi.json'), 'utf8')),
    );
    const graphs: Record<string, UpdateGraph> = { 'candidate-4.12/multi': multi };
    const names = new Set(stable.nodes.flatMap((n) => (n.metadata[CHANNELS_METADATA] ?? '').split(',')));
    for (const name of names) graphs[`${name}/amd64`] = channelGraph(stable, name);
    graph = await startGraphServer({ graphs });
    env = { UPDATE_URL_OVERRIDE: graph.url };
  });
  afterAll(async () => {
    await graph?.stop();
  });

  it('--version x.y lists the channels of that minor, each with its releases and latest', async () => {
    const r = await airgap(['mirror', 'list', 'releases', '--version', '4.13'], { env });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toBe(`Channels of OpenShift 4.13 (amd64) in ${graph.url}:`);
    expect(lines.slice(2, 6)).toEqual([
      'CHANNEL         RELEASES  LATEST',
      'candidate-4.13  41        4.13.43',
      'fast-4.13       41        4.13.43',
      'stable-4.13     41        4.13.43',
    ]);
    expect(r.stdout).toContain('airgap mirror list releases --channel <channel>');
    // stable-4.13 was asked first, for the channel names; each channel once for its releases.
    const asked = graph.requests.map((q) => q.query.channel);
    expect(asked.filter((c) => c === 'stable-4.13')).toHaveLength(1);

    const j = await airgap(['mirror', 'list', 'releases', '--version', '4.12', '--json'], { env });
    expect(j.exitCode).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual({
      kind: 'channels',
      version: '4.12',
      arch: 'amd64',
      graph: graph.url,
      channels: ['candidate-4.12', 'eus-4.12', 'fast-4.12', 'stable-4.12'].map((name) => ({
        name,
        releases: 57,
        latest: '4.12.58',
      })),
    });
  });

  it('--version x.y.z lists the channels that carry that release, later minors too', async () => {
    const r = await airgap(['mirror', 'list', 'releases', '--version', '4.12.20', '--json'], { env });
    expect(r.exitCode).toBe(0);
    const l = JSON.parse(r.stdout) as { channels: { name: string }[] };
    expect(l.channels.map((c) => c.name)).toEqual([
      'candidate-4.12',
      'eus-4.12',
      'fast-4.12',
      'stable-4.12',
      'candidate-4.13',
      'fast-4.13',
      'stable-4.13',
      'eus-4.14',
    ]);
    const t = await airgap(['mirror', 'list', 'releases', '--version', '4.12.20'], { env });
    expect(t.stdout.split('\n')[0]).toBe(`Channels of release 4.12.20 (amd64) in ${graph.url}:`);
  });

  it('--channel lists its releases oldest first, the latest marked, with errata (text and --json)', async () => {
    const r = await airgap(['mirror', 'list', 'releases', '--channel', 'stable-4.13'], { env });
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('stable-4.13 (amd64): 98 releases, latest 4.13.43');
    expect(lines[2]).toBe(`VERSION${' '.repeat(11)}ERRATA`);
    expect(lines[3]).toMatch(/^4\.12\.0 {12}https:\/\/access\.redhat\.com\/errata\//);
    expect(lines.at(-1)).toBe('4.13.43 (latest)  https://access.redhat.com/errata/RHSA-2024:3494');
    const versions = lines.slice(3).map((l) => l.split(' ')[0]);
    expect(versions.slice(0, 4)).toEqual(['4.12.0', '4.12.1', '4.12.2', '4.12.3']); // by version, not by text
    expect(versions).toHaveLength(98);

    const j = await airgap(['mirror', 'list', 'releases', '--channel', 'stable-4.13', '--json'], { env });
    const l = JSON.parse(j.stdout) as {
      kind: string;
      latest: string;
      releases: { version: string; payload: string; latest: boolean }[];
    };
    expect(l.kind).toBe('releases');
    expect(l.latest).toBe('4.13.43');
    expect(l.releases.filter((x) => x.latest).map((x) => x.version)).toEqual(['4.13.43']);
    expect(l.releases.at(-1)!.payload).toBe(
      'quay.io/openshift-release-dev/ocp-release@sha256:d0da3d9b016e6d693a61c9425598921b6d0da99c52cb0f3404f6dbc126149e5d',
    );
  });

  it('--arch asks for that architecture: multi-arch candidate-4.12, and the fallback to candidate for --version', async () => {
    const r = await airgap(['mirror', 'list', 'releases', '--channel', 'candidate-4.12', '--arch', 'multi'], {
      env,
    });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain('candidate-4.12 (multi): 5 releases, latest 4.12.0-rc.4');
    expect(r.stdout).toContain('4.12.0-rc.4 (latest)');
    expect(graph.requests.at(-1)!.query).toMatchObject({ arch: 'multi', channel: 'candidate-4.12' });

    // No stable-4.12 for multi: the channels come from candidate-4.12.
    const v = await airgap(['mirror', 'list', 'releases', '--version', '4.12', '--arch', 'multi', '--json'], {
      env,
    });
    expect(v.exitCode).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({
      arch: 'multi',
      channels: [{ name: 'candidate-4.12', releases: 5, latest: '4.12.0-rc.4' }],
    });

    const bad = await airgap(['mirror', 'list', 'releases', '--channel', 'stable-4.13', '--arch', 'sparc'], {
      env,
    });
    expect(bad.exitCode).toBe(2);
    expect(errorOf(bad).code).toBe(MirrorError.GRAPH_ARCH_UNKNOWN);
  });

  it('--arches lists the architectures without asking anything (text and --json)', async () => {
    const before = graph.requests.length;
    const r = await airgap(['mirror', 'list', 'releases', '--arches']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').slice(0, 3)).toEqual([
      'ARCH     ALSO     WHAT',
      'amd64    x86_64   64-bit x86',
      'arm64    aarch64  64-bit ARM',
    ]);
    const j = await airgap(['mirror', 'list', 'releases', '--arches', '--json']);
    const l = JSON.parse(j.stdout) as { kind: string; architectures: { name: string }[] };
    expect(l.kind).toBe('architectures');
    expect(l.architectures.map((a) => a.name)).toEqual(['amd64', 'arm64', 'ppc64le', 's390x', 'multi']);
    expect(graph.requests.length).toBe(before);
  });

  it('an unknown channel is a usage error naming the channels the graph has', async () => {
    const r = await airgap(['mirror', 'list', 'releases', '--channel', 'stabel-4.13'], { env });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(errorOf(r).code).toBe(MirrorError.GRAPH_CHANNEL_UNKNOWN);
    expect(r.stderr).toContain(
      '--channel stabel-4.13: the update graph has no release on this channel for amd64',
    );
    expect(r.stderr).toContain(
      'hint: did you mean stable-4.13? The graph has candidate-4.13, fast-4.13, stable-4.13',
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace

    const odd = await airgap(['mirror', 'list', 'releases', '--channel', 'latest'], { env });
    expect(odd.exitCode).toBe(2);
    expect(odd.stderr).toContain('hint: channels are named <kind>-<x.y>');

    const j = await airgap(['mirror', 'list', 'releases', '--channel', 'eus-4.13', '--json'], { env });
    expect(j.exitCode).toBe(2);
    expect(JSON.parse(j.stdout)).toMatchObject({
      error: { code: MirrorError.GRAPH_CHANNEL_UNKNOWN, hint: expect.stringContaining('stable-4.13') },
    });
  });

  it('a version the graph does not have is a usage error; a bad version or no question is one too', async () => {
    const r = await airgap(['mirror', 'list', 'releases', '--version', '4.99'], { env });
    expect(r.exitCode).toBe(2);
    expect(errorOf(r).code).toBe(MirrorError.RELEASE_VERSION_UNKNOWN);
    expect(r.stderr).toContain(
      'the update graph has no OpenShift 4.99 release for amd64 (asked stable-4.99 and candidate-4.99)',
    );

    const z = await airgap(['mirror', 'list', 'releases', '--version', '4.13.99'], { env });
    expect(z.exitCode).toBe(2);
    expect(z.stderr).toContain('the update graph has no release 4.13.99 in stable-4.13 or candidate-4.13');
    expect(z.stderr).toContain('hint: the newest 4.13 release it has is 4.13.43');

    const v = await airgap(['mirror', 'list', 'releases', '--version', 'v4.13'], { env });
    expect(v.exitCode).toBe(2);
    expect(errorOf(v).code).toBe(CommonError.FLAG_INVALID);
    expect(v.stderr).toContain('hint: drop the "v": 4.13');

    const none = await airgap(['mirror', 'list', 'releases'], { env });
    expect(none.exitCode).toBe(2);
    expect(errorOf(none).code).toBe(CommonError.FLAG_MISSING);
    expect(none.stderr).toContain(
      '--version 4.18 (its channels), --channel stable-4.18 (its releases) or --arches',
    );

    const both = await airgap(
      ['mirror', 'list', 'releases', '--version', '4.13', '--channel', 'stable-4.13'],
      {
        env,
      },
    );
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toContain('cannot also be provided');
  });

  it('an update service out of reach, or not one, is a failure naming --graph-url and UPDATE_URL_OVERRIDE', async () => {
    // The CLI helper points UPDATE_URL_OVERRIDE at a port nothing listens on.
    const r = await airgap(['mirror', 'list', 'releases', '--version', '4.13']);
    expect(r.exitCode).toBe(1);
    expect(errorOf(r).code).toBe('GRAPH_UNREACHABLE');
    expect(r.stderr).toMatch(/hint: .*--graph-url \/ UPDATE_URL_OVERRIDE/);
    expect(r.stderr).not.toMatch(/\n\s+at /);

    // --graph-url wins over UPDATE_URL_OVERRIDE.
    const ok = await airgap([
      'mirror',
      'list',
      'releases',
      '--channel',
      'stable-4.13',
      '--graph-url',
      graph.url,
    ]);
    expect(ok.exitCode).toBe(0);

    const notGraph = graph.url.replace('/v1/graph', '/v1/nothing');
    const s = await airgap([
      'mirror',
      'list',
      'releases',
      '--channel',
      'stable-4.13',
      '--graph-url',
      notGraph,
    ]);
    expect(s.exitCode).toBe(1);
    expect(errorOf(s).code).toBe('GRAPH_STATUS');
    expect(s.stderr).toContain('answered HTTP 404');
    expect(s.stderr).toContain('hint: check --graph-url (or UPDATE_URL_OVERRIDE)');
  });
});

withRealdata.describe('airgap mirror list operators', () => {
  let reg: TestRegistry;
  let catalog: string;
  let digest: string;
  let tls: string[];

  beforeAll(async () => {
    reg = await startRegistry();
    const fbc = realdata('samples', 'fbc');
    const layout = await OciLayout.open(join(await tempDir('airgap-list-'), 'layout'));
    const built = await buildCatalogImage(layout, {
      repo: 'redhat/redhat-operator-index',
      tag: 'v4.18',
      format: 'oci',
      arches: ['amd64', 'arm64'],
      fbcDir: [
        join(fbc, 'operator-registry-foo'),
        join(fbc, 'redhat-operator-index'),
        join(fbc, 'redhat-operator-index-v4.14'),
      ],
      files: {
        'foo/deprecations.yaml': [
          'schema: olm.deprecations',
          'package: foo',
          'entries:',
          '  - reference: {schema: olm.channel, name: beta}',
          '    message: beta is no longer updated, use stable',
          '  - reference: {schema: olm.bundle, name: foo.v0.1.0}',
          '    message: foo.v0.1.0 has a known issue',
          '',
        ].join('\n'),
      },
    });
    const client = clientFor(reg);
    const summary = await new CopyEngine({ parallel: 4 }).run([
      {
        source: { endpoint: new LayoutEndpoint(layout), repo: built.repo, ref: built.tag },
        dest: { endpoint: new RegistryEndpoint(client), repo: built.repo, ref: built.tag },
        digest: built.digest as never,
      },
    ]);
    await client.close();
    expect(summary.images.every((i) => i.status !== 'failed')).toBe(true);
    await seedRegistry(reg, [{ repo: 'ubi9/ubi', tag: 'latest', layers: [{ size: 4096 }] }]);
    catalog = `${reg.host}/redhat/redhat-operator-index:v4.18`;
    digest = built.digest;
    tls = ['--authfile', reg.authFile, '--ca-file', reg.caFile];
  });
  afterAll(async () => {
    await reg?.stop();
  });

  it('--version lists the Red Hat catalogs of that version, asking nothing', async () => {
    const r = await airgap(['mirror', 'list', 'operators', '--version', '4.18']);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').slice(0, 7)).toEqual([
      'Operator catalogs of OpenShift 4.18:',
      '',
      'CATALOG                                                   CATALOGSOURCE        WHAT',
      'registry.redhat.io/redhat/redhat-operator-index:v4.18     redhat-operators     Red Hat products, supported by Red Hat',
      'registry.redhat.io/redhat/certified-operator-index:v4.18  certified-operators  certified partner operators, supported by the partner',
      'registry.redhat.io/redhat/community-operator-index:v4.18  community-operators  community operators, not supported by Red Hat',
      'registry.redhat.io/redhat/redhat-marketplace-index:v4.18  redhat-marketplace   operators bought through Red Hat Marketplace',
    ]);
    const j = await airgap(['mirror', 'list', 'operators', '--version', '4.16', '--json']);
    const l = JSON.parse(j.stdout) as { kind: string; catalogs: { image: string }[] };
    expect(l.kind).toBe('catalogs');
    expect(l.catalogs.map((c) => c.image)).toEqual([
      'registry.redhat.io/redhat/redhat-operator-index:v4.16',
      'registry.redhat.io/redhat/certified-operator-index:v4.16',
      'registry.redhat.io/redhat/community-operator-index:v4.16',
      'registry.redhat.io/redhat/redhat-marketplace-index:v4.16',
    ]);
    const old = await airgap(['mirror', 'list', 'operators', '--version', '4.10']);
    expect(old.exitCode).toBe(0);
    expect(old.stderr).toContain('note: the catalogs of OpenShift 4.10 are SQLite catalogs');
  });

  it('--catalog lists its packages with display name, default channel and latest version', async () => {
    const r = await airgap(['mirror', 'list', 'operators', '--catalog', catalog, ...tls]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout.split('\n').slice(0, 6)).toEqual([
      `${catalog} (${digest}): 3 packages`,
      '',
      'NAME                         DISPLAY NAME                                    DEFAULT CHANNEL  LATEST',
      expect.stringMatching(/^foo {26}\S.* {2}beta {13}0\.2\.0$/),
      'jaeger-product               Red Hat OpenShift distributed tracing platform  stable           1.51.0-1',
      expect.stringMatching(/^node-observability-operator .* alpha {12}0\.2\.0$/),
    ]);

    const j = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      `docker://${catalog}`,
      '--json',
      ...tls,
    ]);
    expect(j.exitCode).toBe(0);
    const l = JSON.parse(j.stdout) as { kind: string; catalog: string; digest: string; packages: object[] };
    expect(l).toMatchObject({ kind: 'packages', catalog, digest });
    expect(l.packages).toContainEqual({
      name: 'jaeger-product',
      displayName: 'Red Hat OpenShift distributed tracing platform',
      defaultChannel: 'stable',
      latest: '1.51.0-1',
    });
  });

  it('--package lists its channels with their heads, the default and deprecations marked', async () => {
    const r = await airgap(['mirror', 'list', 'operators', '--catalog', catalog, '--package', 'foo', ...tls]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(
      new RegExp(`^foo( \\(.*\\))? in ${catalog.replace(/[.[\]]/g, '\\$&')}: default channel beta$`),
    );
    expect(lines.slice(2, 5)).toEqual([
      'CHANNEL                     HEAD        VERSION  BUNDLES',
      'beta (default, deprecated)  foo.v0.2.0  0.2.0    2',
      'stable                      foo.v0.2.0  0.2.0    1',
    ]);

    const j = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--package',
      'jaeger-product',
      '--json',
      ...tls,
    ]);
    expect(JSON.parse(j.stdout)).toMatchObject({
      kind: 'channels',
      package: 'jaeger-product',
      displayName: 'Red Hat OpenShift distributed tracing platform',
      defaultChannel: 'stable',
      channels: [
        { name: 'stable', default: true, head: 'jaeger-operator.v1.51.0-1', version: '1.51.0-1', bundles: 6 },
      ],
    });
  });

  it('--channel lists the bundles of one channel, oldest first, the head marked', async () => {
    const r = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--package',
      'jaeger-product',
      '--channel',
      'stable',
      ...tls,
    ]);
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(
      `jaeger-product channel stable (default) in ${catalog}: 6 bundles, head jaeger-operator.v1.51.0-1`,
    );
    expect(lines.slice(3).map((l) => l.split(/\s{2,}/)[0])).toEqual([
      '1.30.2',
      '1.34.1-5',
      '1.42.0-5',
      '1.42.0-5+0.1687199951.p',
      '1.47.1-5',
      '1.51.0-1 (head)',
    ]);
    expect(lines.at(-1)).toMatch(
      /^1\.51\.0-1 \(head\) +jaeger-operator\.v1\.51\.0-1 +jaeger-operator\.v1\.47\.1-5$/,
    );

    const j = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--package',
      'foo',
      '--channel',
      'beta',
      '--json',
      ...tls,
    ]);
    expect(JSON.parse(j.stdout)).toMatchObject({
      kind: 'bundles',
      package: 'foo',
      channel: 'beta',
      default: true,
      head: 'foo.v0.2.0',
      bundles: [
        { name: 'foo.v0.1.0', version: '0.1.0', head: false, deprecated: 'foo.v0.1.0 has a known issue' },
        { name: 'foo.v0.2.0', version: '0.2.0', head: true, replaces: 'foo.v0.1.0', skipRange: '<0.2.0' },
      ],
    });
  });

  it('a package or channel that is not there is a usage error naming the closest ones', async () => {
    const r = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--package',
      'jaeger-produkt',
      ...tls,
    ]);
    expect(r.exitCode).toBe(2);
    expect(errorOf(r).code).toBe(MirrorError.CATALOG_PACKAGE_UNKNOWN);
    expect(r.stderr).toContain(`--package jaeger-produkt: the catalog ${catalog} has no such package`);
    expect(r.stderr).toContain('hint: did you mean jaeger-product?');
    expect(r.stderr).not.toMatch(/\n\s+at /);

    const part = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--package',
      'observability',
      ...tls,
    ]);
    expect(part.stderr).toContain('hint: did you mean node-observability-operator?');

    const ch = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--package',
      'foo',
      '--channel',
      'stabel',
      '--json',
      ...tls,
    ]);
    expect(ch.exitCode).toBe(2);
    expect(JSON.parse(ch.stdout)).toMatchObject({
      error: { code: MirrorError.CATALOG_CHANNEL_UNKNOWN, hint: 'did you mean stable?' },
    });
  });

  it('an image that is not a catalog, one that is not there, and flags that do not go together', async () => {
    const r = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      `${reg.host}/ubi9/ubi:latest`,
      ...tls,
    ]);
    expect(r.exitCode).toBe(1);
    expect(errorOf(r).code).toBe(MirrorError.CATALOG_NO_FBC);
    expect(r.stderr).toContain('it is not an operator catalog');
    expect(r.stderr).toContain('hint: name an operator catalog image');

    const missing = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      `${reg.host}/redhat/nothing:v4.18`,
      ...tls,
    ]);
    expect(missing.exitCode).toBe(1);
    expect(errorOf(missing).code).toBe(MirrorError.REGISTRY_NOT_FOUND);

    const home = await tempDir('airgap-home-');
    const emptyAuth = join(home, 'auth.json');
    await writeFile(emptyAuth, '{"auths": {}}\n');
    const noAuth = await airgap(
      ['mirror', 'list', 'operators', '--catalog', catalog, '--ca-file', reg.caFile],
      {
        env: { REGISTRY_AUTH_FILE: emptyAuth, HOME: home },
      },
    );
    expect(noAuth.exitCode).toBe(1);
    expect(errorOf(noAuth).code).toBe(MirrorError.REGISTRY_UNAUTHORIZED);
    expect(noAuth.stderr).toContain('--authfile');

    const insecure = await airgap([
      'mirror',
      'list',
      'operators',
      '--catalog',
      catalog,
      '--authfile',
      reg.authFile,
      '--src-tls-verify',
      'false',
      '--package',
      'foo',
      '--json',
    ]);
    expect(insecure.exitCode).toBe(0);
    expect(JSON.parse(insecure.stdout)).toMatchObject({ kind: 'channels', package: 'foo' });

    const pkgOnly = await airgap(['mirror', 'list', 'operators', '--package', 'foo']);
    expect(pkgOnly.exitCode).toBe(2);
    expect(errorOf(pkgOnly).code).toBe(CommonError.FLAG_MISSING);
    const none = await airgap(['mirror', 'list', 'operators']);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain('--version 4.18 (the catalogs of that version) or --catalog <image>');
    const both = await airgap(['mirror', 'list', 'operators', '--version', '4.18', '--catalog', catalog]);
    expect(both.exitCode).toBe(2);
  });

  it('a catalog read that breaks mid-layer resumes where it stopped', async () => {
    const proxy = await startFaultProxy({
      target: reg.url,
      caFile: reg.caFile,
      tls: testCertificates().server,
      rules: [
        { match: { method: 'GET', path: /\/blobs\/sha256:/ }, fault: 'truncate', times: 2 },
        { match: { method: 'GET', path: /\/blobs\/sha256:/ }, fault: 'reset', afterBytes: 512, times: 1 },
      ],
    });
    try {
      const home = await tempDir('airgap-proxy-');
      const auth = join(home, 'auth.json');
      const basic = Buffer.from(`${reg.username}:${reg.password}`).toString('base64');
      await writeFile(auth, JSON.stringify({ auths: { [proxy.host]: { auth: basic } } }), { mode: 0o600 });
      const r = await airgap([
        'mirror',
        'list',
        'operators',
        '--catalog',
        `${proxy.host}/redhat/redhat-operator-index:v4.18`,
        '--package',
        'jaeger-product',
        '--json',
        '--authfile',
        auth,
        '--ca-file',
        reg.caFile,
      ]);
      expect(r.stderr).toBe('');
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({
        kind: 'channels',
        channels: [{ head: 'jaeger-operator.v1.51.0-1' }],
      });
      expect(proxy.stats().faults).toBe(3);
    } finally {
      await proxy.stop();
    }
  });

  it('reads a catalog from an OCI layout on disk (oci:<dir>)', async () => {
    const dir = join(await tempDir('airgap-list-oci-'), 'layout');
    const layout = await OciLayout.open(dir);
    await buildCatalogImage(layout, {
      repo: 'redhat/redhat-operator-index',
      format: 'oci',
      fbcDir: join(realdata('samples', 'fbc'), 'operator-registry-foo'),
    });
    const r = await airgap(['mirror', 'list', 'operators', '--catalog', `oci:${dir}`, '--json']);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      kind: 'packages',
      catalog: `oci:${dir}`,
      packages: [{ name: 'foo', defaultChannel: 'beta', latest: '0.2.0' }],
    });
  });
});
