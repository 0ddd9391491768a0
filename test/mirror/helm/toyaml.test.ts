import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChart, renderChart } from '../../../src/mirror/helm/chart.js';
import { imagesOf } from '../../../src/mirror/helm/images.js';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { helmFunctions } from '../../../src/mirror/helm/template/helm-funcs.js';
import { TemplateError } from '../../../src/mirror/helm/template/errors.js';
import { writeChart } from '../../fixtures/helm/charts.js';
import { TEMPO_DISTRIBUTED } from '../../fixtures/helm/corpus/toyaml.js';

/** Render `text` with Helm's functions, as a chart template would. */
function render(text: string, data: unknown = {}): string {
  const set = new TemplateSet();
  set.addFunctions(helmFunctions(set));
  set.parse('chart/templates/t.yaml', text);
  return set.execute('chart/templates/t.yaml', data);
}

const toYaml = (v: unknown) => render('{{ toYaml .v }}', { v });
const toYamlPretty = (v: unknown) => render('{{ toYamlPretty .v }}', { v });

const w = 'aaaaaaaaa';
const words = (n: number) => Array<string>(n).fill(w).join(' ');

/** Values and what Helm's toYaml writes for them (go-yaml v2's rules, after Helm trims the last newline). */
const TO_YAML: [string, unknown, string][] = [
  ['nil', null, 'null'],
  ['a bool', true, 'true'],
  ['an empty map', {}, '{}'],
  ['an empty list', [], '[]'],
  ['empty collections as values', { a: {}, b: [] }, 'a: {}\nb: []'],
  ['a plain string', 'hello world', 'hello world'],
  ['the empty string, double-quoted (it reads as null)', '', '""'],
  ['an empty key', { '': 1 }, '"": 1'],
  ['a key that reads as a bool', { n: 1, true: 2 }, '"n": 1\n"true": 2'],
  ['a key with an indicator, single-quoted', { 'key: x': 1 }, "'key: x': 1"],
  [
    'a template action: single quotes keep its double quotes',
    '{{ include "x" . }}',
    '\'{{ include "x" . }}\'',
  ],
  ['a wildcard host', ['*.apps.example.com'], "- '*.apps.example.com'"],
  [
    'anchor, tag, directive, at-sign and backquote starts',
    ['&a', '!b', '%c', '@d', '`e`'],
    "- '&a'\n- '!b'\n- '%c'\n- '@d'\n- '`e`'",
  ],
  [
    'flow indicators at the start only',
    ['[a]', 'a[b]', '{x', 'a,b', ','],
    "- '[a]'\n- a[b]\n- '{x'\n- a,b\n- ','",
  ],
  ['a comment sign after a space, not inside a word', ['a #b', 'a#b', '#x'], "- 'a #b'\n- a#b\n- '#x'"],
  [
    'a colon before a space, not before a letter',
    ['key: value', 'http://x:80', ':x'],
    "- 'key: value'\n- http://x:80\n- :x",
  ],
  [
    'a dash or question mark alone or before a space',
    ['-', '- item', '-flag', '?', '? q'],
    "- '-'\n- '- item'\n- -flag\n- '?'\n- '? q'",
  ],
  ['document markers', ['---', '...x', '--x'], "- '---'\n- '...x'\n- --x"],
  [
    'block indicators and quotes at the start',
    ['|', '>', '"dq"', "'sq'"],
    "- '|'\n- '>'\n- '\"dq\"'\n- '''sq'''",
  ],
  ['an apostrophe inside stays plain', "it's", "it's"],
  ['leading and trailing spaces, single-quoted', { a: ' lead', b: 'trail ' }, "a: ' lead'\nb: 'trail '"],
  [
    'YAML 1.1 booleans, double-quoted',
    ['y', 'n', 'yes', 'No', 'ON', 'off', 'True', 'FALSE'],
    '- "y"\n- "n"\n- "yes"\n- "No"\n- "ON"\n- "off"\n- "True"\n- "FALSE"',
  ],
  ['nulls, double-quoted', ['null', 'Null', '~'], '- "null"\n- "Null"\n- "~"'],
  [
    'integers in Go syntax, double-quoted',
    ['1', '-1', '+12', '0x10', '0o17', '0b101', '0755', '1_000'],
    '- "1"\n- "-1"\n- "+12"\n- "0x10"\n- "0o17"\n- "0b101"\n- "0755"\n- "1_000"',
  ],
  [
    'floats, double-quoted',
    ['1.0', '1.', '.5', '1e3', '1E3', '08', '.inf', '-.Inf', '.NaN'],
    '- "1.0"\n- "1."\n- ".5"\n- "1e3"\n- "1E3"\n- "08"\n- ".inf"\n- "-.Inf"\n- ".NaN"',
  ],
  [
    'timestamps, double-quoted',
    ['2024-01-02', '2024-1-2T3:04:05Z', '2001-12-14 21:59:43.10', '2015-02-24T18:19:39+01:00'],
    '- "2024-01-02"\n- "2024-1-2T3:04:05Z"\n- "2001-12-14 21:59:43.10"\n- "2015-02-24T18:19:39+01:00"',
  ],
  [
    'sexagesimal numbers, double-quoted',
    ['1:30', '-1:30:00', '190:20:30.15'],
    '- "1:30"\n- "-1:30:00"\n- "190:20:30.15"',
  ],
  [
    'near misses stay plain',
    ['yes please', '1.2.3', '0x', '1e', 'v1.0', '.5.5', 'nullable', '12:60', '<<'],
    '- yes please\n- 1.2.3\n- 0x\n- 1e\n- v1.0\n- .5.5\n- nullable\n- 12:60\n- <<',
  ],
  [
    'dates that are no dates stay plain',
    ['2024-13-01', '2024-02-30', '2024-01-02T10:00:00'],
    '- 2024-13-01\n- 2024-02-30\n- 2024-01-02T10:00:00',
  ],
  [
    'control characters, escaped',
    ['tab\there', '\0', 'bell\x07', '\x1b[0m', 'del\x7f', 'a\rb', '\u0085', '\u0080'],
    '- "tab\\there"\n- "\\0"\n- "bell\\a"\n- "\\e[0m"\n- "del\\x7F"\n- "a\\rb"\n- "\\N"\n- "\\x80"',
  ],
  [
    'unicode: the BMP plain, past it escaped',
    ['café', '你好', 'hi 😀'],
    '- café\n- 你好\n- "hi \\U0001F600"',
  ],
  ['a leading byte-order mark escapes the whole text', '\ufeffbom', '"\\uFEFF\\x62\\x6F\\x6D"'],
  ['a multi-line string: literal, strip', 'a\nb', '|-\n  a\n  b'],
  ['a multi-line string: literal, clip', { k: 'a\nb\n' }, 'k: |\n  a\n  b'],
  ['a multi-line string: literal, keep (Helm trims one newline)', { k: 'a\n\n' }, 'k: |+\n  a\n'],
  [
    'a literal that starts with a space or a newline has an indent hint',
    { k: ' a\nb', l: '\na' },
    'k: |2-\n   a\n  b\nl: |2-\n\n  a',
  ],
  ['a space after a newline stays in a literal block', { k: 'a\n b' }, 'k: |-\n  a\n   b'],
  ['a space after a line separator: double-quoted', { k: 'a\u2028 b' }, 'k: "a\\L b"'],
  ['a space before a newline: double-quoted', { k: 'a \nb' }, 'k: "a \\nb"'],
  ['a tab in a multi-line string: double-quoted', { k: 'x\ty\nz' }, 'k: "x\\ty\\nz"'],
  ['a carriage return: double-quoted', { k: 'a\r\nb' }, 'k: "a\\r\\nb"'],
  ['a multi-line key is a complex key', { 'a\nb': 1 }, '? |-\n  a\n  b\n: 1'],
  ['a key over 128 bytes is a complex key', { ['k'.repeat(130)]: 'v' }, `? ${'k'.repeat(130)}\n: v`],
  [
    'keys in go-yaml order',
    Object.fromEntries(
      ['b', 'a', 'B', '_x', '1', '10', '9', 'a10', 'a9', 'a-b', 'a_', 'ab'].map((k) => [k, 1]),
    ),
    '_x: 1\n"1": 1\n"9": 1\n"10": 1\nB: 1\na: 1\na-b: 1\na_: 1\na9: 1\na10: 1\nab: 1\nb: 1',
  ],
  ['a list under a key is not indented', { v: ['A', 'B'] }, 'v:\n- A\n- B'],
  [
    'lists of lists and maps',
    [[1, 2], [3], { a: 1, b: 2 }, [], {}],
    '- - 1\n  - 2\n- - 3\n- a: 1\n  b: 2\n- []\n- {}',
  ],
  ['a list in a map in a list', { v: [{ x: [1] }] }, 'v:\n- x:\n  - 1'],
  ['a literal in a list', { v: ['a\nb'] }, 'v:\n- |-\n  a\n  b'],
  [
    'integers as JSON gives them back',
    { a: 1000000, b: 1e19, c: 2 ** 63, d: -0, e: 5n },
    'a: 1000000\nb: 10000000000000000000\nc: 9223372036854776000\nd: 0\ne: 5',
  ],
  [
    'floats in Go %g',
    { a: 1.5, b: 1234567.5, c: 0.0001, d: 0.00001, e: 1e-7, f: 1e20, g: 1e21, h: -1e19 },
    'a: 1.5\nb: 1.2345675e+06\nc: 0.0001\nd: 1e-05\ne: 1e-07\nf: 1e+20\ng: 1e+21\nh: -1e+19',
  ],
  ['bytes as base64', new Uint8Array([104, 105]), 'aGk='],
  [
    'a long plain string folds at the first space past column 80',
    { k: words(20) },
    `k: ${words(8)}\n  ${words(8)}\n  ${words(4)}`,
  ],
  ['a long single-quoted string folds too', { k: `@${words(9)} end` }, `k: '@${words(8)}\n  ${w} end'`],
  [
    'a long double-quoted string folds too',
    { k: `\t${words(20)}` },
    `k: "\\t${words(8)}\n  ${words(8)}\n  ${words(4)}"`,
  ],
  [
    'doubled quotes count toward the width',
    { k: `@${"'".repeat(40)} ${'x'.repeat(30)}` },
    `k: '@${"''".repeat(40)}\n  ${'x'.repeat(30)}'`,
  ],
  ['a long word never folds', { k: 'x'.repeat(100) }, `k: ${'x'.repeat(100)}`],
];

