/**
 * The parser against the cases of Go's text/template/parse tests (parseTests, errorTests,
 * numberTests, isEmptyTests, the keyword/function and block tests), re-expressed against our
 * parseTemplate: a tree is compared as Go's String() writes it (text quoted), an error by the
 * text Go's error carries. Left out: complex numbers (the engine refuses them: Helm's values never
 * hold one) and uints (ours are int64); Go's ParseComments mode (comments are not kept).
 */
import { describe, expect, it } from 'vitest';
import { listString } from '../../../src/mirror/helm/template/ast.js';
import { goQuote } from '../../../src/mirror/helm/template/fmt.js';
import { parseTemplate } from '../../../src/mirror/helm/template/parser.js';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';

const FUNCS = new Set(['printf', 'contains']);

function tree(src: string, funcs = FUNCS): string {
  return listString(parseTemplate('test', src, (n) => funcs.has(n)).main.root, goQuote);
}

function parseError(src: string, name = 'test', funcs = FUNCS): string {
  try {
    parseTemplate(name, src, (n) => funcs.has(n));
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`expected a parse error for ${JSON.stringify(src)}`);
}

describe('Go parseTests: trees', () => {
  it.each<[string, string, string]>([
    ['empty', '', ''],
    ['comment', '{{/*\n\n\n*/}}', ''],
    ['spaces', ' \t\n', '" \\t\\n"'],
    ['text', 'some text', '"some text"'],
    ['field', '{{.X}}', '{{.X}}'],
    ['simple command', '{{printf}}', '{{printf}}'],
    ['$ invocation', '{{$}}', '{{$}}'],
    ['variable invocation', '{{with $x := 3}}{{$x 23}}{{end}}', '{{with $x := 3}}{{$x 23}}{{end}}'],
    ['variable with fields', '{{$.I}}', '{{$.I}}'],
    ['multi-word command', '{{printf `%d` 23}}', '{{printf `%d` 23}}'],
    ['pipeline', '{{.X|.Y}}', '{{.X | .Y}}'],
    ['pipeline with decl', '{{$x := .X|.Y}}', '{{$x := .X | .Y}}'],
    ['nested pipeline', '{{.X (.Y .Z) (.A | .B .C) (.E)}}', '{{.X (.Y .Z) (.A | .B .C) (.E)}}'],
    ['field applied to parentheses', '{{(.Y .Z).Field}}', '{{(.Y .Z).Field}}'],
    ['simple if', '{{if .X}}hello{{end}}', '{{if .X}}"hello"{{end}}'],
    ['if with else', '{{if .X}}true{{else}}false{{end}}', '{{if .X}}"true"{{else}}"false"{{end}}'],
    [
      'if with else if',
      '{{if .X}}true{{else if .Y}}false{{end}}',
      '{{if .X}}"true"{{else}}{{if .Y}}"false"{{end}}{{end}}',
    ],
    [
      'if else chain',
      '+{{if .X}}X{{else if .Y}}Y{{else if .Z}}Z{{end}}+',
      '"+"{{if .X}}"X"{{else}}{{if .Y}}"Y"{{else}}{{if .Z}}"Z"{{end}}{{end}}{{end}}"+"',
    ],
    ['simple range', '{{range .X}}hello{{end}}', '{{range .X}}"hello"{{end}}'],
    ['chained field range', '{{range .X.Y.Z}}hello{{end}}', '{{range .X.Y.Z}}"hello"{{end}}'],
    [
      'nested range',
      '{{range .X}}hello{{range .Y}}goodbye{{end}}{{end}}',
      '{{range .X}}"hello"{{range .Y}}"goodbye"{{end}}{{end}}',
    ],
    ['range with else', '{{range .X}}true{{else}}false{{end}}', '{{range .X}}"true"{{else}}"false"{{end}}'],
    [
      'range over pipeline',
      '{{range .X|.M}}true{{else}}false{{end}}',
      '{{range .X | .M}}"true"{{else}}"false"{{end}}',
    ],
    ['range []int', '{{range .SI}}{{.}}{{end}}', '{{range .SI}}{{.}}{{end}}'],
    ['range 1 var', '{{range $x := .SI}}{{.}}{{end}}', '{{range $x := .SI}}{{.}}{{end}}'],
    ['range 2 vars', '{{range $x, $y := .SI}}{{.}}{{end}}', '{{range $x, $y := .SI}}{{.}}{{end}}'],
    ['range with break', '{{range .SI}}{{.}}{{break}}{{end}}', '{{range .SI}}{{.}}{{break}}{{end}}'],
    ['range with continue', '{{range .SI}}{{.}}{{continue}}{{end}}', '{{range .SI}}{{.}}{{continue}}{{end}}'],
    // Go's case has -3.2i too: complex numbers are left out.
    [
      'constants',
      "{{range .SI 1 -3.2 true false 'a' nil}}{{end}}",
      "{{range .SI 1 -3.2 true false 'a' nil}}{{end}}",
    ],
    ['template', '{{template `x`}}', '{{template "x"}}'],
    ['template with arg', '{{template `x` .Y}}', '{{template "x" .Y}}'],
    ['with', '{{with .X}}hello{{end}}', '{{with .X}}"hello"{{end}}'],
    [
      'with with else',
      '{{with .X}}hello{{else}}goodbye{{end}}',
      '{{with .X}}"hello"{{else}}"goodbye"{{end}}',
    ],
    [
      'with with else with',
      '{{with .X}}hello{{else with .Y}}goodbye{{end}}',
      '{{with .X}}"hello"{{else}}{{with .Y}}"goodbye"{{end}}{{end}}',
    ],
    [
      'with else chain',
      '{{with .X}}X{{else with .Y}}Y{{else with .Z}}Z{{end}}',
      '{{with .X}}"X"{{else}}{{with .Y}}"Y"{{else}}{{with .Z}}"Z"{{end}}{{end}}{{end}}',
    ],
    ['trim left', 'x \r\n\t{{- 3}}', '"x"{{3}}'],
    ['trim right', '{{3 -}}\n\n\ty', '{{3}}"y"'],
    ['trim left and right', 'x \r\n\t{{- 3 -}}\n\n\ty', '"x"{{3}}"y"'],
    ['trim with extra spaces', 'x\n{{-  3   -}}\ny', '"x"{{3}}"y"'],
    ['comment trim left', 'x \r\n\t{{- /* hi */}}', '"x"'],
    ['comment trim right', '{{/* hi */ -}}\n\n\ty', '"y"'],
    ['comment trim left and right', 'x \r\n\t{{- /* */ -}}\n\n\ty', '"x""y"'],
    ['block definition', '{{block "foo" .}}hello{{end}}', '{{template "foo" .}}'],
    ['newline in assignment', '{{ $x \n := \n 1 \n }}', '{{$x := 1}}'],
    ['newline in pipeline', '{{\n"x"\n|\nprintf\n}}', '{{"x" | printf}}'],
    ['newline in comment', '{{/*\nhello\n*/}}', ''],
    ['newline in trimmed comment', '{{-\n/*\nhello\n*/\n-}}', ''],
    [
      'spaces around continue',
      '{{range .SI}}{{.}}{{ continue }}{{end}}',
      '{{range .SI}}{{.}}{{continue}}{{end}}',
    ],
    ['spaces around break', '{{range .SI}}{{.}}{{ break }}{{end}}', '{{range .SI}}{{.}}{{break}}{{end}}'],
    ['bug0a', '{{$x := 0}}{{$x}}', '{{$x := 0}}{{$x}}'],
    ['bug1c', '{{$x:=.}}{{$x +2}}', '{{$x := .}}{{$x +2}}'],
    ['bug2a', '{{range $x := 0}}{{$x}}{{end}}', '{{range $x := 0}}{{$x}}{{end}}'],
    ['bug2b', '{{range $x = 0}}{{$x}}{{end}}', '{{range $x = 0}}{{$x}}{{end}}'],
    ['paren nesting normal', '{{ (( 1 )) }}', '{{((1))}}'],
    ['paren nesting', '{{ ((( 1 ))) | printf }}', '{{(((1))) | printf}}'],
    [
      'paren nesting with other constructs',
      '{{ if ((( true ))) }}YES{{ end }}',
      '{{if (((true)))}}"YES"{{end}}',
    ],
  ])('%s', (_name, src, want) => {
    expect(tree(src)).toBe(want);
  });
});

