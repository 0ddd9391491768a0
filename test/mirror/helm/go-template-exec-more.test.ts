/**
 * Execution against the rest of Go's execTests table (index, slice, len, with, range, numbers,
 * fixed bugs) with our own data (go-template-data.ts); left out as in go-template-exec.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { exec, execError, tVal } from './go-template-data.js';

const ERR = Symbol('error');
type Case = [string, string, string | typeof ERR, unknown];

function check([, input, want, data]: Case): void {
  if (want === ERR) expect(execError(input, data)).toMatch(/^template: t:\d+:\d+: /);
  else expect(exec(input, data)).toBe(want);
}

const indexing: Case[] = [
  ['slice[0]', '{{index .SI 0}}', '3', tVal],
  ['slice[1]', '{{index .SI 1}}', '4', tVal],
  ['slice[HUGE]', '{{index .SI 10}}', ERR, tVal],
  ['slice[WRONG]', '{{index .SI `hello`}}', ERR, tVal],
  ['slice[nil]', '{{index .SI nil}}', ERR, tVal],
  ['map[one]', '{{index .MSI `one`}}', '1', tVal],
  ['map[two]', '{{index .MSI `two`}}', '2', tVal],
  // Go prints the zero of the map's element type: for map[string]interface{} (Helm's values), no value.
  ['map[NO]', '{{index .MSI `XXX`}}', '<no value>', tVal],
  ['map[nil]', '{{index .MSI nil}}', ERR, tVal],
  ['map[``]', '{{index .MSI ``}}', '<no value>', tVal],
  ['map[WRONG]', '{{index .MSI 10}}', ERR, tVal],
  ['double index', '{{index .SMSI 1 `eleven`}}', '11', tVal],
  ['nil[1]', '{{index nil 1}}', ERR, tVal],
  ['index of an interface field', '{{index .Empty3 0}}', '7', tVal],
  ['slice[:]', '{{slice .SI}}', '[3 4 5]', tVal],
  ['slice[1:]', '{{slice .SI 1}}', '[4 5]', tVal],
  ['slice[1:2]', '{{slice .SI 1 2}}', '[4]', tVal],
  ['slice[-1:]', '{{slice .SI -1}}', ERR, tVal],
  ['slice[1:-2]', '{{slice .SI 1 -2}}', ERR, tVal],
  ['slice[1:2:-1]', '{{slice .SI 1 2 -1}}', ERR, tVal],
  ['slice[2:1]', '{{slice .SI 2 1}}', ERR, tVal],
  ['slice[2:2:1]', '{{slice .SI 2 2 1}}', ERR, tVal],
  ['out of range', '{{slice .SI 4 5}}', ERR, tVal],
  ['out of range 3-index', '{{slice .SI 2 2 5}}', ERR, tVal],
  ['array[:]', '{{slice .AI}}', '[3 4 5]', tVal],
  ['array[1:]', '{{slice .AI 1}}', '[4 5]', tVal],
  ['array[1:2]', '{{slice .AI 1 2}}', '[4]', tVal],
  ['string[:]', '{{slice .S}}', 'xyz', tVal],
  ['string[0:1]', '{{slice .S 0 1}}', 'x', tVal],
  ['string[1:]', '{{slice .S 1}}', 'yz', tVal],
  ['string[1:2]', '{{slice .S 1 2}}', 'y', tVal],
  ['string out of range', '{{slice .S 1 5}}', ERR, tVal],
  ['3-index slice of string', '{{slice .S 1 2 2}}', ERR, tVal],
  ['slice of an interface field', '{{slice .Empty3 0 1}}', '[7]', tVal],
  ['len slice', '{{len .SI}}', '3', tVal],
  ['len map', '{{len .MSI }}', '3', tVal],
  ['len of int', '{{len 3}}', ERR, tVal],
  ['len of nothing', '{{len .Empty0}}', ERR, tVal],
  ['len of an interface field', '{{len .Empty3}}', '2', tVal],
];

const withs: Case[] = [
  ['with true', '{{with true}}{{.}}{{end}}', 'true', tVal],
  ['with false', '{{with false}}{{.}}{{else}}FALSE{{end}}', 'FALSE', tVal],
  ['with 1', '{{with 1}}{{.}}{{else}}ZERO{{end}}', '1', tVal],
  ['with 0', '{{with 0}}{{.}}{{else}}ZERO{{end}}', 'ZERO', tVal],
  ['with 1.5', '{{with 1.5}}{{.}}{{else}}ZERO{{end}}', '1.5', tVal],
  ['with 0.0', '{{with .FloatZero}}{{.}}{{else}}ZERO{{end}}', 'ZERO', tVal],
  ['with emptystring', '{{with ``}}{{.}}{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['with string', '{{with `notempty`}}{{.}}{{else}}EMPTY{{end}}', 'notempty', tVal],
  ['with emptyslice', '{{with .SIEmpty}}{{.}}{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['with slice', '{{with .SI}}{{.}}{{else}}EMPTY{{end}}', '[3 4 5]', tVal],
  ['with emptymap', '{{with .MSIEmpty}}{{.}}{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['with map', '{{with .MSIone}}{{.}}{{else}}EMPTY{{end}}', 'map[one:1]', tVal],
  ['with empty interface, struct field', '{{with .Empty4}}{{.V}}{{end}}', 'UinEmpty', tVal],
  ['with $x int', '{{with $x := .I}}{{$x}}{{end}}', '17', tVal],
  ['with $x struct.U.V', '{{with $x := $}}{{$x.U.V}}{{end}}', 'v', tVal],
  ['with variable and action', '{{with $x := $}}{{$y := $.U.V}}{{$y}}{{end}}', 'v', tVal],
  ['with else with', '{{with 0}}{{.}}{{else with true}}{{.}}{{end}}', 'true', tVal],
  [
    'with else with chain',
    '{{with 0}}{{.}}{{else with false}}{{.}}{{else with `notempty`}}{{.}}{{end}}',
    'notempty',
    tVal,
  ],
];

const ranges: Case[] = [
  ['range []int', '{{range .SI}}-{{.}}-{{end}}', '-3--4--5-', tVal],
  ['range empty no else', '{{range .SIEmpty}}-{{.}}-{{end}}', '', tVal],
  ['range []int else', '{{range .SI}}-{{.}}-{{else}}EMPTY{{end}}', '-3--4--5-', tVal],
  ['range empty else', '{{range .SIEmpty}}-{{.}}-{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['range []int break else', '{{range .SI}}-{{.}}-{{break}}NOTREACHED{{else}}EMPTY{{end}}', '-3-', tVal],
  [
    'range []int continue else',
    '{{range .SI}}-{{.}}-{{continue}}NOTREACHED{{else}}EMPTY{{end}}',
    '-3--4--5-',
    tVal,
  ],
  ['range []bool', '{{range .SB}}-{{.}}-{{end}}', '-true--false-', tVal],
  ['range []int method', '{{range .SI | .MAdd .I}}-{{.}}-{{end}}', '-20--21--22-', tVal],
  ['range map', '{{range .MSI}}-{{.}}-{{end}}', '-1--3--2-', tVal],
  ['range empty map no else', '{{range .MSIEmpty}}-{{.}}-{{end}}', '', tVal],
  ['range map else', '{{range .MSI}}-{{.}}-{{else}}EMPTY{{end}}', '-1--3--2-', tVal],
  ['range empty map else', '{{range .MSIEmpty}}-{{.}}-{{else}}EMPTY{{end}}', 'EMPTY', tVal],
  ['range empty interface', '{{range .Empty3}}-{{.}}-{{else}}EMPTY{{end}}', '-7--8-', tVal],
  ['range empty nil', '{{range .Empty0}}-{{.}}-{{end}}', '', tVal],
  ['range $x SI', '{{range $x := .SI}}<{{$x}}>{{end}}', '<3><4><5>', tVal],
  ['range $x $y SI', '{{range $x, $y := .SI}}<{{$x}}={{$y}}>{{end}}', '<0=3><1=4><2=5>', tVal],
  ['range $x MSIone', '{{range $x := .MSIone}}<{{$x}}>{{end}}', '<1>', tVal],
  ['range $x $y MSIone', '{{range $x, $y := .MSIone}}<{{$x}}={{$y}}>{{end}}', '<one=1>', tVal],
  ['range $x PSI', '{{range $x := .PSI}}<{{$x}}>{{end}}', '<21><22><23>', tVal],
  ['declare in range', '{{range $x := .PSI}}<{{$foo:=$x}}{{$x}}>{{end}}', '<21><22><23>', tVal],
  ['range int', '{{range $v := .}}{{printf "%T%d" $v $v}}{{end}}', 'int0int1int2int3int4', 5n],
  ['range 5', '{{range $v := 5}}{{printf "%T%d" $v $v}}{{end}}', 'int0int1int2int3int4', null],
  ['range int over two vars', '{{range $i, $c := 5}}{{end}}', ERR, null],
  ['range 0 else', '{{range $v := .}}{{print $v}}{{else}}empty{{end}}', 'empty', 0n],
  ['or as if true', '{{or .SI "slice is empty"}}', '[3 4 5]', tVal],
  ['or as if false', '{{or .SIEmpty "slice is empty"}}', 'slice is empty', tVal],
  ['error method, error', '{{.MyError true}}', ERR, tVal],
  ['error method, no error', '{{.MyError false}}', 'false', tVal],
  ['issue56490', '{{$i := 0}}{{$x := 0}}{{range $i = .AI}}{{end}}{{$i}}', '5', tVal],
  ['issue60801', '{{$k := 0}}{{$v := 0}}{{range $k, $v = .AI}}{{$k}}={{$v}} {{end}}', '0=3 1=4 2=5 ', tVal],
];

const numbers: Case[] = [
  ['decimal', '{{print 1234}}', '1234', tVal],
  ['decimal _', '{{print 12_34}}', '1234', tVal],
  ['binary', '{{print 0b101}}', '5', tVal],
  ['binary _', '{{print 0b_1_0_1}}', '5', tVal],
  ['BINARY', '{{print 0B101}}', '5', tVal],
  ['octal0', '{{print 0377}}', '255', tVal],
  ['octal', '{{print 0o377}}', '255', tVal],
  ['octal _', '{{print 0o_3_7_7}}', '255', tVal],
  ['OCTAL', '{{print 0O377}}', '255', tVal],
  ['hex', '{{print 0x123}}', '291', tVal],
  ['hex _', '{{print 0x1_23}}', '291', tVal],
  ['HEX', '{{print 0X123ABC}}', '1194684', tVal],
  ['float', '{{print 123.4}}', '123.4', tVal],
  ['float _', '{{print 0_0_1_2_3.4}}', '123.4', tVal],
  ['hex float', '{{print +0x1.ep+2}}', '7.5', tVal],
  ['hex float _', '{{print +0x_1.e_0p+0_2}}', '7.5', tVal],
  ['HEX float', '{{print +0X1.EP+2}}', '7.5', tVal],
  ['print multi', '{{print 1_2_3_4 7.5_00_00_00}}', '1234 7.5', tVal],
  ['print multi2', '{{print 1234 0x0_1.e_0p+02}}', '1234 7.5', tVal],
];

const bugs: Case[] = [
  ['bug0', '{{range .MSIone}}{{if $.Method1 .}}X{{end}}{{end}}', 'X', tVal],
  ['bug2', '{{$.NonEmptyInterface.Method0}}', 'M0', tVal],
  ['bug3', '{{with $}}{{.Method0}}{{end}}', 'M0', tVal],
  ['bug4', '{{if .Empty0}}non-nil{{else}}nil{{end}}', 'nil', tVal],
  ['bug5', '{{.Str}}', 'foozle', tVal],
  ['bug5a', '{{.Err}}', 'erroozle', tVal],
  ['bug6a', '{{vfunc .V0 .V1}}', 'vfunc', tVal],
  ['bug7a', '{{3 2}}', ERR, tVal],
  ['bug7b', '{{$x := 1}}{{$x 2}}', ERR, tVal],
  ['bug7c', '{{$x := 1}}{{3 | $x}}', ERR, tVal],
  ['bug9', '{{.cause}}', 'neglect', { cause: 'neglect' }],
  ['bug10', '{{mapOfThree.three}}-{{(mapOfThree).three}}', '3-3', 0n],
  ['bug12xe', '{{printf `%T` 0xef}}', 'int', tVal],
  ['bug12xE', '{{printf `%T` 0xEE}}', 'int', tVal],
  ['bug12Xe', '{{printf `%T` 0Xef}}', 'int', tVal],
  ['bug12XE', '{{printf `%T` 0XEE}}', 'int', tVal],
  ['bug13', '{{print (.Copy).I}}', '17', tVal],
  ['bug14a', '{{(nil).True}}', ERR, tVal],
  ['bug14b', '{{$x := nil}}{{$x.anything}}', ERR, tVal],
  ['bug14c', '{{$x := (1.0)}}{{$y := ("hello")}}{{$x.anything}}{{$y.true}}', ERR, tVal],
  ['bug8a', '{{3|oneArg}}', ERR, tVal],
  ['bug8b', '{{4|dddArg 3}}', ERR, tVal],
  ['bug11', '{{valueString .PS}}', ERR, { PS: null }],
  ['bug15', '{{valueString returnInt}}', ERR, tVal],
  ['bug16a', '{{true|printf}}', ERR, tVal],
  ['bug16b', '{{1|printf}}', ERR, tVal],
  ['bug16c', '{{1.1|printf}}', ERR, tVal],
  ['bug16d', "{{'x'|printf}}", ERR, tVal],
  ['bug16f', '{{true|twoArgs "xxx"}}', ERR, tVal],
  ['bug16g', '{{"aaa" |twoArgs "bbb"}}', 'twoArgs=bbbaaa', tVal],
  ['bug16h', '{{1|oneArg}}', ERR, tVal],
  ['bug16i', '{{"aaa"|oneArg}}', 'oneArg=aaa', tVal],
  ['bug16k', '{{"aaa"|printf }}', 'aaa', tVal],
  ['bug17a', '{{.NonEmptyInterface.X}}', 'x', tVal],
  ['bug17b', '-{{.NonEmptyInterface.Method1 1234}}-', '-1234-', tVal],
  ['bug18a', "{{eq . '.'}}", 'true', 46n],
  ['bug18b', "{{eq . 'e'}}", 'true', 101n],
  ['bug18c', "{{eq . 'P'}}", 'true', 80n],
];

describe('Go parameter types: constants converted, values checked', () => {
  it.each<[string, unknown, string]>([
    ['{{oneArg 3}}', null, 'expected string; found 3'],
    ['{{oneArg nil}}', null, 'cannot assign nil to string'],
    ['{{oneArg .}}', 3n, 'wrong type for value; expected string; got int'],
    ['{{oneArg .x}}', {}, 'wrong type for value; expected string; got interface {}'],
    ['{{intArg 2.5}}', null, 'expected integer; found 2.5'],
    ['{{intArg .}}', 2, 'wrong type for value; expected int; got float64'],
    ['{{floatArg "x"}}', null, 'expected float; found "x"'],
    ['{{printf 1}}', null, 'expected string; found 1'],
  ])('%s with %o: %s', (text, data, want) => {
    expect(execError(text, data)).toMatch(
      new RegExp(`^template: t:1:\\d+: executing "t" at <.*>: ${want.replace(/[{}]/g, '\\$&')}$`),
    );
  });

  it.each<[string, string]>([
    ['{{intArg 2.0}}', 'int=2'],
    ["{{intArg 'a'}}", 'int=97'],
    ['{{floatArg 3}}', 'float=3'],
    ['{{dddArg 3 "a" "b"}}', '3 [a b]\n'],
    ['{{"%d" | printf}}', '%!d(MISSING)'],
  ])('%s', (text, want) => {
    expect(exec(text, null)).toBe(want);
  });
});

describe.each<[string, Case[]]>([
  ['Go execTests: index, slice, len', indexing],
  ['Go execTests: with', withs],
  ['Go execTests: range, break, continue', ranges],
  ['Go execTests: numbers', numbers],
  ['Go execTests: fixed bugs', bugs],
])('%s', (_title, cases) => {
  it.each(cases)('%s', (...c) => check(c));
});