describe("toYaml writes what Helm's go-yaml v2 writes", () => {
  it.each(TO_YAML)('%s', (_name, value, expected) => {
    expect(toYaml(value)).toBe(expected);
  });

  it('has a case for every rule', () => {
    expect(TO_YAML.length).toBeGreaterThanOrEqual(40);
  });

  it('gives "" for a value JSON cannot hold; mustToYaml says why', () => {
    expect(render('[{{ toYaml (float64 "NaN") }}]')).toBe('[]');
    expect(() => render('{{ mustToYaml (float64 "NaN") }}')).toThrow(TemplateError);
    expect(() => render('{{ mustToYaml (float64 "NaN") }}')).toThrow(/json: unsupported value: NaN/);
  });

  it('writes a template action so that tpl reads it back', () => {
    const data = {
      Values: { a: { name: '{{ .Values.x | upper }}', args: ['--x={{ printf "%s" "y" }}'] }, x: 'ok' },
      Template: { Name: 't' },
    };
    expect(render('{{ tpl (toYaml .Values.a) . }}', data)).toBe("args:\n- --x=y\nname: 'OK'");
  });
});

describe("toYamlPretty writes what Helm's go-yaml v3 encoder (indent 2) writes", () => {
  it('indents lists under their key, writes float64 in %g and never folds', () => {
    expect(toYamlPretty({ a: [1, 2], b: { c: [{ d: 'x' }] } })).toBe(
      'a:\n  - 1\n  - 2\nb:\n  c:\n    - d: x',
    );
    expect(toYamlPretty({ n: 1000000, i: 5n, f: 0.5, nan: NaN, inf: -Infinity })).toBe(
      'f: 0.5\ni: 5\ninf: -.inf\n"n": 1e+06\nnan: .nan',
    );
    expect(toYamlPretty({ k: words(20) })).toBe(`k: ${words(20)}`);
  });

  it('quotes as v2 does, but keeps a tab in a literal block', () => {
    expect(toYamlPretty(['yes', 'on', '1.0', '', '{{ x }}', 'x\ty\nz', 'tab\there'])).toBe(
      '- "yes"\n- "on"\n- "1.0"\n- ""\n- \'{{ x }}\'\n- |-\n  x\ty\n  z\n- "tab\\there"',
    );
  });

  it("orders keys with v3's change (a letter before a non-letter after digits)", () => {
    expect(toYamlPretty({ a1_: 1, a1b: 2 })).toBe('a1b: 2\na1_: 1');
    expect(toYaml({ a1_: 1, a1b: 2 })).toBe('a1_: 1\na1b: 2');
  });

  it('writes bytes as a list of numbers', () => {
    expect(toYamlPretty(new Uint8Array([1, 2]))).toBe('- 1\n- 2');
  });
});

