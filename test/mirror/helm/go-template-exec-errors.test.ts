/**
 * Go's text/template tests beyond the execTests table: comparisons (cmpTests), the wording of
 * execution errors, delimiters, blocks, interface values and JS escaping, with our own data. Left
 * out: uint operands and typed nil pointers (Helm's values have neither), Go's missingkey option
 * (Helm runs missingkey=zero: a missing key is no value), panics as such (a JavaScript throw is
 * an error here too), function signatures checked by call (ours are JavaScript functions).
 */
import { describe, expect, it } from 'vitest';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';
import { GoStruct } from '../../../src/mirror/helm/template/values.js';
import { exec, execError, goSet, tVal } from './go-template-data.js';

const cmpData = new GoStruct('struct', {
  Uthree: 3n,
  Ufour: 4n,
  NegOne: -1n,
  Three: 3n,
  NonNilMap: {},
  V1: new GoStruct('template.V', { j: 0n }),
  Map: { a: 1n },
});

describe('Go cmpTests', () => {
  it.each<[string, string]>([
    ['eq true true', 'true'],
    ['eq true false', 'false'],
    ['eq 1.5 1.5', 'true'],
    ['eq 1.5 2.5', 'false'],
    ['eq 1 1', 'true'],
    ['eq 1 2', 'false'],
    ['eq `xy` `xy`', 'true'],
    ['eq `xy` `xyz`', 'false'],
    ['eq .Uthree .Uthree', 'true'],
    ['eq .Uthree .Ufour', 'false'],
    ['eq 3 4 5 6 3', 'true'],
    ['eq 3 4 5 6 7', 'false'],
    ['ne true true', 'false'],
    ['ne true false', 'true'],
    ['ne 1.5 1.5', 'false'],
    ['ne 1.5 2.5', 'true'],
    ['ne 1 1', 'false'],
    ['ne 1 2', 'true'],
    ['ne `xy` `xy`', 'false'],
    ['ne `xy` `xyz`', 'true'],
    ['ne .Uthree .Uthree', 'false'],
    ['ne .Uthree .Ufour', 'true'],
    ['lt 1.5 1.5', 'false'],
    ['lt 1.5 2.5', 'true'],
    ['lt 1 1', 'false'],
    ['lt 1 2', 'true'],
    ['lt `xy` `xy`', 'false'],
    ['lt `xy` `xyz`', 'true'],
    ['lt .Uthree .Uthree', 'false'],
    ['lt .Uthree .Ufour', 'true'],
    ['le 1.5 1.5', 'true'],
    ['le 1.5 2.5', 'true'],
    ['le 2.5 1.5', 'false'],
    ['le 1 1', 'true'],
    ['le 1 2', 'true'],
    ['le 2 1', 'false'],
    ['le `xy` `xy`', 'true'],
    ['le `xy` `xyz`', 'true'],
    ['le `xyz` `xy`', 'false'],
    ['le .Uthree .Uthree', 'true'],
    ['le .Uthree .Ufour', 'true'],
    ['le .Ufour .Uthree', 'false'],
    ['gt 1.5 1.5', 'false'],
    ['gt 1.5 2.5', 'false'],
    ['gt 1 1', 'false'],
    ['gt 2 1', 'true'],
    ['gt 1 2', 'false'],
    ['gt `xy` `xy`', 'false'],
    ['gt `xy` `xyz`', 'false'],
    ['gt .Uthree .Uthree', 'false'],
    ['gt .Uthree .Ufour', 'false'],
    ['gt .Ufour .Uthree', 'true'],
    ['ge 1.5 1.5', 'true'],
    ['ge 1.5 2.5', 'false'],
    ['ge 2.5 1.5', 'true'],
    ['ge 1 1', 'true'],
    ['ge 1 2', 'false'],
    ['ge 2 1', 'true'],
    ['ge `xy` `xy`', 'true'],
    ['ge `xy` `xyz`', 'false'],
    ['ge `xyz` `xy`', 'true'],
    ['ge .Uthree .Uthree', 'true'],
    ['ge .Uthree .Ufour', 'false'],
    ['ge .Ufour .Uthree', 'true'],
    ['eq .NegOne .Uthree', 'false'],
    ['lt .NegOne .Uthree', 'true'],
    ['gt .Uthree .NegOne', 'true'],
    ["eq (index `x` 0) 'x'", 'true'],
    ["eq (index `x` 0) 'y'", 'false'],
    ['eq .V1 .V1', 'true'],
    ['eq .Map nil', 'false'],
    ['eq nil .Map', 'false'],
    ['eq nil nil', 'true'],
  ])('%s is %s', (expr, truth) => {
    expect(exec(`{{if ${expr}}}true{{else}}false{{end}}`, cmpData)).toBe(truth);
  });

  it.each<[string, string]>([
    ['eq `xy` 1', 'incompatible types for comparison'],
    ['eq 2 2.0', 'incompatible types for comparison'],
    ['lt true true', 'invalid type for comparison'],
    ['lt .Map 1', 'invalid type for comparison'],
    ['lt 1 .Map', 'invalid type for comparison'],
    ['eq .Map .V1', 'non-comparable types map[a:1]: map[string]interface {}, template.V: {0}'],
    ['eq .NonNilMap .NonNilMap', 'non-comparable type map[]: map[string]interface {}'],
    ['eq .Uthree', 'missing argument for comparison'],
  ])('%s is an error: %s', (expr, want) => {
    expect(execError(`{{if ${expr}}}true{{else}}false{{end}}`, cmpData)).toMatch(
      new RegExp(`error calling ${expr.split(' ')[0]}: ${want.replace(/[[\]{}()]/g, '\\$&')}$`),
    );
  });
});

