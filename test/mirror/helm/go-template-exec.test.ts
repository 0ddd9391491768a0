/**
 * Execution against the cases of Go's text/template execTests table, re-expressed with our own
 * data (go-template-data.ts). A case is [name, template, output or ERR, data]. Left out, as they
 * need what Helm's values never hold: complex numbers, uint/int8…/uintptr types and maps with
 * int keys (MII, MI32S, MI64S, MUI32S, MUI64S, MI8S, MUI8S), typed nil pointers and interfaces
 * (NIL, NonEmptyInterfaceTypedNil, V2/W2 as nil receivers), unsafe pointers, channels (count),
 * iterators over functions (iter.Seq), slice capacity (SICap), a nested *Template value, and
 * the signatures of function values given to call (.BinaryFuncBad*, .VariadicFunc*Bad*: a
 * JavaScript function has none). Parameter types of template functions: go-template-exec-more.
 */
import { describe, expect, it } from 'vitest';
import { exec, execError, tVal } from './go-template-data.js';

const ERR = Symbol('error');
type Case = [string, string, string | typeof ERR, unknown];

function check([, input, want, data]: Case): void {
  if (want === ERR) expect(execError(input, data)).toMatch(/^template: t:\d+:\d+: /);
  else expect(exec(input, data)).toBe(want);
}

const BIG_INT = '0x7fffffffffffffff';
const BIG_UINT = '0x8000000000000000';

const basics: Case[] = [
  ['empty', '', '', null],
  ['text', 'some text', 'some text', null],
  ['nil action', '{{nil}}', ERR, null],
  ['ideal int', '{{typeOf 3}}', 'int', 0n],
  ['ideal float', '{{typeOf 1.0}}', 'float64', 0n],
  ['ideal exp float', '{{typeOf 1e1}}', 'float64', 0n],
  ['ideal big int', `{{typeOf ${BIG_INT}}}`, 'int', 0n],
  ['ideal too big', `{{typeOf ${BIG_UINT}}}`, ERR, 0n],
  ['ideal nil without type', '{{nil}}', ERR, 0n],
  ['.X', '-{{.X}}-', '-x-', tVal],
  ['.U.V', '-{{.U.V}}-', '-v-', tVal],
  ['.unexported', '{{.unexported}}', ERR, tVal],
  ['map .one', '{{.MSI.one}}', '1', tVal],
  ['map .two', '{{.MSI.two}}', '2', tVal],
  ['map .NO', '{{.MSI.NO}}', '<no value>', tVal],
  ['map .one interface', '{{.MXI.one}}', '1', tVal],
  ['map .WRONG args', '{{.MSI.one 1}}', ERR, tVal],
  ['dot int', '<{{.}}>', '<13>', 13n],
  ['dot float', '<{{.}}>', '<15.1>', 15.1],
  ['dot bool', '<{{.}}>', '<true>', true],
  ['dot string', '<{{.}}>', '<hello>', 'hello'],
  ['dot slice', '<{{.}}>', '<[-1 -2 -3]>', [-1n, -2n, -3n]],
  ['dot map', '<{{.}}>', '<map[two:22]>', { two: 22n }],
  ['$ int', '{{$}}', '123', 123n],
  ['$.I', '{{$.I}}', '17', tVal],
  ['$.U.V', '{{$.U.V}}', 'v', tVal],
  ['declare in action', '{{$x := $.U.V}}{{$x}}', 'v', tVal],
  ['simple assignment', '{{$x := 2}}{{$x = 3}}{{$x}}', '3', tVal],
  ['nested assignment', '{{$x := 2}}{{if true}}{{$x = 3}}{{end}}{{$x}}', '3', tVal],
  [
    'nested assignment changes the last declaration',
    '{{$x := 1}}{{if true}}{{$x := 2}}{{if true}}{{$x = 3}}{{end}}{{end}}{{$x}}',
    '1',
    tVal,
  ],
  ['V{6666}.String()', '-{{.V0}}-', '-<6666>-', tVal],
  ['&V{7777}.String()', '-{{.V1}}-', '-<7777>-', tVal],
  ['W{888}.Error()', '-{{.W0}}-', '-[888]-', tVal],
  ['&W{999}.Error()', '-{{.W1}}-', '-[999]-', tVal],
  ['*int', '{{.PI}}', '23', tVal],
  ['*string', '{{.PS}}', 'a string', tVal],
  ['*[]int', '{{.PSI}}', '[21 22 23]', tVal],
  ['*[]int[1]', '{{index .PSI 1}}', '22', tVal],
  ['empty nil', '{{.Empty0}}', '<no value>', tVal],
  ['empty with int', '{{.Empty1}}', '3', tVal],
  ['empty with string', '{{.Empty2}}', 'empty2', tVal],
  ['empty with slice', '{{.Empty3}}', '[7 8]', tVal],
  ['empty with struct', '{{.Empty4}}', '{UinEmpty}', tVal],
  ['empty with struct, field', '{{.Empty4.V}}', 'UinEmpty', tVal],
  ['field on interface', '{{.foo}}', '<no value>', null],
  ['field on parenthesized interface', '{{(.).foo}}', '<no value>', null],
  ['unparenthesized non-function', '{{1 2}}', ERR, null],
  ['parenthesized non-function', '{{(1) 2}}', ERR, null],
  ['parenthesized non-function with no args', '{{(1)}}', '1', null],
];