describe('Go parseTests: errors', () => {
  it.each<[string, string]>([
    ['emptyAction', '{{}}'],
    ['newline in empty action', '{{\n}}'],
    ['unclosed action', 'hello{{range'],
    ['unmatched end', '{{end}}'],
    ['unmatched else', '{{else}}'],
    ['unmatched else after if', '{{if .X}}hello{{end}}{{else}}'],
    ['multiple else', '{{if .X}}1{{else}}2{{else}}3{{end}}'],
    ['missing end', 'hello{{range .x}}'],
    ['missing end after else', 'hello{{range .x}}{{else}}'],
    ['undefined function', 'hello{{undefined}}'],
    ['undefined variable', '{{$x}}'],
    ['variable undefined after end', '{{with $x := 4}}{{end}}{{$x}}'],
    ['variable undefined in template', '{{template $v}}'],
    ['declare with field', '{{with $x.Y := 4}}{{end}}'],
    ['template with field ref', '{{template .X}}'],
    ['template with var', '{{template $v}}'],
    ['invalid punctuation', '{{printf 3, 4}}'],
    ['multidecl outside range', '{{with $v, $u := 3}}{{end}}'],
    ['too many decls in range', '{{range $u, $v, $w := 3}}{{end}}'],
    ['dot applied to parentheses', '{{printf (printf .).}}'],
    ['adjacent args', '{{printf 3`x`}}'],
    ['adjacent args with .', '{{printf `x`.}}'],
    ['extra end after if', '{{if .X}}a{{else if .Y}}b{{end}}{{end}}'],
    ['break outside range', '{{range .}}{{end}} {{break}}'],
    ['continue outside range', '{{range .}}{{end}} {{continue}}'],
    ['break in range else', '{{range .}}{{else}}{{break}}{{end}}'],
    ['continue in range else', '{{range .}}{{else}}{{continue}}{{end}}'],
    ['bug0b', '{{$x += 1}}{{$x}}'],
    ['bug0c', '{{$x ! 2}}{{$x}}'],
    ['bug0d', '{{$x % 3}}{{$x}}'],
    ['bug0e', '{{range $x := $y := 3}}{{end}}'],
    ['bug1a', '{{$x:=.}}{{$x!2}}'],
    ['bug1b', '{{$x:=.}}{{$x+2}}'],
    ['dot after integer', '{{1.E}}'],
    ['dot after float', '{{0.1.E}}'],
    ['dot after boolean', '{{true.E}}'],
    ['dot after char', "{{'a'.any}}"],
    ['dot after string', '{{"hello".guys}}'],
    ['dot after dot', '{{..E}}'],
    ['dot after nil', '{{nil.E}}'],
    ['wrong pipeline dot', '{{12|.}}'],
    ['wrong pipeline number', '{{.|12|printf}}'],
    ['wrong pipeline string', '{{.|printf|"error"}}'],
    ['wrong pipeline char', "{{12|printf|'e'}}"],
    ['wrong pipeline boolean', '{{.|true}}'],
    ['wrong pipeline nil', "{{'c'|nil}}"],
    ['empty pipeline', '{{printf "%d" ( ) }}'],
    ['block definition without pipeline', '{{block "foo"}}hello{{end}}'],
  ])('%s', (_name, src) => {
    expect(parseError(src)).toMatch(/^template: test:\d+:\d+: \S/);
  });

  // Go refuses parentheses nested over 10000 and does not limit blocks; ours recurse on
  // JavaScript's stack, so both together are limited to 1000 (a stack overflow named nothing).
  it('refuses parentheses and blocks nested over 1000 deep, and runs them at 1000', () => {
    const parens = (n: number) => `{{ ${'('.repeat(n)}1${')'.repeat(n)} }}`;
    const ifs = (n: number) => `${'{{if 1}}'.repeat(n)}x${'{{end}}'.repeat(n)}`;
    const elseIfs = (n: number) => `{{if 0}}${'{{else if 0}}'.repeat(n - 1)}{{else}}y{{end}}`;
    const run = (src: string) => new TemplateSet().parse('t', src).execute('t', null);
    expect(run(parens(1000))).toBe('1');
    expect(run(ifs(1000))).toBe('x');
    expect(run(elseIfs(1000))).toBe('y');
    expect(parseError(parens(1001))).toMatch(/^template: test:1:\d+: max expression depth exceeded$/);
    expect(parseError(ifs(1001))).toMatch(/^template: test:1:\d+: \{\{if\}\} nested over 1000 deep/);
    expect(parseError(`${'{{if 1}}'.repeat(500)}${parens(501)}`)).toMatch(/max expression depth exceeded$/);
    expect(run(`${'{{if 1}}'.repeat(500)}${parens(500)}${'{{end}}'.repeat(500)}`)).toBe('1');
  });
});