describe('Go exec error tests: what the error says', () => {
  it('names the innermost template, its line and column, and the command', () => {
    const text = [
      'line 1',
      'line 2',
      'line 3',
      '{{template "one" .}}',
      '{{define "one"}}{{template "two" .}}{{end}}',
      '{{define "two"}}{{template "three" .}}{{end}}',
      '{{define "three"}}{{index "hi" $}}{{end}}',
    ].join('\n');
    expect(execError(text, 5n, 'top')).toBe(
      'template: top:7:20: executing "three" at <index "hi" $>: error calling index: index out of range: 5',
    );
  });

  it('carries a method error up', () => {
    expect(execError('{{.MyError true}}', tVal)).toContain('my error');
  });

  it('says which field a value has not', () => {
    expect(execError('hello, {{.X.Y}}', 0n)).toContain("can't evaluate field X in type int");
    expect(execError('{{.MissingField}}', tVal)).toContain(
      "can't evaluate field MissingField in type *template.T",
    );
  });

  it.each<[string, string, unknown, string]>([
    [
      'direct func call throws',
      '{{doPanic}}',
      null,
      'template: t:1:2: executing "t" at <doPanic>: error calling doPanic: custom panic string',
    ],
    [
      'func field call throws',
      '{{call .PanicFunc}}',
      tVal,
      'template: t:1:2: executing "t" at <call .PanicFunc>: error calling call: test panic',
    ],
    ['call nothing', '{{call}}', tVal, 'wrong number of args for call: want at least 1 got 0'],
    ['call non-function', '{{call .True}}', tVal, 'error calling call: non-function .True of type bool'],
    [
      'call pipeline',
      '{{call (len "test")}}',
      null,
      'error calling call: non-function len "test" of type int',
    ],
    ['call nil', '{{call .Nil 1}}', { Nil: null }, 'error calling call: call of nil'],
    ['index nil', '{{index .Nil 1}}', { Nil: null }, 'error calling index: index of untyped nil'],
  ])('%s', (_name, text, data, want) => {
    expect(execError(text, data)).toContain(want);
  });

  it('runs a parenthesised value alone, and calls a function value only through call', () => {
    expect(exec('{{ (.)  }}', 'result')).toBe('result');
    const f = () => 'result';
    expect(exec('{{ (call .)  }}', f)).toBe('result');
  });
});