const calls: Case[] = [
  ['.Method0', '-{{.Method0}}-', '-M0-', tVal],
  ['.Method1(1234)', '-{{.Method1 1234}}-', '-1234-', tVal],
  ['.Method1(.I)', '-{{.Method1 .I}}-', '-17-', tVal],
  ['.Method2(3, .X)', '-{{.Method2 3 .X}}-', '-Method2: 3 x-', tVal],
  ['.Method2(.U16, `str`)', '-{{.Method2 .U16 `str`}}-', '-Method2: 16 str-', tVal],
  ['.Method2(.U16, $x)', '{{if $x := .X}}-{{.Method2 .U16 $x}}{{end}}-', '-Method2: 16 x-', tVal],
  ['.Method3(nil constant)', '-{{.Method3 nil}}-', '-Method3: <nil>-', tVal],
  ['.Method3(nil value)', '-{{.Method3 .MXI.unset}}-', '-Method3: <nil>-', tVal],
  ['method on var', '{{if $x := .}}-{{$x.Method2 .U16 $x.X}}{{end}}-', '-Method2: 16 x-', tVal],
  [
    'method on chained var',
    '{{range .MSIone}}{{if $.U.TrueFalse $.True}}{{$.U.TrueFalse $.True}}{{else}}WRONG{{end}}{{end}}',
    'true',
    tVal,
  ],
  [
    'chained method',
    '{{range .MSIone}}{{if $.GetU.TrueFalse $.True}}{{$.U.TrueFalse $.True}}{{else}}WRONG{{end}}{{end}}',
    'true',
    tVal,
  ],
  [
    'chained method on variable',
    '{{with $x := .}}{{with .SI}}{{$.GetU.TrueFalse $.True}}{{end}}{{end}}',
    'true',
    tVal,
  ],
  ['.NilOKFunc not nil', '{{call .NilOKFunc .PI}}', 'false', tVal],
  ['.NilOKFunc nil', '{{call .NilOKFunc nil}}', 'true', tVal],
  ['.BinaryFunc', '{{call .BinaryFunc `1` `2`}}', '[1=2]', tVal],
  ['.VariadicFunc0', '{{call .VariadicFunc}}', '<>', tVal],
  ['.VariadicFunc2', '{{call .VariadicFunc `he` `llo`}}', '<he+llo>', tVal],
  ['.VariadicFuncInt', '{{call .VariadicFuncInt 33 `he` `llo`}}', '33=<he+llo>', tVal],
  ['if .BinaryFunc call', '{{ if .BinaryFunc}}{{call .BinaryFunc `1` `2`}}{{end}}', '[1=2]', tVal],
  [
    'if not .BinaryFunc call',
    '{{ if not .BinaryFunc}}{{call .BinaryFunc `1` `2`}}{{else}}No{{end}}',
    'No',
    tVal,
  ],
  ['Interface Call', '{{stringer .S}}', 'foozle', { S: tVal.fields.Str }],
  ['.ErrFunc', '{{call .ErrFunc}}', 'bla', tVal],
  ['call nil', '{{call nil}}', ERR, tVal],
  ['empty call', '{{call}}', ERR, tVal],
  ['empty call after pipe valid', '{{.ErrFunc | call}}', 'bla', tVal],
  ['empty call after pipe invalid', '{{1 | call}}', ERR, tVal],
  ['pipeline', '-{{.Method0 | .Method2 .U16}}-', '-Method2: 16 M0-', tVal],
  ['pipeline func', '-{{call .VariadicFunc `llo` | call .VariadicFunc `he` }}-', '-<he+<llo>>-', tVal],
  ['nil pipeline', '{{ .Empty0 | call .NilOKFunc }}', 'true', tVal],
  ['nil call arg', '{{ call .NilOKFunc .Empty0 }}', 'true', tVal],
  ['bad nil pipeline', '{{ .Empty0 | .VariadicFunc }}', ERR, tVal],
  ['parens in pipeline', '{{printf `%d %d %d` (1) (2 | add 3) (add 4 (add 5 6))}}', '1 5 15', tVal],
  ['parens: $ in paren', '{{($).X}}', 'x', tVal],
  ['parens: $.GetU in paren', '{{($.GetU).V}}', 'v', tVal],
  ['parens: $ in paren in pipe', '{{($ | echo).X}}', 'x', tVal],
  ['parens: spaces and args', '{{(makemap "up" "down" "left" "right").left}}', 'right', tVal],
];

