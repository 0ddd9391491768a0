import { describe, expect, it } from 'vitest';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { helmFunctions } from '../../../src/mirror/helm/template/helm-funcs.js';
import { TemplateError } from '../../../src/mirror/helm/template/errors.js';
import { MirrorError } from '../../../src/mirror/errors.js';

/** Render `text` as the template `name` with `data`, as Helm would (its functions, "<no value>" removed). */
function render(text: string, data: unknown = {}, name = 'chart/templates/t.yaml'): string {
  const set = new TemplateSet();
  set.addFunctions(helmFunctions(set));
  set.parse(name, text);
  return set.execute(name, data).replaceAll('<no value>', '');
}

function failure(text: string, data: unknown = {}, name = 'chart/templates/t.yaml'): TemplateError {
  try {
    render(text, data, name);
  } catch (e) {
    if (e instanceof TemplateError) return e;
    throw e;
  }
  throw new Error('expected a template error');
}

describe('text/template: actions, trim markers, comments', () => {
  it('trims the whitespace on the marked side only, newlines included', () => {
    expect(render('a  {{- "b" -}}  c')).toBe('abc');
    expect(render('a  {{- "b" }}  c')).toBe('ab  c');
    expect(render('a\n\n  {{ "b" -}}\n\n  c')).toBe('a\n\n  bc');
    expect(render('{{ 3 }} {{- 4 }}')).toBe('34');
  });

  it('reads {{-3}} as the number -3, not a trim marker', () => {
    expect(render('x {{-3}}')).toBe('x -3');
  });

  it('drops comments, trimming around them when marked', () => {
    expect(render('a {{/* a comment */}} b')).toBe('a  b');
    expect(render('a\n{{- /* c\nspans lines */ -}}\nb')).toBe('ab');
  });

  it('prints values as Go does: nil is "<no value>" (removed by Helm), floats in %g', () => {
    expect(render('[{{ .missing }}][{{ print .missing }}]', {})).toBe('[][<nil>]');
    expect(render('{{ .a }} {{ .b }} {{ .c }} {{ 1000000 }}', { a: 1, b: 1.5, c: 1000000 })).toBe(
      '1 1.5 1e+06 1000000',
    );
    expect(render('{{ .l }} {{ .m }}', { l: ['a', 1], m: { b: 2, a: 'x' } })).toBe('[a 1] map[a:x b:2]');
  });

  it('reads string escapes, raw strings and characters', () => {
    expect(render('{{ "a\\tb\\u00e9\\"" }}|{{ `raw\\n` }}|{{ \'a\' }}')).toBe('a\tbé"|raw\\n|97');
  });
});