describe('Go TestInterfaceValues', () => {
  const data = {
    PlusOne: (n: bigint) => n + 1n,
    Slice: [0n, 1n, 2n, 3n],
    One: 1n,
    Two: 2n,
    Nil: null,
    Zero: 0n,
  };
  it.each<[string, string]>([
    ['{{index .Slice 2}}', '2'],
    ['{{index .Slice .Two}}', '2'],
    ['{{call .PlusOne 1}}', '2'],
    ['{{call .PlusOne .One}}', '2'],
    ['{{and (index .Slice 0) true}}', '0'],
    ['{{and .Zero true}}', '0'],
    ['{{and (index .Slice 1) false}}', 'false'],
    ['{{and .One false}}', 'false'],
    ['{{or (index .Slice 0) false}}', 'false'],
    ['{{or .Zero false}}', 'false'],
    ['{{or (index .Slice 1) true}}', '1'],
    ['{{or .One true}}', '1'],
    ['{{not (index .Slice 0)}}', 'true'],
    ['{{not .Zero}}', 'true'],
    ['{{not (index .Slice 1)}}', 'false'],
    ['{{not .One}}', 'false'],
    ['{{eq (index .Slice 0) .Zero}}', 'true'],
    ['{{eq (index .Slice 1) .One}}', 'true'],
    ['{{ne (index .Slice 0) .Zero}}', 'false'],
    ['{{ne (index .Slice 1) .One}}', 'false'],
    ['{{ge (index .Slice 0) .One}}', 'false'],
    ['{{ge (index .Slice 1) .Zero}}', 'true'],
    ['{{gt (index .Slice 0) .One}}', 'false'],
    ['{{gt (index .Slice 1) .Zero}}', 'true'],
    ['{{le (index .Slice 0) .One}}', 'true'],
    ['{{le (index .Slice 1) .Zero}}', 'false'],
    ['{{lt (index .Slice 0) .One}}', 'true'],
    ['{{lt (index .Slice 1) .Zero}}', 'false'],
  ])('%s', (text, want) => {
    expect(exec(text, data)).toBe(want);
  });
});

describe('Go TestDelims and TestTree: other delimiters', () => {
  it.each<[string, string]>([
    ['', ''],
    ['{{', '}}'],
    ['<<', '>>'],
    ['|', '|'],
    ['(日)', '(本)'],
  ])('%s %s', (left, right) => {
    const l = left || '{{';
    const r = right || '}}';
    const text = `${l}.Str${r}${l}/*comment*/${r}${l}"${l}"${r}`;
    const set = goSet(text, 'delims', [left, right]);
    expect(set.execute('delims', { Str: 'Hello, world' })).toBe(`Hello, world${l}`);
  });

  it('walks a binary tree with ( ) as delimiters and trim markers', () => {
    const text = [
      '',
      '\t(- define "tree" -)',
      '\t[',
      '\t\t(- .Val -)',
      '\t\t(- with .Left -)',
      '\t\t\t(template "tree" . -)',
      '\t\t(- end -)',
      '\t\t(- with .Right -)',
      '\t\t\t(- template "tree" . -)',
      '\t\t(- end -)',
      '\t]',
      '\t(- end -)',
      '',
    ].join('\n');
    const node = (val: number, left: unknown = null, right: unknown = null): unknown => ({
      Val: BigInt(val),
      Left: left,
      Right: right,
    });
    const tree = node(
      1,
      node(2, node(3, node(4)), node(5, node(6))),
      node(7, node(8, node(9)), node(10, node(11))),
    );
    expect(goSet(text, 'root', ['(', ')']).execute('tree', tree)).toBe('[1[2[3[4]][5[6]]][7[8[9]][10[11]]]]');
  });
});

describe('Go TestBlock, TestJSEscaping', () => {
  it('a block is its body until a later definition replaces it', () => {
    const set = new TemplateSet().parse('outer', 'a({{block "inner" .}}bar({{.}})baz{{end}})b');
    expect(set.execute('outer', 'hello')).toBe('a(bar(hello)baz)b');
    set.parse('overlay', '{{define "inner"}}foo({{.}})bar{{end}}');
    expect(set.execute('outer', 'goodbye')).toBe('a(foo(goodbye)bar)b');
  });

  it.each<[string, string]>([
    ['a', 'a'],
    ["'foo", "\\'foo"],
    ['Go "jump" \\', 'Go \\"jump\\" \\\\'],
    ['Yukihiro says "今日は世界"', 'Yukihiro says \\"今日は世界\\"'],
    ['unprintable \uFFFE', 'unprintable \\uFFFE'],
    ['<html>', '\\u003Chtml\\u003E'],
    ['no = in attributes', 'no \\u003D in attributes'],
    ['&#x27; does not become HTML entity', '\\u0026#x27; does not become HTML entity'],
    ['no-break\u00a0space', 'no-break\\u00A0space'],
  ])('js %s', (input, want) => {
    expect(exec('{{js .}}', input)).toBe(want);
  });
});
