/**
 * The template engine's budget against hostile charts: huge lists and strings are refused before
 * they are built, endless loops and recursion stop within seconds, and each says in one short line
 * which template and line ran out and of what. Real templates still render.
 */
import { describe, expect, it } from 'vitest';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { helmFunctions } from '../../../src/mirror/helm/template/helm-funcs.js';
import { MirrorError } from '../../../src/mirror/errors.js';
import { blockedMatcher } from '../../../src/mirror/plan.js';
import { AirgapError } from '../../../src/util/errors.js';

const FILE = 'hostile/templates/cm.yaml';
const HELPERS = 'hostile/templates/_helpers.tpl';
/**
 * What a hostile template may take: a bound on "stops", not a speed goal (speed is measured in
 * bench/). Without the budget these templates run for hours; under it they stop in well under a
 * second, and a shared machine at a load of 10 must not make that a failure.
 */
const SECONDS = 15_000;

/** A chart's template set: `files` (name → text) parsed as the chart renderer parses them. */
function chartSet(files: Record<string, string>): TemplateSet {
  const set = new TemplateSet();
  set.addFunctions(helmFunctions(set));
  for (const [name, text] of Object.entries(files)) set.parse(name, text);
  return set;
}

/** Render `text` as FILE (beside `helpers`), expecting the budget to stop it: the error and the time it took. */
function stopped(text: string, helpers?: string, data: unknown = {}): { error: AirgapError; ms: number } {
  const set = chartSet({ ...(helpers ? { [HELPERS]: helpers } : {}), [FILE]: text });
  const start = performance.now();
  try {
    set.execute(FILE, data);
  } catch (e) {
    if (!(e instanceof AirgapError)) throw e;
    return { error: e, ms: performance.now() - start };
  }
  throw new Error('expected the template engine to stop the template');
}

function render(text: string, data: unknown = {}): string {
  return chartSet({ [FILE]: text })
    .execute(FILE, data)
    .replaceAll('<no value>', '');
}

/** Values for tpl, which needs .Template.Name. */
const tplData = (values: Record<string, unknown>) => ({
  Values: values,
  Template: { Name: FILE, BasePath: 'hostile/templates' },
});