describe('Go errorTests: what the error says', () => {
  it.each<[string, string, string]>([
    ['unclosed1', 'line1\n{{', 'unclosed1:2:2: unclosed action'],
    ['unclosed2', 'line1\n{{define `x`}}line2\n{{', 'unclosed2:3:2: unclosed action'],
    ['unclosed3', 'line1\n{{"x"\n"y"\n', 'unclosed3:4:0: unclosed action started at unclosed3:2'],
    ['unclosed4', '{{\n\n\n\n\n', 'unclosed4:6:0: unclosed action started at unclosed4:1'],
    ['var1', 'line1\n{{\nx\n}}', 'var1:3:0: function "x" not defined'],
    ['function', '{{foo}}', 'function "foo" not defined'],
    ['comment1', '{{/*}}', 'comment1:1:0: unclosed comment'],
    ['comment2', '{{/*\nhello\n}}', 'comment2:1:0: unclosed comment'],
    ['lparen', '{{.X (1 2 3}}', 'unclosed left paren'],
    ['rparen', '{{.X 1 2 3 ) }}', 'unexpected right paren'],
    ['rparen2', '{{(.X 1 2 3', 'unclosed action'],
    ['space', '{{`x`3}}', 'in operand'],
    ['idchar', '{{a#}}', "'#'"],
    ['charconst', "{{'a}}", 'unterminated character constant'],
    ['stringconst', '{{"a}}', 'unterminated quoted string'],
    ['rawstringconst', '{{`a}}', 'unterminated raw quoted string'],
    ['number', '{{0xi}}', 'number syntax'],
    [
      'multidefine',
      '{{define `a`}}a{{end}}{{define `a`}}b{{end}}',
      'template: multiple definition of template "a"',
    ],
    ['eof', '{{range .X}}', 'unexpected EOF'],
    ['variable', '{{$x := 23}}{{with $x.y := 3}}{{$x 23}}{{end}}', 'unexpected ":="'],
    ['multidecl', '{{$a,$b,$c := 23}}', 'too many declarations'],
    ['undefvar', '{{$a}}', 'undefined variable'],
    ['wrongdot', '{{true.any}}', 'unexpected . after term'],
    ['wrongpipeline', '{{12|false}}', 'non executable command in pipeline'],
    ['emptypipeline', '{{ ( ) }}', 'missing value for parenthesized pipeline'],
    ['multilinerawstring', '{{ $v := `\n` }} {{', 'multilinerawstring:2:7: unclosed action'],
    ['rangeundefvar', '{{range $k}}{{end}}', 'undefined variable'],
    ['rangeundefvars', '{{range $k, $v}}{{end}}', 'undefined variable'],
    ['rangemissingvalue1', '{{range $k,}}{{end}}', 'missing value for range'],
    ['rangemissingvalue2', '{{range $k, $v := }}{{end}}', 'missing value for range'],
    ['rangenotvariable1', '{{range $k, .}}{{end}}', 'range can only initialize variables'],
    ['rangenotvariable2', '{{range $k, 123 := .}}{{end}}', 'range can only initialize variables'],
  ])('%s', (name, src, want) => {
    expect(parseError(src, name)).toContain(want);
  });

  it('names the line of the opening quote of an unterminated raw string', () => {
    expect(parseError('hello\n\n{{`unterminated\n\n\n\n}}\n some more\n\n', 'X')).toBe(
      'template: X:3:2: unterminated raw quoted string',
    );
  });
});

