/**
 * Update edges decided from graph data (channels, blocked edges, release metadata) as the OpenShift
 * Update Service decides them. The real stable-4.13 graph the update service published is turned
 * back into the graph data it came from (a channel file, one blocked-edges file per risk and target
 * in the repository's style, each release's `previous`), and every pair of its releases must come
 * out as the service published it; the real 4.12.0 release-metadata is judged against a channel;
 * small synthetic cases cover previous.add/.remove, conditional and fully blocked edges.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toYaml } from '../../../src/util/yaml.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { parseGraph, type GraphRisk, type UpdateGraph } from '../../../src/mirror/openshift/graph.js';
import {
  decideEdge,
  GRAPH_METADATA,
  namesRelease,
  parseBlockedEdgeFile,
  parseChannelFile,
  type BlockedEdge,
  type EdgeReleaseMetadata,
  type GraphChannel,
} from '../../../src/mirror/openshift/graph-edges.js';
import { lazy, realdata, thrown, withRealdata } from '../../helpers/realdata.js';

const IMAGE = 'mirror.example.com:8443/openshift/graph-image:latest';

const readJson = (...p: string[]): unknown => JSON.parse(readFileSync(realdata('samples', ...p), 'utf8'));

/** A version regex in the style of cincinnati-graph-data: `^(4[.]12[.]10|4[.]12[.]11)[+].*$`. */
function exactly(versions: string[]): string {
  const esc = versions.map((v) => v.replace(/[.]/g, '[.]'));
  return `^(${esc.join('|')})[+].*$`;
}

/** The graph data and release metadata a published graph was built from (see the file comment). */
function graphDataOf(channel: string, g: UpdateGraph) {
  const v = g.nodes.map((n) => n.version);
  const channelFile = toYaml({ name: channel, versions: v });
  const previous = new Map<string, Set<string>>(v.map((x) => [x, new Set<string>()]));
  for (const [a, b] of g.edges) previous.get(v[b]!)!.add(v[a]!);
  // One file per target and risk (the update service groups edges by their set of risks).
  const byFile = new Map<string, { to: string; risk: GraphRisk; from: string[] }>();
  for (const ce of g.conditionalEdges) {
    for (const e of ce.edges) {
      previous.get(e.to)!.add(e.from);
      for (const risk of ce.risks) {
        const file = `blocked-edges/${e.to}-${risk.name}.yaml`;
        const f = byFile.get(file) ?? { to: e.to, risk, from: [] };
        f.from.push(e.from);
        byFile.set(file, f);
      }
    }
  }
  const blocked: Record<string, string> = {};
  for (const [file, { to, risk, from }] of byFile)
    blocked[file] = toYaml({
      to,
      from: exactly(from),
      url: risk.url,
      name: risk.name,
      message: risk.message,
      matchingRules: risk.matchingRules,
    });
  const metadata = (to: string): EdgeReleaseMetadata => ({ version: to, previous: [...previous.get(to)!] });
  return { channelFile, blocked, metadata };
}

