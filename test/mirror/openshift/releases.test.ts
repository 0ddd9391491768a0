import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';
import { parseGraph, type UpdateGraph } from '../../../src/mirror/openshift/graph.js';
import { resolveReleases, selectReleases } from '../../../src/mirror/openshift/releases.js';
import type { ReleaseChannel } from '../../../src/mirror/isc/types.js';
import { lazy, realdata, thrown, withRealdata } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const samplePath = () => realdata('samples', 'update-graph', 'cincinnati-amd64-stable-4.13.json');
const raw = lazy(
  () =>
    JSON.parse(readFileSync(samplePath(), 'utf8')) as {
      nodes: { version: string; payload: string }[];
    },
);
const stable413 = lazy(() => parseGraph(raw(), samplePath()));
const payloadOf = (v: string) => raw().nodes.find((n) => n.version === v)?.payload;

const ch = (name: string, extra: Partial<ReleaseChannel> = {}): ReleaseChannel => ({
  name,
  type: 'ocp',
  full: false,
  shortestPath: false,
  ...extra,
});
const versions = (s: { releases: { version: string }[] }) => s.releases.map((r) => r.version);

withRealdata.describe('selectReleases on the real stable-4.13 graph (oc-mirror v2 rules)', () => {
  const graphs = () => ({ 'stable-4.13': stable413() });

  it('no bounds, not full: only the channel head', () => {
    const s = selectReleases(graphs(), [ch('stable-4.13')]);
    expect(s.releases).toEqual([
      { version: '4.13.43', payload: payloadOf('4.13.43'), channels: ['stable-4.13'] },
    ]);
    expect(s.why.join('\n')).toContain('heads only');
  });

  it('minVersion and maxVersion: every release between them, holes included as absent', () => {
    const s = selectReleases(graphs(), [ch('stable-4.13', { minVersion: '4.13.10', maxVersion: '4.13.20' })]);
    expect(versions(s)).toEqual([
      '4.13.10',
      '4.13.11',
      '4.13.12',
      '4.13.13',
      '4.13.14',
      '4.13.15',
      '4.13.17',
      '4.13.18',
      '4.13.19',
    ]);
  });

  it('full: the whole channel, including the 4.12 releases the channel carries', () => {
    const s = selectReleases(graphs(), [ch('stable-4.13', { full: true })]);
    expect(s.releases).toHaveLength(98);
    expect(versions(s)[0]).toBe('4.12.0');
    expect(versions(s).at(-1)).toBe('4.13.43');
  });

  it('only minVersion: max defaults to the channel head', () => {
    const s = selectReleases(graphs(), [ch('stable-4.13', { minVersion: '4.13.40' })]);
    expect(versions(s)).toEqual(['4.13.40', '4.13.41', '4.13.42', '4.13.43']);
  });

  it('only maxVersion (not full): min defaults to the first release of the channel', () => {
    const s = selectReleases(graphs(), [ch('stable-4.13', { maxVersion: '4.12.3' })]);
    expect(versions(s)).toEqual(['4.12.0', '4.12.1', '4.12.2', '4.12.3']);
  });

  it('shortestPath: the BFS path over edges, trying the newest successor first', () => {
    const s = selectReleases(graphs(), [
      ch('stable-4.13', { minVersion: '4.12.10', maxVersion: '4.13.43', shortestPath: true }),
    ]);
    expect(versions(s)).toEqual(['4.12.10', '4.12.58', '4.13.43']);
  });

  it('shortestPath without a path keeps only the two ends', () => {
    const s = selectReleases(graphs(), [
      ch('stable-4.13', { minVersion: '4.13.0', maxVersion: '4.13.19', shortestPath: true }),
    ]);
    expect(versions(s)).toEqual(['4.13.0', '4.13.19']);
    expect(s.why.join('\n')).toContain('no upgrade path from 4.13.0 to 4.13.19');
  });

  it('shortestPath with a version outside the channel is a usage error naming it', () => {
    const e = thrown(() =>
      selectReleases(graphs(), [
        ch('stable-4.13', { minVersion: '4.13.16', maxVersion: '4.13.43', shortestPath: true }),
      ]),
    );
    expect(e.code).toBe(MirrorError.RELEASE_NOT_IN_CHANNEL);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('4.13.16');
  });

  it('a range with nothing in it: usage error naming channel, range and the span available', () => {
    const e = thrown(() =>
      selectReleases(graphs(), [ch('stable-4.13', { minVersion: '4.13.44', maxVersion: '4.13.50' })]),
    );
    expect(e.code).toBe(MirrorError.RELEASE_RANGE_EMPTY);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('stable-4.13');
    expect(e.message).toContain('4.13.44 … 4.13.50');
    expect(e.hint).toContain('4.12.0 … 4.13.43');
    expect(
      thrown(() =>
        selectReleases(graphs(), [ch('stable-4.13', { minVersion: '4.13.16', maxVersion: '4.13.16' })]),
      ).code,
    ).toBe(MirrorError.RELEASE_RANGE_EMPTY);
  });

  it('a bound that is not a version is a usage error with a hint', () => {
    const e = thrown(() => selectReleases(graphs(), [ch('stable-4.13', { minVersion: 'v4.13.1' })]));
    expect(e.code).toBe(MirrorError.RELEASE_VERSION_INVALID);
    expect(e.hint).toContain('drop the "v"');
  });

  it('conditional edges between selected releases come back as risks', () => {
    const s = selectReleases(graphs(), [ch('stable-4.13', { minVersion: '4.13.10', maxVersion: '4.13.19' })]);
    expect(s.risks).toHaveLength(18);
    const r = s.risks.find((x) => x.from === '4.13.10' && x.to === '4.13.17');
    expect(r?.risks.map((k) => k.name)).toEqual(['OVNKubeMasterDSPrestop']);
    expect(r?.onPath).toBe(false);
    expect(s.risks.every((x) => x.channels.includes('stable-4.13'))).toBe(true);
  });

  it('a conditional hop on a shortest path is marked on the path', () => {
    const s = selectReleases(graphs(), [
      ch('stable-4.13', { minVersion: '4.12.0', maxVersion: '4.12.1', shortestPath: true }),
    ]);
    expect(versions(s)).toEqual(['4.12.0', '4.12.1']);
    expect(s.risks).toEqual([
      expect.objectContaining({
        from: '4.12.0',
        to: '4.12.1',
        onPath: true,
        risks: [
          expect.objectContaining({ name: 'ConsoleAvailableUpdatesNull' }),
          expect.objectContaining({ name: 'OVNCrashOnMigratedDualStack' }),
        ],
      }),
    ]);
    expect(s.why.join('\n')).toContain('on a chosen path: 4.12.0 → 4.12.1');
  });

  it('several channels: merged, deduplicated by payload, each release names its channels', () => {
    const s = selectReleases({ 'stable-4.13': stable413(), 'fast-4.13': stable413() }, [
      ch('stable-4.13'),
      ch('fast-4.13', { minVersion: '4.13.42' }),
    ]);
    expect(versions(s)).toEqual(['4.13.42', '4.13.43']);
    expect(s.releases[1].channels.sort()).toEqual(['fast-4.13', 'stable-4.13']);
  });
});

