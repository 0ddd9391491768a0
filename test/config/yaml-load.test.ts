/**
 * The bounded YAML loader: what js-yaml would load cheaply but every consumer would walk as a tree
 * (aliases, cycles), what js-yaml itself cannot read (nesting deep enough to overflow the stack),
 * and the size of a document and of all the files of one source. A normal large document loads as
 * js-yaml loads it.
 */
import { readFileSync } from 'node:fs';
import * as yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { loadYamlWithPositions } from '../../src/config/positions.js';
import {
  allowedAliasRatio,
  LOAD_SCHEMA,
  parseYaml,
  parseYamlDocuments,
  YamlBudget,
  type YamlReadOptions,
} from '../../src/config/yaml-load.js';
import { AirgapError, CommonError } from '../../src/util/errors.js';
import { billionLaughs } from '../helpers/fixtures.js';
import { realdata, withRealdata } from '../helpers/realdata.js';

/** A billion laughs under `top`, as one document. */
const laughs = () => `${billionLaughs('top').join('\n')}\n`;

/** The YAML_LIMIT error `f` throws. */
function limitError(f: () => unknown): AirgapError {
  try {
    f();
  } catch (e) {
    if (e instanceof AirgapError && e.code === CommonError.YAML_LIMIT) return e;
    throw e;
  }
  throw new Error('expected a YAML_LIMIT error');
}

const from = (source: string, more: Partial<YamlReadOptions> = {}): YamlReadOptions => ({ source, ...more });

describe('aliases', () => {
  it('a billion laughs is refused at once, naming the source, as go-yaml refuses it', () => {
    const text = laughs();
    // js-yaml alone loads it in no time, as a DAG: whatever walks it as a tree walks 10^9 items.
    const shared = yaml.load(text) as { top: unknown[][] };
    expect(shared.top[0]).toBe(shared.top[1]);

    const started = Date.now();
    const e = limitError(() => parseYaml(text, from('values.yaml of chart bomb', { exitCode: 2 })));
    expect(Date.now() - started).toBeLessThan(1000);
    expect(e.message).toContain('values.yaml of chart bomb');
    expect(e.message).toContain('"billion laughs"');
    expect(e.exitCode).toBe(2);
    expect(e.details).toMatchObject({ limit: 'aliases' });
    expect(e.hint).toMatch(/write the repeated parts out/);
    // The same through the positions loader (image set configurations, site files).
    expect(limitError(() => loadYamlWithPositions(text, from('isc.yaml'))).message).toContain('isc.yaml');
  });

  it('what is fetched is exit 1 with a hint about the publisher', () => {
    const e = limitError(() => parseYaml(laughs(), from('https://charts.example.com/index.yaml')));
    expect(e.exitCode).toBe(1);
    expect(e.hint).toMatch(/whoever publishes it/);
  });

  it('a few aliases, as people write them, are fine; the value shares them as js-yaml does', () => {
    const text = [
      'defaults: &defaults {image: {repository: quay.io/x/y, tag: v1}, resources: {limits: {cpu: 1}}}',
      'web: *defaults',
      'worker:',
      '  <<: *defaults',
      '  replicas: 3',
      `list: &l [${Array(400).fill('a').join(',')}]`,
      'again: [*l, *l]',
    ].join('\n');
    const v = parseYaml(text, from('values.yaml')) as Record<string, Record<string, unknown>>;
    expect(v).toEqual(yaml.load(text, { schema: LOAD_SCHEMA }));
    expect(v.web).toBe(v.defaults);
    expect(v.worker!.replicas).toBe(3);
  });

  it("go-yaml's ratio: aliases may be 99% of a small document, 10% of a very large one", () => {
    expect(allowedAliasRatio(1000)).toBe(0.99);
    expect(allowedAliasRatio(400_000)).toBe(0.99);
    expect(allowedAliasRatio(2_200_000)).toBeCloseTo(0.545);
    expect(allowedAliasRatio(4_000_000)).toBe(0.1);
    // 100 references to a list of 1,000 items: 100,000 nodes, 99.9% of them through aliases.
    const text = `a: &a [${Array(1000).fill('x').join(',')}]\nb: [${Array(100).fill('*a').join(',')}]\n`;
    const e = limitError(() => parseYaml(text, from('many.yaml')));
    expect(e.details).toMatchObject({ limit: 'aliases', nodes: 101_105, found: 100_100 });
    // 9 references: 98.9% of 10,000 nodes is under 99%.
    const fine = `a: &a [${Array(1000).fill('x').join(',')}]\nb: [${Array(9).fill('*a').join(',')}]\n`;
    expect(() => parseYaml(fine, from('fine.yaml'))).not.toThrow();
  });

  it('a cycle is refused (js-yaml registers the anchor before it reads the children)', () => {
    for (const text of ['a: &x {b: *x}\n', 'a: &x\n  b: *x\n', 'a: &x [1, [*x]]\n']) {
      const v = yaml.load(text) as { a: Record<string, unknown> | unknown[] };
      expect(JSON.stringify(v.a, (_k, x: unknown) => (x === v.a ? 'self' : x))).toContain('self');
      const e = limitError(() => parseYaml(text, from('cycle.yaml')));
      expect(e.message).toBe('cycle.yaml: an alias refers to a mapping or list that contains it (a cycle)');
      expect(e.details).toMatchObject({ limit: 'cycle' });
    }
  });

  it('a chain of aliases deeper than the expanded depth is refused', () => {
    const lines = ['l0: &l0 [x]'];
    for (let i = 1; i <= 60; i++) lines.push(`l${i}: &l${i} [*l${i - 1}]`);
    const e = limitError(() =>
      parseYaml(lines.join('\n'), from('chain.yaml', { limits: { expandedDepth: 50 } })),
    );
    expect(e.details).toMatchObject({ limit: 'expandedDepth', max: 50 });
    expect(() => parseYaml(lines.join('\n'), from('chain.yaml'))).not.toThrow();
  });

  it('merge keys copy keys: more than the limit is refused', () => {
    const base = `base: &b {${Array.from({ length: 50 }, (_, i) => `k${i}: ${i}`).join(', ')}}`;
    const text = [base, ...Array.from({ length: 300 }, (_, i) => `m${i}: {<<: *b}`)].join('\n');
    const e = limitError(() => parseYaml(text, from('merge.yaml')));
    expect(e.details).toMatchObject({ limit: 'mergeKeys', max: 10_000 });
  });
});