withRealdata.describe('edges from graph data, against the real stable-4.13 graph', () => {
  const real = lazy(() => {
    const g = parseGraph(readJson('update-graph', 'cincinnati-amd64-stable-4.13.json'));
    const data = graphDataOf('stable-4.13', g);
    const channel = parseChannelFile(data.channelFile, IMAGE, 'channels/stable-4.13.yaml');
    const blocked = Object.entries(data.blocked).map(([f, text]) => parseBlockedEdgeFile(text, IMAGE, f));
    return { g, data, channel, blocked, versions: g.nodes.map((n) => n.version) };
  });

  it('parses the channel and the blocked edges written from it', () => {
    const { channel, blocked } = real();
    expect(channel.name).toBe('stable-4.13');
    expect(channel.versions).toHaveLength(98);
    expect(blocked.length).toBeGreaterThan(37);
    expect(blocked.every((b) => b.risk && b.risk.matchingRules.length > 0)).toBe(true);
  });

  it('decides every pair of its 98 releases as the update service published it', () => {
    const { g, data, channel, blocked, versions } = real();
    const plain = new Set(g.edges.map(([a, b]) => `${versions[a]}>${versions[b]}`));
    const conditional = new Map<string, string[]>();
    for (const ce of g.conditionalEdges)
      for (const e of ce.edges) conditional.set(`${e.from}>${e.to}`, ce.risks.map((r) => r.name).sort());
    const seen = { recommended: 0, conditional: 0, none: 0, both: 0 };
    for (const to of versions) {
      const target = data.metadata(to);
      for (const from of versions) {
        const d = decideEdge(channel, blocked, { from, target, arch: 'amd64' });
        const key = `${from}>${to}`;
        const risks = conditional.get(key);
        // The CVO prefers the conditional update when the service lists an edge as both.
        const want = risks ? 'conditional' : plain.has(key) ? 'recommended' : 'none';
        expect(d.kind, key).toBe(want);
        if (risks) expect(d.risks.map((r) => r.name).sort(), key).toEqual(risks);
        seen[d.kind]++;
        if (risks && plain.has(key)) seen.both++;
      }
    }
    expect(seen.recommended).toBe(g.edges.length - seen.both);
    expect(seen.conditional).toBe(2394);
    expect(seen.both).toBe(136);
  });

  it('keeps a risk as published: name, message, url and matchingRules', () => {
    const { g, data, channel, blocked } = real();
    const ce = g.conditionalEdges[0]!;
    const e = ce.edges[0]!;
    const d = decideEdge(channel, blocked, { from: e.from, target: data.metadata(e.to), arch: 'amd64' });
    const byName = (n: string) => d.risks.find((r) => r.name === n);
    for (const r of ce.risks) expect(byName(r.name)).toEqual(r);
  });

  it('says a release outside the channel has no edge', () => {
    const { data, channel, blocked, versions } = real();
    const d = decideEdge(channel, blocked, {
      from: '4.11.99',
      target: data.metadata(versions[versions.length - 1]!),
      arch: 'amd64',
    });
    expect(d).toMatchObject({ kind: 'none', reason: '4.11.99 is not in channel stable-4.13' });
  });
});

withRealdata.describe('edges into the real 4.12.0 release (its release-metadata)', () => {
  const meta = lazy(
    () => readJson('release-payload', 'ocp-4.12.0-release-metadata.json') as EdgeReleaseMetadata,
  );
  const channel = lazy((): GraphChannel => ({
    name: 'candidate-4.12',
    versions: [...(meta().previous ?? []), '4.11.15', '4.12.0'],
  }));
  const ask = (from: string, blockedEdges: BlockedEdge[] = []) =>
    decideEdge(channel(), blockedEdges, { from, target: meta(), arch: 'amd64' });

  it('follows previous: listed releases update to it, others do not', () => {
    expect(meta().version).toBe('4.12.0');
    expect(ask('4.11.20')).toEqual({ kind: 'recommended', risks: [] });
    expect(ask('4.12.0-rc.8').kind).toBe('recommended');
    expect(ask('4.11.15')).toEqual({
      kind: 'none',
      risks: [],
      reason: 'release 4.12.0 does not list 4.11.15 among the releases it updates from',
    });
  });

  it('a blocked-edges file in the repository format makes matching sources conditional', () => {
    const file = [
      'to: 4.12.0',
      'from: ^4[.]11[.]1[0-9][+].*$',
      'url: https://issues.redhat.com/browse/OCPBUGS-0000',
      'name: AWSOldBootImagesLackAfterburn',
      'message: |-',
      '  Clusters born before 4.10 on AWS may fail to update.',
      'matchingRules:',
      '- type: PromQL',
      '  promql:',
      '    promql: group(cluster_infrastructure_provider{type="AWS"})',
      '',
    ].join('\n');
    const b = parseBlockedEdgeFile(file, IMAGE, 'blocked-edges/4.12.0-AWSOldBootImagesLackAfterburn.yaml');
    const d = ask('4.11.16', [b]);
    expect(d.kind).toBe('conditional');
    expect(d.risks).toEqual([
      {
        name: 'AWSOldBootImagesLackAfterburn',
        url: 'https://issues.redhat.com/browse/OCPBUGS-0000',
        message: 'Clusters born before 4.10 on AWS may fail to update.',
        matchingRules: [
          { type: 'PromQL', promql: { promql: 'group(cluster_infrastructure_provider{type="AWS"})' } },
        ],
      },
    ]);
    expect(ask('4.11.20', [b]).kind).toBe('recommended');
    expect(ask('4.12.0-rc.8', [b]).kind).toBe('recommended');
  });
});