describe('Go numberTests: literals', () => {
  const value = (text: string) => {
    const root = parseTemplate('n', `{{${text}}}`, () => false).main.root;
    const action = root.nodes[0];
    if (action?.type !== 'action') throw new Error('not an action');
    const arg = action.pipe.cmds[0]!.args[0]!;
    if (arg.type !== 'literal') throw new Error('not a literal');
    return arg.value;
  };
  it.each<[string, bigint | number]>([
    ['0', 0n],
    ['-0', 0n],
    ['73', 73n],
    ['7_3', 73n],
    ['0b10_010_01', 73n],
    ['0B10_010_01', 73n],
    ['073', 59n],
    ['0o73', 59n],
    ['0O73', 59n],
    ['0x73', 0x73n],
    ['0X73', 0x73n],
    ['0x7_3', 0x73n],
    ['-73', -73n],
    ['+73', 73n],
    ['100', 100n],
    ['1e9', 1e9],
    ['-1e9', -1e9],
    ['-1.2', -1.2],
    ['1e19', 1e19],
    ['1e1_9', 1e19],
    ['1E19', 1e19],
    ['-1e19', -1e19],
    ['0x_1p4', 16],
    ['0X_1P4', 16],
    ['0x_1p-4', 1 / 16],
    ['0123', 83n],
    ['-0x0', 0n],
    ['0xdeadbeef', 0xdeadbeefn],
    ["'a'", 97n],
    ["'\\n'", 10n],
    ["'\\\\'", 92n],
    ["'\\''", 39n],
    ["'\\xFF'", 255n],
    ["'パ'", 0x30d1n],
    ["'\\u30d1'", 0x30d1n],
    ["'\\U000030d1'", 0x30d1n],
    ['0xef', 0xefn],
  ])('%s', (text, want) => {
    expect(value(text)).toBe(typeof want === 'number' ? want : BigInt(want));
  });

  it.each([
    '+-2',
    '0x123.',
    '1e.',
    '0xi.',
    '1+2.',
    "'x",
    "'xx'",
    "'433937734937734969526500969526500'",
    '4i',
    '1+2i',
  ])('%s is refused', (text) => {
    expect(parseError(`{{${text}}}`)).toMatch(/^template: test:1:\d+: /);
  });
});