/** A small synthetic graph: versions in order, edges as version pairs. */
function graph(vs: string[], edges: [string, string][]): UpdateGraph {
  return {
    nodes: vs.map((v) => ({
      version: v,
      payload: `quay.io/x/release@sha256:${v.replace(/\./g, '').padStart(64, '0')}`,
      metadata: {},
    })),
    edges: edges.map(([a, b]) => [vs.indexOf(a), vs.indexOf(b)]),
    conditionalEdges: [],
  };
}

withRealdata.describe(
  'the update path of a running cluster (--from-version), on the real stable-4.13 graph',
  () => {
    const graphs = () => ({ 'stable-4.13': stable413() });

    it('keeps the recommended path from the running version to the newest selected release', () => {
      const s = selectReleases(graphs(), [ch('stable-4.13')], { fromVersion: '4.12.10' });
      expect(versions(s)).toEqual(['4.12.10', '4.12.58', '4.13.43']);
      expect(s.why.join('\n')).toContain(
        'the cluster runs 4.12.10: recommended update path 4.12.10 → 4.12.58 → 4.13.43',
      );
      expect(s.risks.filter((r) => r.onPath)).toEqual([]);
    });

    it('with no recommended path, takes the one through conditional updates and shows their risks on it', () => {
      const s = selectReleases(
        graphs(),
        [ch('stable-4.13', { minVersion: '4.13.19', maxVersion: '4.13.19' })],
        {
          fromVersion: '4.13.0',
        },
      );
      expect(versions(s)).toEqual(['4.13.0', '4.13.19']);
      expect(s.why.join('\n')).toContain(
        'no recommended update path to 4.13.19; the only one goes through conditional updates',
      );
      const onPath = s.risks.filter((r) => r.onPath);
      expect(onPath.map((r) => `${r.from}>${r.to}`)).toEqual(['4.13.0>4.13.19']);
      expect(onPath[0]!.risks.length).toBeGreaterThan(0);
    });

    it('a running version the channel does not hold, or that is not a version, is a usage error saying what to do', () => {
      const missing = thrown(() => selectReleases(graphs(), [ch('stable-4.13')], { fromVersion: '4.13.16' }));
      expect(missing.code).toBe(MirrorError.RELEASE_NOT_IN_CHANNEL);
      expect(missing.exitCode).toBe(2);
      expect(missing.hint).toContain('stable-4.13');
      const bad = thrown(() => selectReleases(graphs(), [ch('stable-4.13')], { fromVersion: '4.13' }));
      expect(bad.code).toBe(MirrorError.RELEASE_VERSION_INVALID);
    });

    it('a cluster already at the newest selected release adds nothing', () => {
      const s = selectReleases(graphs(), [ch('stable-4.13')], { fromVersion: '4.13.43' });
      expect(versions(s)).toEqual(['4.13.43']);
    });
  },
);