describe('edges from graph data, synthetic cases', () => {
  const channel: GraphChannel = { name: 'stable-4.17', versions: ['4.17.1', '4.17.2', '4.17.3', '4.17.10'] };
  const target = (previous: string[], metadata: Record<string, string> = {}): EdgeReleaseMetadata => ({
    version: '4.17.10',
    previous,
    metadata,
  });
  const edge = (text: string, name = 'blocked-edges/4.17.10.yaml') => parseBlockedEdgeFile(text, IMAGE, name);
  const risky = (from: string, name = 'SomeRisk') =>
    edge(
      `to: 4.17.10\nfrom: ${from}\nurl: https://example.com/${name}\nname: ${name}\nmessage: Something may break.\nmatchingRules:\n- type: Always\n`,
      `blocked-edges/4.17.10-${name}.yaml`,
    );

  it('previous.add adds an edge the release does not list', () => {
    const add = { [GRAPH_METADATA.previousAdd]: '4.17.1, 4.17.2' };
    expect(decideEdge(channel, [], { from: '4.17.2', target: target([]), arch: 'amd64' }).kind).toBe('none');
    expect(decideEdge(channel, [], { from: '4.17.2', target: target([], add), arch: 'amd64' }).kind).toBe(
      'recommended',
    );
  });

  it('previous.remove removes a listed edge, * removes them all, and remove beats add', () => {
    const ask = (from: string, metadata: Record<string, string>) =>
      decideEdge(channel, [], {
        from,
        target: target(['4.17.1', '4.17.2', '4.17.3'], metadata),
        arch: 'amd64',
      });
    const remove = { [GRAPH_METADATA.previousRemove]: '4.17.2' };
    expect(ask('4.17.2', remove)).toEqual({
      kind: 'none',
      risks: [],
      reason: `release 4.17.10 removes the update from 4.17.2 (${GRAPH_METADATA.previousRemove})`,
    });
    expect(ask('4.17.3', remove).kind).toBe('recommended');
    expect(ask('4.17.3', { [GRAPH_METADATA.previousRemove]: '*' }).kind).toBe('none');
    expect(
      ask('4.17.2', { [GRAPH_METADATA.previousAdd]: '4.17.2', [GRAPH_METADATA.previousRemove]: '4.17.2' })
        .kind,
    ).toBe('none');
  });

  it('next, next.add and next.remove of the running release count too', () => {
    const ask = (source: EdgeReleaseMetadata) =>
      decideEdge(channel, [], { from: '4.17.3', target: target([]), source, arch: 'amd64' }).kind;
    expect(ask({ version: '4.17.3', next: ['4.17.10'] })).toBe('recommended');
    expect(ask({ version: '4.17.3', metadata: { [GRAPH_METADATA.nextAdd]: '4.17.10' } })).toBe('recommended');
    expect(
      ask({ version: '4.17.3', next: ['4.17.10'], metadata: { [GRAPH_METADATA.nextRemove]: '4.17.10' } }),
    ).toBe('none');
  });

  it('a blocked edge without matchingRules drops the edge; with them it is conditional', () => {
    const all = edge('to: 4.17.10\nfrom: .*\n# everything into 4.17.10\n');
    expect(all.risk).toBeUndefined();
    const t = target(['4.17.1', '4.17.2', '4.17.3']);
    expect(decideEdge(channel, [all], { from: '4.17.3', target: t, arch: 'amd64' })).toEqual({
      kind: 'none',
      risks: [],
      reason: 'blocked by blocked-edges/4.17.10.yaml (from: .*)',
    });
    const risk = risky('^4[.]17[.][12][+].*$');
    expect(decideEdge(channel, [risk], { from: '4.17.1', target: t, arch: 'amd64' })).toMatchObject({
      kind: 'conditional',
      risks: [{ name: 'SomeRisk', message: 'Something may break.', matchingRules: [{ type: 'Always' }] }],
    });
    expect(decideEdge(channel, [risk], { from: '4.17.3', target: t, arch: 'amd64' }).kind).toBe(
      'recommended',
    );
    // Risks add up, each once; an edge both at risk and blocked stays conditional (as published).
    const d = decideEdge(channel, [risk, risky('.*', 'Other'), risk, all], {
      from: '4.17.2',
      target: t,
      arch: 'amd64',
    });
    expect(d.kind).toBe('conditional');
    expect(d.risks.map((r) => r.name)).toEqual(['SomeRisk', 'Other']);
  });

  it('matches from against the version with its architecture suffix, unanchored unless ^…$', () => {
    const t = target(['4.17.1', '4.17.10']);
    const amd64Only = edge('to: 4.17.10\nfrom: 4[.]17[.]1[+]amd64\n');
    expect(decideEdge(channel, [amd64Only], { from: '4.17.1', target: t, arch: 'amd64' }).kind).toBe('none');
    expect(decideEdge(channel, [amd64Only], { from: '4.17.1', target: t, arch: 'arm64' }).kind).toBe(
      'recommended',
    );
    // Unanchored, `4[.]17[.]1` is found inside 4.17.10+amd64 too, as Cincinnati's regex search finds it.
    const ch: GraphChannel = { name: 'stable-4.17', versions: ['4.17.1', '4.17.10', '4.17.11'] };
    const t11 = { version: '4.17.11', previous: ['4.17.1', '4.17.10'] };
    const loose = edge('to: 4.17.11\nfrom: 4[.]17[.]1\n');
    const anchored = edge('to: 4.17.11\nfrom: ^4[.]17[.]1[+].*$\n');
    expect(decideEdge(ch, [loose], { from: '4.17.10', target: t11, arch: 'amd64' }).kind).toBe('none');
    expect(decideEdge(ch, [anchored], { from: '4.17.10', target: t11, arch: 'amd64' }).kind).toBe(
      'recommended',
    );
    expect(decideEdge(ch, [anchored], { from: '4.17.1', target: t11, arch: 'amd64' }).kind).toBe('none');
  });

  it('honours the architecture of release names in channels and blocked edges', () => {
    expect(namesRelease('4.17.3+amd64', '4.17.3', 'amd64')).toBe(true);
    expect(namesRelease('4.17.3+s390x', '4.17.3', 'amd64')).toBe(false);
    expect(namesRelease('4.17.3', '4.17.3', 's390x')).toBe(true);
    const ch: GraphChannel = { name: 'fast-4.17', versions: ['4.17.3+s390x', '4.17.10'] };
    const t = target(['4.17.3']);
    expect(decideEdge(ch, [], { from: '4.17.3', target: t, arch: 's390x' }).kind).toBe('recommended');
    expect(decideEdge(ch, [], { from: '4.17.3', target: t, arch: 'amd64' })).toMatchObject({
      kind: 'none',
      reason: '4.17.3 is not in channel fast-4.17',
    });
    const s390x = edge('to: 4.17.10+s390x\nfrom: .*\n');
    expect(decideEdge(channel, [s390x], { from: '4.17.3', target: t, arch: 'amd64' }).kind).toBe(
      'recommended',
    );
  });
});