describe('Go parse tests: definitions, keywords as functions, blocks', () => {
  it('counts a file of definitions, spaces and comments as empty, and a later empty one keeps the earlier', () => {
    const set = new TemplateSet();
    set.parse('x', '{{define "x"}}something{{end}}');
    for (const empty of [
      '',
      ' \t\n \t\n',
      '{{/* comment */}}',
      '{{define `y`}}s{{end}}\n\n{{define `z`}}s{{end}}\n\n',
    ])
      set.parse('x', empty);
    expect(set.execute('x', null)).toBe('something');
    set.parse('x', '{{define `y`}}s{{end}}\nx\n');
    expect(set.execute('x', null)).toBe('\nx\n');
  });

  it('lets an empty definition in a file give way to a full one in the same file', () => {
    expect(tree('{{define "a"}}{{end}}{{define "a"}}b{{end}}')).toBe('');
    const set = new TemplateSet().parse(
      'f',
      '{{define "a"}} {{end}}{{define "a"}}b{{end}}{{define "a"}}{{end}}',
    );
    expect(set.execute('a', null)).toBe('b');
  });

  it('reads break as a function name when a function has that name', () => {
    const src = '{{range .X}}{{break 20}}{{end}}';
    expect(tree(src, new Set(['break']))).toBe('{{range .X}}{{break 20}}{{end}}');
    expect(parseError(src)).toMatch(/unexpected "20" in break|unexpected/);
  });

  it('takes break inside if and with within a range, not inside a block body', () => {
    const set = new TemplateSet().parse(
      't',
      '{{range .}}{{with .}}{{if eq . 2}}{{break}}{{end}}{{end}}{{.}}{{end}}',
    );
    expect(set.execute('t', [1n, 2n, 3n])).toBe('1');
    expect(parseError('{{range .}}{{block "x" .}}{{break}}{{end}}{{end}}', 'test', new Set(['eq']))).toMatch(
      /\{\{break\}\} outside \{\{range\}\}$/,
    );
  });

  it('defines a block and calls it in place', () => {
    const r = parseTemplate('outer', 'a{{block "inner" .}}bar{{.}}baz{{end}}b', () => false);
    expect(listString(r.main.root, (s) => s)).toBe('a{{template "inner" .}}b');
    expect(listString(r.defines.find((d) => d.name === 'inner')!.root, (s) => s)).toBe('bar{{.}}baz');
  });
});