describe('upgrades across channels (oc-mirror CalculateUpgrades)', () => {
  const s13 = graph(
    ['4.13.0', '4.13.1', '4.13.2'],
    [
      ['4.13.0', '4.13.1'],
      ['4.13.1', '4.13.2'],
      ['4.13.0', '4.13.2'],
    ],
  );
  const s14 = graph(
    ['4.13.2', '4.14.0', '4.14.1', '4.14.2'],
    [
      ['4.13.2', '4.14.1'],
      ['4.14.0', '4.14.1'],
      ['4.14.1', '4.14.2'],
    ],
  );
  const s15 = graph(
    ['4.14.2', '4.15.0', '4.15.1'],
    [
      ['4.14.2', '4.15.0'],
      ['4.15.0', '4.15.1'],
    ],
  );

  it('walks stable-4.13 → stable-4.14 → stable-4.15 through each channel head', async () => {
    const channels = [ch('stable-4.13', { minVersion: '4.13.0', maxVersion: '4.13.0' }), ch('stable-4.15')];
    const e = thrown(() => selectReleases({ 'stable-4.13': s13, 'stable-4.15': s15 }, channels));
    expect(e.code).toBe(MirrorError.RELEASE_GRAPH_MISSING);
    expect(e.details?.channel).toBe('stable-4.14');
    const fetched: string[] = [];
    const all: Record<string, UpdateGraph> = { 'stable-4.13': s13, 'stable-4.14': s14, 'stable-4.15': s15 };
    const { selection } = await resolveReleases(channels, async (c) => {
      fetched.push(c);
      return all[c];
    });
    expect(fetched).toEqual(['stable-4.13', 'stable-4.15', 'stable-4.14']);
    expect(versions(selection)).toEqual(['4.13.0', '4.13.2', '4.14.1', '4.14.2', '4.15.0', '4.15.1']);
  });

  it('stops at a blocked edge and keeps the requested release', () => {
    const s15blocked = graph(['4.15.0', '4.15.1'], [['4.15.0', '4.15.1']]);
    const s = selectReleases({ 'stable-4.14': s14, 'stable-4.15': s15blocked }, [
      ch('stable-4.14', { minVersion: '4.14.0', maxVersion: '4.14.0' }),
      ch('stable-4.15', { minVersion: '4.15.1', maxVersion: '4.15.1' }),
    ]);
    expect(versions(s)).toEqual(['4.14.0', '4.14.1', '4.14.2', '4.15.1']);
    expect(s.why.join('\n')).toContain('blocked edge');
  });
});