describe('a chart shaped like tempo-distributed, tpl-ing the toYaml of values that hold includes', () => {
  let tmp: string;
  beforeAll(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'airgap-toyaml-'));
  });
  afterAll(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  it('renders and yields its images, the ones in tpl-ed values too', async () => {
    const chart = await loadChart(await writeChart(join(tmp, 'tempo-distributed'), TEMPO_DISTRIBUTED));
    const { manifests } = renderChart(chart, { releaseName: 'tempo' });
    expect(imagesOf(manifests).map((i) => i.image)).toEqual([
      'docker.io/grafana/tempo:2.6.0',
      'docker.io/grafana/tempo-vulture:2.6.0',
    ]);
    const ingester = manifests.find((m) => m.template.endsWith('statefulset-ingester.yaml'))!.text;
    expect(ingester).toContain("memberlist.grafana.com/ring: 'tempo-tempo-distributed-gossip-ring'");
    expect(ingester).toContain('- -tempo-push-url=http://tempo-tempo-distributed-distributor');
    const [overrides, runtime] = manifests
      .filter((m) => m.template.endsWith('configmap-overrides.yaml'))
      .flatMap((m) => m.text.split(/^---$/m).map((t) => load(t) as { data: unknown }));
    expect(overrides!.data).toEqual({
      'overrides.yaml': 'overrides:\n  tenant-a:\n    ingestion_rate_limit_bytes: 15000000\n',
    });
    // No file matched: Helm's AsConfig of an empty map is `{}`.
    expect(runtime!.data).toEqual({});
  });
});