describe('the template budget: lists and strings are checked before they are built', () => {
  it('refuses `range until 100000000` at once, naming the template, the line and the limit', () => {
    const { error, ms } = stopped(
      'kind: ConfigMap\ndata:\n{{- range until 100000000 }}\n  x: y\n{{- end }}\n',
    );
    expect(error.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(error.message).toBe(
      'hostile/templates/cm.yaml:3: the template engine stopped: until 100000000 would build a list of 100000000 items, over the limit of 1000000',
    );
    expect(ms).toBeLessThan(SECONDS);
  });

  it('refuses untilStep, seq and a range over an int as big', () => {
    expect(stopped('{{ untilStep 0 100000000 1 }}').error.message).toBe(
      'hostile/templates/cm.yaml:1: the template engine stopped: untilStep 0 100000000 1 would build a list of 100000000 items, over the limit of 1000000',
    );
    expect(stopped('a\n{{ seq 100000000 }}').error.message).toBe(
      'hostile/templates/cm.yaml:2: the template engine stopped: seq 100000000 would build a list of 100000000 items, over the limit of 1000000',
    );
    expect(stopped('{{ range 100000000 }}x{{ end }}').error.message).toBe(
      'hostile/templates/cm.yaml:1: the template engine stopped: range over 100000000 items is over the limit of 1000000 items',
    );
  });

  it('refuses `repeat 1000000000 "x"`, a huge indent and a huge random string before building them', () => {
    const { error, ms } = stopped('data: {{ repeat 1000000000 "x" }}');
    expect(error.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(error.message).toBe(
      'hostile/templates/cm.yaml:1: the template engine stopped: repeat 1000000000 would build a string of 1000000000 characters, over the limit of 16777216',
    );
    expect(ms).toBeLessThan(SECONDS);
    expect(stopped('{{ "x" | nindent 1000000000 }}').error.message).toMatch(
      /:1: the template engine stopped: indent 1000000000 would build a string of 1000000001 characters/,
    );
    expect(stopped('{{ randAlphaNum 100000000 }}').error.message).toMatch(
      /:1: the template engine stopped: randAlphaNum 100000000 would build a string of 100000000 characters/,
    );
  });

  it('refuses a printf width over a million as Go does, instead of padding a gigabyte', () => {
    expect(render('{{ printf "%*d|%-*d|%5d" 1000000000 1 -3 2 3 }}')).toBe('%!(BADWIDTH)1|2  |    3');
  });

  it('does int arithmetic in 64 bits, as Go does (a product in a loop stays small)', () => {
    expect(render('{{ mul 9223372036854775807 2 }} {{ add1 9223372036854775807 }}')).toBe(
      '-2 -9223372036854775808',
    );
    expect(render('{{ $x := 1 }}{{ range until 100 }}{{ $x = mul $x 3 }}{{ end }}{{ $x }}')).toBe(
      String(BigInt.asIntN(64, 3n ** 100n)),
    );
  });
});

describe('the template budget: steps, output and nesting', () => {
  it('stops three nested `range until 10000` within seconds, at the template and line where it ran out', () => {
    const { error, ms } = stopped(
      [
        'kind: ConfigMap',
        'data:',
        '{{- range $i := until 10000 }}',
        '{{- range $j := until 10000 }}',
        '{{- range $k := until 10000 }}',
        '  k{{ $i }}-{{ $j }}-{{ $k }}: x',
        '{{- end }}{{ end }}{{ end }}',
        '',
      ].join('\n'),
    );
    expect(error.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(error.message).toMatch(
      /^hostile\/templates\/cm\.yaml:[56]: the template engine stopped: over 10000000 steps \(template actions, range iterations, function calls and the data they handle\)$/,
    );
    expect(ms).toBeLessThan(SECONDS);
  });

  it('makes a list grown by append in a loop pay for every copy', () => {
    const { error, ms } = stopped('{{ $l := list }}{{ range until 1000000 }}{{ $l = append $l . }}{{ end }}');
    expect(error.message).toMatch(
      /^hostile\/templates\/cm\.yaml:1: the template engine stopped: over 10000000 steps/,
    );
    expect(ms).toBeLessThan(SECONDS);
  });

  it('stops a chart writing more than 64 MiB', () => {
    const { error, ms } = stopped('{{ $s := repeat 10000000 "x" }}\n{{ range until 100 }}{{ $s }}{{ end }}');
    expect(error.message).toBe(
      'hostile/templates/cm.yaml:2: the template engine stopped: the templates wrote over 64 MiB (67108864 characters)',
    );
    expect(ms).toBeLessThan(SECONDS);
  });

  it('names a template that includes itself once, in one short line', () => {
    const { error, ms } = stopped(
      'data: {{ include "a" . }}\n',
      '{{- define "a" -}}\n{{ include "a" . | nindent 2 }}\n{{- end -}}\n',
    );
    expect(error.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(error.message).toBe(
      'hostile/templates/_helpers.tpl:2: include "a" → "a" recurses (nesting over 100 levels)',
    );
    expect(ms).toBeLessThan(SECONDS);
  });

  it('names two templates that include each other as one loop', () => {
    const { error } = stopped(
      'data: {{ include "a" . }}\n',
      '{{- define "a" }}{{ include "b" . }}{{ end }}\n{{- define "b" }}{{ include "a" . }}{{ end }}\n',
    );
    expect(error.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(error.message).toBe(
      'hostile/templates/_helpers.tpl:1: include "b" → "a" → "b" recurses (nesting over 100 levels)',
    );
    expect(error.message.length).toBeLessThan(300);
  });

  it('names a tpl that evaluates itself, its text cut short', () => {
    const loop = `{{ tpl .Values.again . }}{{/* ${'padding '.repeat(200)} */}}`;
    const { error, ms } = stopped('data: {{ tpl .Values.again . }}\n', undefined, tplData({ again: loop }));
    expect(error.code).toBe(MirrorError.HELM_TEMPLATE_BUDGET);
    expect(error.message).toBe(
      'hostile/templates/cm.yaml:1: tpl "{{ tpl .Values.again . }}{{/* padding p…" → "{{ tpl .Values.again . }}{{/* padding p…" recurses (nesting over 100 levels)',
    );
    expect(error.message.length).toBeLessThan(300);
    expect(ms).toBeLessThan(SECONDS);
  });

  it('names a template call loop through {{ template }} as well', () => {
    const { error } = stopped('{{ template "a" . }}', '{{ define "a" }}{{ template "a" . }}{{ end }}');
    expect(error.message).toBe(
      'hostile/templates/_helpers.tpl:1: template "a" → "a" recurses (nesting over 100 levels)',
    );
  });
});

describe('the template budget: real templates are far inside it', () => {
  it('renders helpers nested 30 deep, ranges of thousands, and big toYaml and tpl', () => {
    const helpers: Record<string, string> = {};
    for (let i = 0; i < 30; i++)
      helpers[`hostile/templates/_h${i}.tpl`] =
        i === 29
          ? '{{ define "h29" }}deep{{ end }}'
          : `{{ define "h${i}" }}{{ include "h${i + 1}" . }}{{ end }}`;
    const values = {
      items: Array.from({ length: 2000 }, (_, i) => ({ name: `n${i}`, image: `quay.io/x/y:${i}` })),
    };
    const set = chartSet({
      ...helpers,
      [FILE]: [
        'deep: {{ include "h0" . }}',
        '{{- range $i, $e := .Values.items }}',
        '{{- if eq (mod $i 500) 0 }}',
        'item{{ $i }}: {{ tpl "{{ .Values.items | len }}" $ }}',
        '{{- end }}',
        '{{- end }}',
        'yaml: {{ toYaml .Values | sha256sum }}',
        'seq: {{ until 5000 | len }}',
      ].join('\n'),
    });
    const out = set.execute(FILE, tplData(values));
    expect(out).toContain('deep: deep');
    expect(out).toContain('item1500: 2000');
    expect(out).toMatch(/yaml: [0-9a-f]{64}/);
    expect(out).toContain('seq: 5000');
  });
});

describe('regular expressions from charts and configurations run in linear time, as RE2 runs them', () => {
  const nearMiss = `${'a'.repeat(40)}!`;

  it('a catastrophic pattern in regexMatch answers at once', () => {
    const start = performance.now();
    expect(render(`{{ regexMatch "^(a+)+$" ${JSON.stringify(nearMiss)} }}`)).toBe('false');
    expect(performance.now() - start).toBeLessThan(SECONDS);
  });

  it('a catastrophic blockedImages pattern answers at once', () => {
    const blocked = blockedMatcher([{ name: '(?i)^(a+)+$' }]);
    const start = performance.now();
    expect(blocked(nearMiss)).toBeUndefined();
    expect(blocked('AAA')).toBe('(?i)^(a+)+$');
    expect(performance.now() - start).toBeLessThan(SECONDS);
  });
});