const ifs: Case[] = [
  ['if true', '{{if true}}TRUE{{end}}', 'TRUE', tVal],
  ['if false', '{{if false}}TRUE{{else}}FALSE{{end}}', 'FALSE', tVal],
  ['if nil', '{{if nil}}TRUE{{end}}', ERR, tVal],
  ['if 1', '{{if 1}}NON-ZERO{{else}}ZERO{{end}}', 'NON-ZERO', tVal],
  ['if 0', '{{if 0}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO', tVal],
  ['if 1.5', '{{if 1.5}}NON-ZERO{{else}}ZERO{{end}}', 'NON-ZERO', tVal],
  ['if 0.0', '{{if .FloatZero}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO', tVal],
  ['if nonNilPointer', '{{if .PI}}NON-ZERO{{else}}ZERO{{end}}', 'NON-ZERO', tVal],
  ['if emptystring', '{{if ``}}NON-EMPTY{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['if string', '{{if `notempty`}}NON-EMPTY{{else}}EMPTY{{end}}', 'NON-EMPTY', tVal],
  ['if emptyslice', '{{if .SIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['if slice', '{{if .SI}}NON-EMPTY{{else}}EMPTY{{end}}', 'NON-EMPTY', tVal],
  ['if emptymap', '{{if .MSIEmpty}}NON-EMPTY{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['if map', '{{if .MSI}}NON-EMPTY{{else}}EMPTY{{end}}', 'NON-EMPTY', tVal],
  ['if map unset', '{{if .MXI.none}}NON-ZERO{{else}}ZERO{{end}}', 'ZERO', tVal],
  ['if map not unset', '{{if not .MXI.none}}ZERO{{else}}NON-ZERO{{end}}', 'ZERO', tVal],
  ['if $x with $y int', '{{if $x := true}}{{with $y := .I}}{{$x}},{{$y}}{{end}}{{end}}', 'true,17', tVal],
  ['if $x with $x int', '{{if $x := true}}{{with $x := .I}}{{$x}},{{end}}{{$x}}{{end}}', '17,true', tVal],
  ['if else if', '{{if false}}FALSE{{else if true}}TRUE{{end}}', 'TRUE', tVal],
  ['if else chain', '{{if eq 1 3}}1{{else if eq 2 3}}2{{else if eq 3 3}}3{{end}}', '3', tVal],
];

const prints: Case[] = [
  ['print', '{{print "hello, print"}}', 'hello, print', tVal],
  ['print 123', '{{print 1 2 3}}', '1 2 3', tVal],
  ['print nil', '{{print nil}}', '<nil>', tVal],
  ['println', '{{println 1 2 3}}', '1 2 3\n', tVal],
  ['printf int', '{{printf "%04x" 127}}', '007f', tVal],
  ['printf float', '{{printf "%g" 3.5}}', '3.5', tVal],
  ['printf string', '{{printf "%s" "hello"}}', 'hello', tVal],
  ['printf function', '{{printf "%#q" zeroArgs}}', '`zeroArgs`', tVal],
  ['printf field', '{{printf "%s" .U.V}}', 'v', tVal],
  ['printf method', '{{printf "%s" .Method0}}', 'M0', tVal],
  ['printf dot', '{{with .I}}{{printf "%d" .}}{{end}}', '17', tVal],
  ['printf var', '{{with $x := .I}}{{printf "%d" $x}}{{end}}', '17', tVal],
  ['printf lots', '{{printf "%d %s %g %s" 127 "hello" 7.5 .Method0}}', '127 hello 7.5 M0', tVal],
  [
    'html',
    '{{html "<script>alert(\\"XSS\\");</script>"}}',
    '&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;',
    null,
  ],
  [
    'html pipeline',
    '{{printf "<script>alert(\\"XSS\\");</script>" | html}}',
    '&lt;script&gt;alert(&#34;XSS&#34;);&lt;/script&gt;',
    null,
  ],
  ['html string', '{{html .PS}}', 'a string', tVal],
  ['html untyped nil', '{{html .Empty0}}', '&lt;no value&gt;', tVal],
  ['js', '{{js .}}', "It\\'d be nice.", "It'd be nice."],
  ['urlquery', '{{"http://www.example.org/"|urlquery}}', 'http%3A%2F%2Fwww.example.org%2F', null],
  ['not', '{{not true}} {{not false}}', 'false true', null],
  ['and', '{{and false 0}} {{and 1 0}} {{and 0 true}} {{and 1 1}}', 'false 0 0 1', null],
  ['or', '{{or 0 0}} {{or 1 0}} {{or 0 true}} {{or 1 1}}', '0 1 true 1', null],
  ['or short-circuit', '{{or 0 1 (die)}}', '1', null],
  ['and short-circuit', '{{and 1 0 (die)}}', '0', null],
  ['or short-circuit2', '{{or 0 0 (die)}}', ERR, null],
  ['and short-circuit2', '{{and 1 1 (die)}}', ERR, null],
  ['and pipe-true', '{{1 | and 1}}', '1', null],
  ['and pipe-false', '{{0 | and 1}}', '0', null],
  ['or pipe-true', '{{1 | or 0}}', '1', null],
  ['or pipe-false', '{{0 | or 0}}', '0', null],
  ['and undef', '{{and 1 .Unknown}}', '<no value>', null],
  ['or undef', '{{or 0 .Unknown}}', '<no value>', null],
  ['boolean if', '{{if and true 1 `hi`}}TRUE{{else}}FALSE{{end}}', 'TRUE', tVal],
  ['boolean if not', '{{if and true 1 `hi` | not}}TRUE{{else}}FALSE{{end}}', 'FALSE', null],
  ['boolean if pipe', '{{if true | not | and 1}}TRUE{{else}}FALSE{{end}}', 'FALSE', null],
];

describe.each<[string, Case[]]>([
  ['Go execTests: basics, fields, variables', basics],
  ['Go execTests: methods, calls, pipelines', calls],
  ['Go execTests: if', ifs],
  ['Go execTests: print, html, js, urlquery, and, or', prints],
])('%s', (_title, cases) => {
  it.each(cases)('%s', (...c) => check(c));
});