describe('size', () => {
  it('100,000 nested brackets are a clear error, not a RangeError', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const e = limitError(() => parseYaml(deep, from('deep.yaml')));
    expect(e.message).toBe('deep.yaml: it nests deeper than 100 levels');
    expect(limitError(() => loadYamlWithPositions(deep, from('deep.yaml'))).details).toMatchObject({
      limit: 'depth',
    });
    expect(parseYaml(`${'['.repeat(90)}1${']'.repeat(90)}`, from('ok.yaml'))).toBeDefined();
  });

  it('the node count is checked before the value is built', () => {
    const text = `[${Array(5000).fill('1').join(',')}]`;
    const e = limitError(() => parseYaml(text, from('nodes.yaml', { limits: { nodes: 1000 } })));
    expect(e.message).toBe('nodes.yaml: it has more than 1,000 YAML nodes');
    expect(parseYaml(text, from('nodes.yaml', { limits: { nodes: 10_000 } }))).toHaveLength(5000);
    expect(
      limitError(() =>
        parseYamlDocuments(`${text}\n---\n${text}`, from('two.yaml', { limits: { nodes: 8000 } })),
      ),
    ).toBeDefined();
  });

  it('the byte limit counts UTF-8 bytes', () => {
    const text = `a: "${'€'.repeat(400)}"\n`; // 406 characters, 1,206 bytes
    const e = limitError(() => parseYaml(text, from('euro.yaml', { limits: { bytes: 1024 } })));
    expect(e.message).toBe('euro.yaml: it is 1,206 bytes of YAML, over the limit of 1,024');
    expect(parseYaml(text, from('euro.yaml', { limits: { bytes: 2048 } }))).toEqual({ a: '€'.repeat(400) });
  });

  it('one budget for all the files of a source: bytes as they are held, nodes as they are loaded', () => {
    const file = `to: 4.17.3\nfrom: ${'x'.repeat(4000)}\n`;
    const bytes = new YamlBudget('the graph image reg/graph:latest', { bytes: 10_000, nodes: 1_000_000 });
    bytes.hold(file.length, 'blocked-edges/a.yaml');
    parseYaml(file, from('blocked-edges/a.yaml', { budget: bytes, held: true }));
    parseYaml(file, from('blocked-edges/b.yaml', { budget: bytes }));
    const e = limitError(() => bytes.hold(file.length, 'blocked-edges/c.yaml'));
    expect(e.message).toBe(
      'the graph image reg/graph:latest: its YAML files come to more than 10,000 bytes (at blocked-edges/c.yaml)',
    );
    expect(e.exitCode).toBe(1);

    const list = `[${Array(400).fill('1').join(',')}]`;
    const nodes = new YamlBudget('chart web', { bytes: 1_000_000, nodes: 1000 }, 2);
    parseYaml(list, from('web/values.yaml', { budget: nodes }));
    parseYaml(list, from('web/charts/a/values.yaml', { budget: nodes }));
    const n = limitError(() => parseYaml(list, from('web/charts/b/values.yaml', { budget: nodes })));
    expect(n.message).toBe(
      'chart web: its YAML files come to more than 1,000 nodes (at web/charts/b/values.yaml)',
    );
    expect(n.exitCode).toBe(2);
    // Aliases count expanded against the budget too.
    const aliased = new YamlBudget('chart web', { bytes: 1_000_000, nodes: 1000 });
    const text = `a: &a [${Array(100).fill('1').join(',')}]\nb: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n`;
    expect(limitError(() => parseYaml(text, from('v.yaml', { budget: aliased }))).message).toContain(
      'more than 1,000 nodes',
    );
  });
});

withRealdata.describe('real documents load as js-yaml loads them', () => {
  const files = [
    realdata('crds', 'hypershift.openshift.io_hostedclusters.Default.crd.yaml'),
    realdata('crds', 'hypershift.openshift.io_nodepools.Default.crd.yaml'),
    realdata('samples', 'update-graph', 'cincinnati-amd64-stable-4.13.json'),
    realdata('samples', 'release-payload', 'ocp-4.12.0-image-references.json'),
    realdata('samples', 'coreos', '4.10-installer-coreos-bootimages.configmap.yaml'),
    realdata('samples', 'cr-examples', 'assisted-service', 'agentserviceconfig-sample.yaml'),
    realdata('samples', 'fbc', 'operator-registry-foo', 'foo', 'index.yaml'),
  ];
  it.each(files)('%s', (file) => {
    const text = readFileSync(file, 'utf8');
    const opts = from(file);
    const docs = parseYamlDocuments(text, opts);
    expect(docs).toEqual(yaml.loadAll(text));
    if (docs.length === 1) {
      expect(parseYaml(text, opts)).toEqual(yaml.load(text));
      expect(loadYamlWithPositions(text, opts).value).toEqual(yaml.load(text, { schema: yaml.CORE_SCHEMA }));
    }
  });
});