describe('text/template: control structures', () => {
  it('if / else if / else follow Go truthiness', () => {
    const t = '{{ if .a }}a{{ else if .b }}b{{ else }}none{{ end }}';
    expect(render(t, { a: 'x' })).toBe('a');
    expect(render(t, { a: '', b: [1] })).toBe('b');
    for (const empty of [0, '', null, [], {}, false]) expect(render(t, { a: empty, b: empty })).toBe('none');
  });

  it('ranges over lists, maps in sorted key order, and ints, with else, break and continue', () => {
    expect(render('{{ range . }}<{{ . }}>{{ end }}', ['x', 'y'])).toBe('<x><y>');
    expect(render('{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}', { zeta: 1, alpha: 2, mid: 3 })).toBe(
      'alpha=2;mid=3;zeta=1;',
    );
    expect(render('{{ range $i, $v := . }}{{ $i }}:{{ $v }} {{ end }}', ['a', 'b'])).toBe('0:a 1:b ');
    expect(render('{{ range 3 }}{{ . }}{{ end }}')).toBe('012');
    expect(render('{{ range .none }}x{{ else }}empty{{ end }}', {})).toBe('empty');
    expect(
      render(
        '{{ range . }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}{{ end }}{{ . }}{{ end }}',
        [1, 2, 3, 4, 5].map(BigInt),
      ),
    ).toBe('13');
  });

  it('with sets dot, else and else with', () => {
    expect(render('{{ with .a }}{{ .b }}{{ end }}', { a: { b: 'in' } })).toBe('in');
    expect(render('{{ with .a }}x{{ else with .c }}{{ . }}{{ else }}none{{ end }}', { a: '', c: 'c' })).toBe(
      'c',
    );
    expect(render('{{ with .a }}x{{ else }}none{{ end }}', {})).toBe('none');
  });

  it('scopes variables to their control structure; = assigns the outer one', () => {
    expect(render('{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ end }}{{ $x }}')).toBe('2');
    expect(render('{{ range $i, $e := .l }}{{ end }}{{ $.r }}', { l: [1], r: 'root' })).toBe('root');
    expect(failure('{{ range . }}{{ end }}', 'str').message).toMatch(/range can't iterate over str/);
    expect(render('{{ with .a }}{{ $.top }}-{{ .b }}{{ end }}', { top: 'T', a: { b: 'B' } })).toBe('T-B');
    expect(() => render('{{ if true }}{{ $y := 3 }}{{ end }}{{ $y }}')).toThrow(/undefined variable "\$y"/);
  });

  it('define, template and block; template gives its own $', () => {
    const t =
      '{{ define "inner" }}[{{ . }}|{{ $ }}]{{ end }}{{ template "inner" "arg" }}{{ block "b" . }}default {{ .x }}{{ end }}';
    expect(render(t, { x: 1 })).toBe('[arg|arg]default 1');
  });
});

describe('text/template: pipelines, fields, functions', () => {
  it('passes the previous value as the last argument, chains fields of parenthesised pipelines', () => {
    expect(render('{{ "abc" | upper | printf "%s-%s" "x" }}')).toBe('x-ABC');
    expect(render('{{ (dict "a" (dict "b" 5)).a.b }}')).toBe('5');
    expect(render('{{ $.Values.image.repository }}', { Values: { image: { repository: 'r' } } })).toBe('r');
  });

  it('and/or return their deciding operand and short-circuit', () => {
    expect(render('{{ and 1 "" 2 }}|{{ or 0 "" "x" }}|{{ and .a .a.b }}', { a: null })).toBe('|x|');
    expect(render('{{ or .a.b "fallback" }}', { a: { b: 'set' } })).toBe('set');
  });

  it('a field of a missing map value is an error, as in Go', () => {
    const e = failure('x\n  {{ .Values.missing.key }}', { Values: {} });
    expect(e.code).toBe(MirrorError.HELM_TEMPLATE_EXEC);
    expect(e.message).toBe(
      'template: chart/templates/t.yaml:2:5: executing "chart/templates/t.yaml" at <.Values.missing.key>: nil pointer evaluating interface {}.key',
    );
  });

  it('eq takes several arguments; comparisons refuse mixed types', () => {
    expect(render('{{ eq "b" "a" "b" }} {{ ne 1 2 }} {{ lt 1 2 }} {{ ge "b" "a" }}')).toBe(
      'true true true true',
    );
    expect(render('{{ eq .n 3.0 }}', { n: 3 })).toBe('true');
    expect(failure('{{ eq 1 "1" }}').message).toMatch(/error calling eq: incompatible types for comparison/);
  });

  it('printf with Go verbs, widths and notes for bad operands', () => {
    expect(
      render('{{ printf "%s|%d|%v|%q|%t|%.2f|%x|%5s|%-5s|%03d" "s" 7 .f "q" true 3.14159 255 "r" "l" 7 }}', {
        f: 2.5,
      }),
    ).toBe('s|7|2.5|"q"|true|3.14|ff|    r|l    |007');
    expect(render('{{ printf "%d %s" "x" }}')).toBe('%!d(string=x) %!s(MISSING)');
  });

  it('len, index and slice', () => {
    expect(
      render('{{ len "héllo" }} {{ len .l }} {{ index .l 1 }} {{ index .m "k" }} {{ slice .l 1 }}', {
        l: ['a', 'b', 'c'],
        m: { k: 'v' },
      }),
    ).toBe('6 3 b v [b c]');
  });

  it('an unknown function is a parse error naming it, with file, line and column', () => {
    const e = failure('a: 1\nb: {{ nosuch . }}');
    expect(e.code).toBe(MirrorError.HELM_TEMPLATE_PARSE);
    expect(e.message).toBe('template: chart/templates/t.yaml:2:6: function "nosuch" not defined');
    expect(e.location).toBe('chart/templates/t.yaml:2:6');
  });

  it('parse errors: unclosed action, stray end, missing end', () => {
    expect(failure('{{ .a ').message).toMatch(/unclosed action/);
    expect(failure('{{ end }}').message).toMatch(/unexpected \{\{end\}\}/);
    expect(failure('{{ if .a }}x').message).toMatch(/unexpected EOF/);
    expect(failure('{{ break }}').message).toMatch(/\{\{break\}\} outside \{\{range\}\}/);
  });
});

describe('Helm functions', () => {
  it('define/include/nindent, the way charts build labels', () => {
    const t = `{{- define "app.labels" -}}
app: {{ .name }}
tier: web
{{- end -}}
metadata:
  labels:
    {{- include "app.labels" . | nindent 4 }}`;
    expect(render(t, { name: 'shop' })).toBe('metadata:\n  labels:\n    app: shop\n    tier: web');
  });

  it('tpl renders values as templates with the same objects and defines', () => {
    const data = {
      Values: { host: '{{ .Release.Name }}.example.com', name: 'x' },
      Release: { Name: 'rel' },
      Template: { Name: 'chart/templates/t.yaml', BasePath: 'chart/templates' },
    };
    expect(
      render(
        '{{ define "d" }}D{{ end }}{{ tpl .Values.host . }} {{ tpl "{{ include \\"d\\" . }}" . }}',
        data,
      ),
    ).toBe('rel.example.com D');
  });

  it('required and fail come through with their message kept for Helm', () => {
    const e = failure('image: {{ required "image.tag is required" .Values.tag }}', { Values: {} });
    expect(e.failure).toBe('image.tag is required');
    expect(e.message).toMatch(
      /^template: chart\/templates\/t.yaml:1:10: executing .* error calling required: image.tag is required$/,
    );
    expect(render('{{ required "x" .v }}', { v: 'ok' })).toBe('ok');

    const inner = failure('{{ define "f" }}\n{{ fail "boom" }}{{ end }}{{ include "f" . }}');
    expect(inner.failure).toBe('boom');
    // Helm names the outermost place: the include, not the fail inside it.
    expect(inner.location).toBe('chart/templates/t.yaml:2:29');
    expect(inner.message).toMatch(
      /error calling include: template: chart\/templates\/t.yaml:2:3: executing "f" at <fail "boom">/,
    );
  });

  it('default, empty, coalesce and ternary follow Go truthiness', () => {
    expect(
      render('{{ default "d" .a }}|{{ default "d" .b }}|{{ default "d" .c }}|{{ .n | default 5 }}', {
        a: '',
        b: 'v',
        c: false,
        n: 0,
      }),
    ).toBe('d|v|d|5');
    expect(
      render('{{ empty .a }} {{ empty .b }} {{ empty .c }} {{ empty .d }}', { a: {}, b: [0], c: 0, d: 'x' }),
    ).toBe('true false true false');
    expect(render('{{ coalesce .a .b "c" }} {{ ternary "y" "n" true }}', { a: null, b: '' })).toBe('c y');
  });

  it("float64 reads a string as Go's strconv.ParseFloat does, 0 where it fails (spf13/cast)", () => {
    expect(
      render(
        '{{ float64 "NaN" }} {{ float64 "+Inf" }} {{ float64 "-infinity" }} {{ float64 "0x1p-2" }} {{ float64 "2.5e3" }} {{ float64 ".5" }}',
      ),
    ).toBe('NaN +Inf -Inf 0.25 2500 0.5');
    // Spaces, digit separators without a base prefix, and overflow are errors to ParseFloat.
    expect(render('{{ float64 " 1" }} {{ float64 "1_0" }} {{ float64 "1e400" }} {{ float64 "0x10" }}')).toBe(
      '0 0 0 0',
    );
  });

  it('toToml writes a TOML document, keys sorted, that fromToml reads back; a non-map gives the error as text', () => {
    const data = { v: { z: 1n, a: { c: 'x', b: [1n, 2n] }, s: 'q"' } };
    const toml = render('{{ toToml .v }}', data);
    expect(toml).toBe('s = "q\\""\nz = 1\n\n[a]\nb = [ 1, 2 ]\nc = "x"\n');
    expect(render('{{ toToml (fromToml (toToml .v)) }}', data)).toBe(toml);
    expect(render('{{ toToml "x" }}')).not.toBe('');
  });

  it('toYaml sorts keys like Helm; fromYaml/toJson round trip', () => {
    expect(render('{{ toYaml . }}', { b: [1, 'x'], a: { d: 'true', c: null } })).toBe(
      'a:\n  c: null\n  d: "true"\nb:\n- 1\n- x',
    );
    expect(render('{{ (fromYaml "a: [1, 2]\\nb: <x>").b }} {{ toJson (fromYaml "z: 1\\na: <b>") }}')).toBe(
      '<x> {"a":"\\u003cb\\u003e","z":1}',
    );
    expect(render('{{ hasKey (fromYaml "[1") "Error" }}')).toBe('true');
    expect(render('{{ toPrettyJson (dict "k" (list 1 2)) }}')).toBe('{\n  "k": [\n    1,\n    2\n  ]\n}');
  });

  it('string, list and dict functions', () => {
    expect(
      render(
        '{{ trunc 5 "abcdefgh" }} {{ trunc -3 "abcdefgh" }} {{ trimSuffix "-" "a-" }} {{ title "hello world" }}',
      ),
    ).toBe('abcde fgh a Hello World');
    expect(
      render(
        '{{ quote "a\\"b" 1 }} {{ squote "x" }} {{ replace "." "-" "a.b.c" }} {{ splitList "," "a,b" | join "+" }}',
      ),
    ).toBe(`"a\\"b" "1" 'x' a-b-c a+b`);
    expect(
      render(
        '{{ (split "." "a.b")._1 }} {{ list 3 1 2 | sortAlpha }} {{ list 1 1 2 | uniq }} {{ without (list 1 2 3) 2 }}',
      ),
    ).toBe('b [1 2 3] [1 2] [1 3]');
    expect(
      render(
        '{{ $d := dict "a" 1 }}{{ $_ := set $d "b" 2 }}{{ keys $d }} {{ hasKey $d "a" }} {{ get $d "zz" }}|{{ pick $d "b" }} {{ omit $d "b" }}',
      ),
    ).toBe('[a b] true |map[b:2] map[a:1]');
    expect(render('{{ merge (dict "a" 1 "n" (dict "x" 1)) (dict "a" 2 "b" 3 "n" (dict "y" 2)) }}')).toBe(
      'map[a:1 b:3 n:map[x:1 y:2]]',
    );
    expect(render('{{ mergeOverwrite (dict "a" 1) (dict "a" 2) }}')).toBe('map[a:2]');
    expect(
      render(
        '{{ until 3 }} {{ untilStep 1 10 4 }} {{ first (list 1 2) }} {{ last (list 1 2) }} {{ rest (list 1 2 3) }} {{ has 2 (list 1 2) }}',
      ),
    ).toBe('[0 1 2] [1 5 9] 1 2 [2 3] true');
    expect(
      render(
        '{{ add 1 2 3 }} {{ sub 5 7 }} {{ mul 2 3 }} {{ div 7 2 }} {{ mod 7 3 }} {{ max 1 5 2 }} {{ add1 .n }}',
        { n: 1.9 },
      ),
    ).toBe('6 -2 6 3 1 5 2');
    expect(
      render(
        '{{ int "42" }} {{ atoi "x" }} {{ float64 "1.5" }} {{ toString 5 }} {{ b64enc "hi" }} {{ b64dec "aGk=" }}',
      ),
    ).toBe('42 0 1.5 5 aGk= hi');
    expect(
      render(
        '{{ sha256sum "a" | trunc 8 }} {{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }} {{ regexMatch "^v[0-9]+" "v12" }}',
      ),
    ).toBe('ca978112 -W-xxW- true');
    // RE2's own syntax and Go's results: (?i), named groups, FindAll limits, Split's rules.
    expect(
      render(
        '{{ regexMatch `(?i)^V\\d+$` "v12" }} {{ regexReplaceAll `(?P<k>\\w+)=(?P<v>\\w+)` "a=1 b=2" "${v}:${k}" }} {{ regexFindAll "[0-9]+" "a1b22c333" 2 | join "," }} {{ regexFind "b+" "abbbc" }}',
      ),
    ).toBe('true 1:a 2:b 1,22 bbb');
    expect(
      render(
        '{{ regexSplit "a*" "baaac" -1 | join "|" }} {{ regexSplit "," "a,b,c" 2 | join "|" }} {{ regexSplit "," "" -1 | len }} {{ regexSplit "z+" "abc" 0 | len }}',
      ),
    ).toBe('b|c a|b,c 1 0');
    expect(
      render(
        '{{ kindOf .m }} {{ kindOf .l }} {{ kindOf .f }} {{ kindOf 1 }} {{ kindIs "string" "x" }} {{ typeOf .m }}',
        { m: {}, l: [], f: 1 },
      ),
    ).toBe('map slice float64 int true map[string]interface {}');
    expect(render('{{ lookup "v1" "Secret" "ns" "name" | len }}')).toBe('0');
    expect(render('{{ randAlphaNum 10 | len }}')).toBe('10');
  });

  it('semverCompare with Masterminds constraints', () => {
    const cases: [string, string, boolean][] = [
      ['>=1.21-0', 'v1.22.3-gke.1', true],
      ['>=1.21', 'v1.22.3-gke.1', false],
      ['>=1.19-0', 'v1.31.0', true],
      ['<1.19', '1.18.9', true],
      ['~1.2.3', '1.2.9', true],
      ['~1.2.3', '1.3.0', false],
      ['^1.2', '1.9.0', true],
      ['^1.2', '2.0.0', false],
      ['^0.2.3', '0.2.9', true],
      ['^0.2.3', '0.3.0', false],
      ['1.2.x', '1.2.7', true],
      ['1.2.x', '1.3.0', false],
      ['>=1.0 <2.0 || >=3.0', '3.1.0', true],
      ['>=1.0, <2.0 || >=3.0', '2.5.0', false],
      ['1.1 - 1.3', '1.3.0', true],
      ['!=1.2.3', '1.2.3', false],
      ['*', '7.0.0', true],
    ];
    for (const [c, v, want] of cases)
      expect(render(`{{ semverCompare "${c}" "${v}" }}`), `${c} ${v}`).toBe(String(want));
    expect(render('{{ (semver "1.2.3-rc.1").Minor }} {{ (semver "v2.0").Major }}')).toBe('2 2');
    expect(failure('{{ semverCompare ">=1" "not-a-version" }}').message).toMatch(/Invalid Semantic Version/);
  });
});