describe('graph-data files that cannot be used', () => {
  it('names the image and the file, with code GRAPH_IMAGE_INVALID', () => {
    const cases: [() => unknown, string][] = [
      [() => parseChannelFile('name: [unclosed', IMAGE, 'channels/a.yaml'), 'channels/a.yaml: not YAML'],
      [
        () => parseChannelFile('- 4.17.1\n', IMAGE, 'channels/a.yaml'),
        'not a mapping with name and versions',
      ],
      [
        () => parseChannelFile('name: a\nversions: 4.17.1\n', IMAGE, 'channels/a.yaml'),
        'versions is not a list',
      ],
      [() => parseBlockedEdgeFile('from: .*\n', IMAGE, 'blocked-edges/x.yaml'), '"to" is missing'],
      [() => parseBlockedEdgeFile('to: 4.17.1\n', IMAGE, 'blocked-edges/x.yaml'), '"from" is missing'],
      [
        () => parseBlockedEdgeFile('to: 4.17.1\nfrom: "4[.17"\n', IMAGE, 'blocked-edges/x.yaml'),
        '"from" is not a regular expression',
      ],
      [
        () =>
          parseBlockedEdgeFile(
            'to: 4.17.1\nfrom: .*\nmatchingRules: Always\n',
            IMAGE,
            'blocked-edges/x.yaml',
          ),
        'matchingRules is not a list of conditions',
      ],
    ];
    for (const [f, why] of cases) {
      const e = thrown(f);
      expect(e.code).toBe(MirrorError.GRAPH_IMAGE_INVALID);
      expect(e.message).toContain(`the graph image ${IMAGE} has invalid graph data: `);
      expect(e.message).toContain(why);
      expect(e.where).toBe(IMAGE);
    }
  });

  it('reads a risk short of name as one named after its file', () => {
    const b = parseBlockedEdgeFile(
      'to: 4.17.1\nfrom: .*\nmatchingRules: []\n',
      IMAGE,
      'blocked-edges/4.17.1-Foo.yaml',
    );
    expect(b.risk).toEqual({ name: '4.17.1-Foo', url: '', message: '', matchingRules: [] });
  });
});
