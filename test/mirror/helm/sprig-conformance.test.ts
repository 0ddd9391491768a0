/**
 * Sprig v3.3 (the version Helm 3 builds with) as its own test tables state it: each table below
 * restates the cases of one of sprig's test files (strings, numeric, list, dict, defaults,
 * reflect, regex, url, semver, date, crypto shapes) plus Go's path package facts, as templates
 * run through our engine with Helm's functions. The cases are sprig's facts; the tests are ours.
 */
import { describe, expect, it } from 'vitest';
import { run, table, type Table } from './sprig-table.js';

table(
  'strings_test',
  [
    ['{{"fooo" | substr 0 3 }}', 'foo'],
    ['{{"foo" | substr 0 10 }}', 'foo'],
    ['{{ "foooooo" | trunc 3 }}', 'foo'],
    ['{{ "baaaaaar" | trunc -3 }}', 'aar'],
    ['{{ "baaaaaar" | trunc -999 }}', 'baaaaaar'],
    ['{{ "baaaaaz" | trunc 0 }}', ''],
    ['{{quote "a" "b" "c"}}', '"a" "b" "c"'],
    ['{{quote "\\"a\\"" "b" "c"}}', '"\\"a\\"" "b" "c"'],
    ['{{quote 1 2 3 }}', '"1" "2" "3"'],
    ['{{ .nil | quote }}', ''],
    ['{{squote "a" "b" "c"}}', "'a' 'b' 'c'"],
    ['{{squote 1 2 3 }}', "'1' '2' '3'"],
    ['{{ .nil | squote }}', ''],
    ['{{if contains "cat" "fair catch"}}1{{end}}', '1'],
    ['{{if hasPrefix "cat" "catch"}}1{{end}}', '1'],
    ['{{if hasSuffix "cat" "ducat"}}1{{end}}', '1'],
    ['{{trim "   5.00   "}}', '5.00'],
    ['{{trimAll "$" "$5.00$"}}', '5.00'],
    ['{{trimall "$" "$5.00$"}}', '5.00'],
    ['{{trimPrefix "$" "$5.00"}}', '5.00'],
    ['{{trimSuffix "$" "5.00$"}}', '5.00'],
    ['{{$v := "foo$bar$baz" | split "$"}}{{$v._0}}', 'foo'],
    ['{{$v := "foo$bar$baz" | splitn "$" 2}}{{$v._0}}', 'foo'],
    ['{{ toString 1 | kindOf }}', 'string'],
    ['{{ $s := list 1 2 3 | toStrings }}{{ index $s 1 | kindOf }}', 'string'],
    ['{{ list 1 .nil 2 | toStrings }}', '[1 2]'],
    ['{{ tuple "a" "b" "c" | join "-" }}', 'a-b-c'],
    ['{{ tuple 1 2 3 | join "-" }}', '1-2-3'],
    ['{{ join "-" .strs }}', 'a-b-c'],
    ['{{ join "-" .abc }}', 'abc'],
    ['{{ join "-" .ints }}', '1-2-3'],
    ['{{ join "-" .withNil }}', '1-2'],
    ['{{ list "c" "a" "b" | sortAlpha | join "" }}', 'abc'],
    ['{{ list 2 1 4 3 | sortAlpha | join "" }}', '1234'],
    ['{{b64enc "coffee"}}', 'Y29mZmVl'],
    ['{{b64dec "Y29mZmVl"}}', 'coffee'],
    ['{{b32enc "coffee"}}', 'MNXWMZTFMU======'],
    ['{{b32dec "MNXWMZTFMU======"}}', 'coffee'],
    ['{{abbrev 5 "hello world"}}', 'he...'],
    ['{{abbrevboth 5 10 "1234 5678 9123"}}', '...5678...'],
    ['{{nospace "h e l l o "}}', 'hello'],
    ['{{untitle "First Try"}}', 'first try'],
    ['{{initials "First Try"}}', 'FT'],
    ['{{wrap 5 "Hello World"}}', 'Hello\nWorld'],
    ['{{wrapWith 5 "\\t" "Hello World"}}', 'Hello\tWorld'],
    ['{{$b := "b"}}{{"c" | cat "a" $b}}', 'a b c'],
    ['{{ .nil | cat "a" "b"}}', 'a b'],
    ['{{indent 4 "a\\nb\\nc"}}', '    a\n    b\n    c'],
    ['{{nindent 4 "a\\nb\\nc"}}', '\n    a\n    b\n    c'],
    ['{{"I Am Henry VIII" | replace " " "-"}}', 'I-Am-Henry-VIII'],
    ['{{$num := len "two"}}{{$num}} {{$num | plural "1 char" "chars"}}', '3 chars'],
    ['{{len "t" | plural "cheese" "%d chars"}}', 'cheese'],
    // goutils' own facts for swapcase, and sprig's docs for the rest of the goutils family
    ['{{swapcase "This Is A.Test"}}', 'tHIS iS a.tEST'],
    ['{{abbrev 4 "abcdefg"}}', 'a...'],
    ['{{abbrev 3 "abcdefg"}}', 'abcdefg'],
    ['{{abbrevboth 10 10 "abcdefghijklmno"}}', '...ijklmno'],
    ['{{abbrevboth 0 10 "abcdefghijklmno"}}', 'abcdefg...'],
    ['{{wrap 10 "Lorem ipsum dolor sit amet"}}', 'Lorem\nipsum\ndolor sit\namet'],
    ['{{wrap 3 "a verylongword b"}}', 'a\nverylongword\nb'],
    ['{{wrapWith 3 "|" "a verylongword b"}}', 'a|ver|ylo|ngw|ord|b'],
    ['{{ hello }}', 'Hello!'],
  ],
  { nil: null, strs: ['a', 'b', 'c'], abc: 'abc', ints: [1n, 2n, 3n], withNil: ['1', null, '2'] },
);

table('numeric_test', [
  ['{{range $i, $e := until 5}}{{$i}}{{$e}}{{end}}', '0011223344'],
  ['{{range $i, $e := until -5}}{{$i}}{{$e}} {{end}}', '00 1-1 2-2 3-3 4-4 '],
  ['{{range $i, $e := untilStep 0 5 1}}{{$i}}{{$e}}{{end}}', '0011223344'],
  ['{{range $i, $e := untilStep 3 6 1}}{{$i}}{{$e}}{{end}}', '031425'],
  ['{{range $i, $e := untilStep 0 -10 -2}}{{$i}}{{$e}} {{end}}', '00 1-2 2-4 3-6 4-8 '],
  ['{{range $i, $e := untilStep 3 0 1}}{{$i}}{{$e}}{{end}}', ''],
  ['{{range $i, $e := untilStep 3 99 0}}{{$i}}{{$e}}{{end}}', ''],
  ['{{range $i, $e := untilStep 3 99 -1}}{{$i}}{{$e}}{{end}}', ''],
  ['{{range $i, $e := untilStep 3 0 0}}{{$i}}{{$e}}{{end}}', ''],
  ['{{ biggest 1 2 3 345 5 6 7}}', '345'],
  ['{{ max 345}}', '345'],
  ['{{ maxf 1 2 3 345.7 5 6 7}}', '345.7'],
  ['{{ min 1 2 3 345 5 6 7}}', '1'],
  ['{{ min 345}}', '345'],
  ['{{ minf 1.4 2 3 345.6 5 6 7}}', '1.4'],
  ['{{ minf 345 }}', '345'],
  ['{{ float64 "102" }}', '102'],
  ['{{ float64 "frankie" }}', '0'],
  ['{{ float64 102.1234 }}', '102.1234'],
  ['{{ float64 true }}', '1'],
  ['{{ int64 "102" }}', '102'],
  ['{{ int64 "frankie" }}', '0'],
  ['{{ int64 102.1234 }}', '102'],
  ['{{ int64 true }}', '1'],
  ['{{ int "102" }}', '102'],
  ['{{ int 102.1234 }}', '102'],
  ['{{ toDecimal "777" }}', '511'],
  ['{{ toDecimal 777 }}', '511'],
  ['{{ toDecimal 770 }}', '504'],
  ['{{ toDecimal 755 }}', '493'],
  ['{{ 3 | add1 }}', '4'],
  ['{{ 3.4 | add1f }}', '4.4'],
  ['{{ 3 | add 1 2}}', '6'],
  ['{{ 3 | addf 1.5 2.2}}', '6.7'],
  ['{{ 4 | div 5 }}', '1'],
  ['{{ 2 | divf 5 4 }}', '0.625'],
  ['{{ 1 | mul "2" 3 "4"}}', '24'],
  ['{{ 1.2 | mulf "2.4" 10 "4"}}', '115.2'],
  ['{{ 3 | sub 14 }}', '11'],
  ['{{ 3 | subf 4.5 1 }}', '0.5'],
  ['{{ ceil 123 }}', '123'],
  ['{{ ceil "123" }}', '123'],
  ['{{ ceil 123.01 }}', '124'],
  ['{{ ceil "123.01" }}', '124'],
  ['{{ floor 123 }}', '123'],
  ['{{ floor "123" }}', '123'],
  ['{{ floor 123.9999 }}', '123'],
  ['{{ floor "123.9999" }}', '123'],
  ['{{ round 123.5555 3 }}', '123.556'],
  ['{{ round "123.55555" 3 }}', '123.556'],
  ['{{ round 123.500001 0 }}', '124'],
  ['{{ round 123.49999999 0 }}', '123'],
  ['{{ round 123.2329999 2 .3 }}', '123.23'],
  ['{{ round 123.233 2 .3 }}', '123.24'],
  ['{{seq 0 1 3}}', '0 1 2 3'],
  ['{{seq 0 3 10}}', '0 3 6 9'],
  ['{{seq 3 3 2}}', ''],
  ['{{seq 3 -3 2}}', '3'],
  ['{{seq}}', ''],
  ['{{seq 0 4}}', '0 1 2 3 4'],
  ['{{seq 5}}', '1 2 3 4 5'],
  ['{{seq -5}}', '1 0 -1 -2 -3 -4 -5'],
  ['{{seq 0}}', '1 0'],
  ['{{seq 0 1 2 3}}', ''],
  ['{{seq 0 -4}}', '0 -1 -2 -3 -4'],
]);

describe('numeric_test: randInt', () => {
  it.each([
    [10, 11],
    [10, 13],
    [0, 1],
    [5, 50],
  ])('randInt %d %d is in [min, max)', (min, max) => {
    for (let i = 0; i < 20; i++) {
      const r = Number(run(`{{ randInt ${min} ${max} }}`));
      expect(r >= min && r < max).toBe(true);
    }
  });
});

table('list_test', [
  ['{{$t := tuple 1 "a" "foo"}}{{index $t 2}}{{index $t 0 }}{{index $t 1}}', 'foo1a'],
  ['{{$t := list 1 "a" "foo"}}{{index $t 2}}{{index $t 0 }}{{index $t 1}}', 'foo1a'],
  ...(['append', 'mustAppend'] as const).flatMap((fn): Table => [
    [`{{ $t := tuple 1 2 3  }}{{ ${fn} $t 4 | len }}`, '4'],
    [`{{ $t := tuple 1 2 3 4  }}{{ ${fn} $t 5 | join "-" }}`, '1-2-3-4-5'],
    [`{{ $t := regexSplit "/" "foo/bar/baz" -1 }}{{ ${fn} $t "qux" | join "-" }}`, 'foo-bar-baz-qux'],
  ]),
  ['{{ $t := regexSplit "/" "foo/bar/baz" -1 }}{{ mustPush $t "qux" | join "-" }}', 'foo-bar-baz-qux'],
  ...(['chunk', 'mustChunk'] as const).flatMap((fn): Table => [
    [`{{ tuple 1 2 3 4 5 6 7 | ${fn} 3 | len }}`, '3'],
    [`{{ tuple | ${fn} 3 | len }}`, '0'],
    [`{{ range ( tuple 1 2 3 4 5 6 7 8 9 | ${fn} 3 ) }}{{. | join "-"}}|{{end}}`, '1-2-3|4-5-6|7-8-9|'],
    [`{{ range ( tuple 1 2 3 4 5 6 7 8 | ${fn} 3 ) }}{{. | join "-"}}|{{end}}`, '1-2-3|4-5-6|7-8|'],
    [`{{ range ( tuple 1 2 | ${fn} 3 ) }}{{. | join "-"}}|{{end}}`, '1-2|'],
  ]),
  ...(['prepend', 'mustPrepend'] as const).flatMap((fn): Table => [
    [`{{ $t := tuple 1 2 3  }}{{ ${fn} $t 0 | len }}`, '4'],
    [`{{ $t := tuple 1 2 3 4  }}{{ ${fn} $t 0 | join "-" }}`, '0-1-2-3-4'],
    [`{{ $t := regexSplit "/" "foo/bar/baz" -1 }}{{ ${fn} $t "qux" | join "-" }}`, 'qux-foo-bar-baz'],
  ]),
  ...(['first', 'mustFirst'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 | ${fn} }}`, '1'],
    [`{{ list | ${fn} }}`, '<no value>'],
    [`{{ regexSplit "/src/" "foo/src/bar" -1 | ${fn} }}`, 'foo'],
  ]),
  ...(['last', 'mustLast'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 | ${fn} }}`, '3'],
    [`{{ list | ${fn} }}`, '<no value>'],
    [`{{ regexSplit "/src/" "foo/src/bar" -1 | ${fn} }}`, 'bar'],
  ]),
  ...(['initial', 'mustInitial'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 | ${fn} | len }}`, '2'],
    [`{{ list 1 2 3 | ${fn} | last }}`, '2'],
    [`{{ list 1 2 3 | ${fn} | first }}`, '1'],
    [`{{ list | ${fn} }}`, '[]'],
    [`{{ regexSplit "/" "foo/bar/baz" -1 | ${fn} }}`, '[foo bar]'],
  ]),
  ...(['rest', 'mustRest'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 | ${fn} | len }}`, '2'],
    [`{{ list 1 2 3 | ${fn} | last }}`, '3'],
    [`{{ list 1 2 3 | ${fn} | first }}`, '2'],
    [`{{ list | ${fn} }}`, '[]'],
    [`{{ regexSplit "/" "foo/bar/baz" -1 | ${fn} }}`, '[bar baz]'],
  ]),
  ...(['reverse', 'mustReverse'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 | ${fn} | first }}`, '3'],
    [`{{ list 1 2 3 | ${fn} | rest | first }}`, '2'],
    [`{{ list 1 2 3 | ${fn} | last }}`, '1'],
    [`{{ list 1 2 3 4 | ${fn} }}`, '[4 3 2 1]'],
    [`{{ list 1 | ${fn} }}`, '[1]'],
    [`{{ list | ${fn} }}`, '[]'],
    [`{{ regexSplit "/" "foo/bar/baz" -1 | ${fn} }}`, '[baz bar foo]'],
  ]),
  ...(['compact', 'mustCompact'] as const).flatMap((fn): Table => [
    [`{{ list 1 0 "" "hello" | ${fn} }}`, '[1 hello]'],
    [`{{ list "" "" | ${fn} }}`, '[]'],
    [`{{ list | ${fn} }}`, '[]'],
    [`{{ regexSplit "/" "foo//bar" -1 | ${fn} }}`, '[foo bar]'],
  ]),
  ...(['uniq', 'mustUniq'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 4 | ${fn} }}`, '[1 2 3 4]'],
    [`{{ list "a" "b" "c" "d" | ${fn} }}`, '[a b c d]'],
    [`{{ list 1 1 1 1 2 2 2 2 | ${fn} }}`, '[1 2]'],
    [`{{ list "foo" 1 1 1 1 "foo" "foo" | ${fn} }}`, '[foo 1]'],
    [`{{ list | ${fn} }}`, '[]'],
    [`{{ regexSplit "/" "foo/foo/bar" -1 | ${fn} }}`, '[foo bar]'],
  ]),
  ...(['without', 'mustWithout'] as const).flatMap((fn): Table => [
    [`{{ ${fn} (list 1 2 3 4) 1 }}`, '[2 3 4]'],
    [`{{ ${fn} (list "a" "b" "c" "d") "a" }}`, '[b c d]'],
    [`{{ ${fn} (list 1 1 1 1 2) 1 }}`, '[2]'],
    [`{{ ${fn} (list) 1 }}`, '[]'],
    [`{{ ${fn} (list 1 2 3) }}`, '[1 2 3]'],
    [`{{ ${fn} list }}`, '[]'],
    [`{{ ${fn} (regexSplit "/" "foo/bar/baz" -1 ) "foo" }}`, '[bar baz]'],
  ]),
  ...(['has', 'mustHas'] as const).flatMap((fn): Table => [
    [`{{ list 1 2 3 | ${fn} 1 }}`, 'true'],
    [`{{ list 1 2 3 | ${fn} 4 }}`, 'false'],
    [`{{ regexSplit "/" "foo/bar/baz" -1 | ${fn} "bar" }}`, 'true'],
    [`{{ ${fn} "bar" nil }}`, 'false'],
  ]),
  ...(['slice', 'mustSlice'] as const).flatMap((fn): Table => [
    [`{{ ${fn} (list 1 2 3) }}`, '[1 2 3]'],
    [`{{ ${fn} (list 1 2 3) 0 1 }}`, '[1]'],
    [`{{ ${fn} (list 1 2 3) 1 3 }}`, '[2 3]'],
    [`{{ ${fn} (list 1 2 3) 1 }}`, '[2 3]'],
    [`{{ ${fn} (regexSplit "/" "foo/bar/baz" -1) 1 2 }}`, '[bar]'],
  ]),
  ['{{ concat (list 1 2 3) }}', '[1 2 3]'],
  ['{{ concat (list 1 2 3) (list 4 5) }}', '[1 2 3 4 5]'],
  ['{{ concat (list 1 2 3) (list 4 5) (list) }}', '[1 2 3 4 5]'],
  ['{{ concat (list 1 2 3) (list 4 5) (list nil) }}', '[1 2 3 4 5 <nil>]'],
  ['{{ concat (list 1 2 3) (list 4 5) (list ( list "foo" ) ) }}', '[1 2 3 4 5 [foo]]'],
]);

/** sprig's merge test data: the destination and two sources (ints as Go ints). */
function mergeData() {
  return {
    src2: { h: 10n, i: 'i', j: 'j' },
    src1: { a: 1n, b: 2n, d: { e: 'four' }, g: [6n, 7n], i: 'aye', j: 'jay', k: { l: false } },
    dst: { a: 'one', c: 3n, d: { f: 5n }, g: [8n, 9n], i: 'eye', k: { l: true } },
  };
}

table('dict_test', [
  ['{{$t := dict "I" "shot" "the" "albatross"}}{{$t.the}} {{$t.I}}', 'albatross shot'],
  [
    '{{- $d := dict "one" 1 "two" 222222 -}}{{- $_ := unset $d "two" -}}{{- range $k, $v := $d}}{{$k}}{{$v}}{{- end -}}',
    'one1',
  ],
  ['{{- $d := dict "one" 1 "two" 222222 -}}{{- if hasKey $d "one" -}}1{{- end -}}', '1'],
  [
    '{{- $d := dict "one" 1 "two" 222222 -}}{{- $d2 := dict "one" 1 "two" 33333 -}}{{- $d3 := dict "one" 1 -}}{{- $d4 := dict "one" 1 "two" 4444 -}}{{- pluck "two" $d $d2 $d3 $d4 -}}',
    '[222222 33333 4444]',
  ],
  ['{{ dict "foo" 1 "bar" 2 | keys | sortAlpha }}', '[bar foo]'],
  ['{{ dict | keys }}', '[]'],
  ['{{ keys (dict "foo" 1) (dict "bar" 2) (dict "bar" 3) | uniq | sortAlpha }}', '[bar foo]'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "two" | len -}}', '1'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "two" -}}', 'map[two:222222]'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "one" "two" | len -}}', '2'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ pick $d "one" "two" "three" | len -}}', '2'],
  ['{{- $d := dict }}{{ pick $d "two" | len -}}', '0'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" | len -}}', '1'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" -}}', 'map[two:222222]'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "one" "two" | len -}}', '0'],
  ['{{- $d := dict "one" 1 "two" 222222 }}{{ omit $d "two" "three" | len -}}', '1'],
  ['{{- $d := dict }}{{ omit $d "two" | len -}}', '0'],
  ['{{- $d := dict "one" 1 }}{{ get $d "one" -}}', '1'],
  ['{{- $d := dict "one" 1 "two" "2" }}{{ get $d "two" -}}', '2'],
  ['{{- $d := dict }}{{ get $d "two" -}}', ''],
  [
    '{{- $d := dict "one" 1 "two" 222222 -}}{{- $_ := set $d "two" 2 -}}{{- $_ := set $d "three" 3 -}}{{- if hasKey $d "one" -}}{{$d.one}}{{- end -}}{{- if hasKey $d "two" -}}{{$d.two}}{{- end -}}{{- if hasKey $d "three" -}}{{$d.three}}{{- end -}}',
    '123',
  ],
  ['{{- $d := dict "a" 1 "b" 2 }}{{ values $d | sortAlpha | join "," }}', '1,2'],
  ['{{- $d := dict "a" "first" "b" 2 }}{{ values $d | sortAlpha | join "," }}', '2,first'],
  ...(['deepCopy', 'mustDeepCopy'] as const).flatMap((fn): Table => [
    [`{{- $d := dict "a" 1 "b" 2 | ${fn} }}{{ values $d | sortAlpha | join "," }}`, '1,2'],
    [`{{- $d := dict "a" 1 "b" 2 | ${fn} }}{{ keys $d | sortAlpha | join "," }}`, 'a,b'],
    [
      `{{- $one := dict "foo" (dict "bar" "baz") "qux" true -}}{{ ${fn} $one }}`,
      'map[foo:map[bar:baz] qux:true]',
    ],
  ]),
  ['{{- $d := dict "a" (dict "b" (dict "c" 1)) }}{{ dig "a" "b" "c" "" $d }}', '1'],
  ['{{- $d := dict "a" (dict "b" (dict "c" 1)) }}{{ dig "a" "b" "z" "2" $d }}', '2'],
  ['{{ dict "a" 1 | dig "a" "" }}', '1'],
  ['{{ dict "a" 1 | dig "z" "2" }}', '2'],
]);

table('issue_188_test: merge shares the maps it takes', [
  [
    '{{- $target := dict -}}{{- $one := dict "foo" (dict "bar" "baz") "qux" true -}}{{- $two := dict "foo" (dict "bar" "baz2") "qux" false -}}{{- mergeOverwrite $target $one | toString | trunc 0 }}{{ $__ := mergeOverwrite $target $two }}{{ $one }}',
    'map[foo:map[bar:baz2] qux:true]',
  ],
  [
    '{{- $target := dict -}}{{- $one := dict "foo" (dict "bar" "baz") "qux" true -}}{{- $two := dict "foo" (dict "bar" "baz2") "qux" false -}}{{- deepCopy $one | mergeOverwrite $target | toString | trunc 0 }}{{ $__ := mergeOverwrite $target $two }}{{ $one }}',
    'map[foo:map[bar:baz] qux:true]',
  ],
]);

table('functions_test (paths, case conversions)', [
  ['{{ base "foo/bar" }}', 'bar'],
  ['{{ dir "foo/bar/baz" }}', 'foo/bar'],
  ['{{ isAbs "/foo" }}', 'true'],
  ['{{ isAbs "foo" }}', 'false'],
  ['{{ clean "/foo/../foo/../bar" }}', '/bar'],
  ['{{ ext "/foo/bar/baz.txt" }}', '.txt'],
  ['{{ osBase "foo/bar" }}', 'bar'],
  ['{{ osDir "foo/bar/baz" }}', 'foo/bar'],
  ['{{ osIsAbs "/foo" }}', 'true'],
  ['{{ osIsAbs "foo" }}', 'false'],
  ['{{ osClean "/foo/../foo/../bar" }}', '/bar'],
  ['{{ osExt "/foo/bar/baz.txt" }}', '.txt'],
  ['{{ snakecase "FirstName" }}', 'first_name'],
  ['{{ snakecase "HTTPServer" }}', 'http_server'],
  ['{{ snakecase "NoHTTPS" }}', 'no_https'],
  ['{{ snakecase "GO_PATH" }}', 'go_path'],
  ['{{ snakecase "GO PATH" }}', 'go_path'],
  ['{{ snakecase "GO-PATH" }}', 'go_path'],
  ['{{ camelcase "http_server" }}', 'HttpServer'],
  ['{{ camelcase "_camel_case" }}', '_CamelCase'],
  ['{{ camelcase "no_https" }}', 'NoHttps'],
  ['{{ camelcase "_complex__case_" }}', '_Complex_Case_'],
  ['{{ camelcase "all" }}', 'All'],
  ['{{ kebabcase "FirstName" }}', 'first-name'],
  ['{{ kebabcase "HTTPServer" }}', 'http-server'],
  ['{{ kebabcase "NoHTTPS" }}', 'no-https'],
  ['{{ kebabcase "GO_PATH" }}', 'go-path'],
  ['{{ kebabcase "GO PATH" }}', 'go-path'],
  ['{{ kebabcase "GO-PATH" }}', 'go-path'],
]);

table('network_test (offline: no name resolves but a literal address and localhost)', [
  ['{{ getHostByName "10.1.2.3" }}', '10.1.2.3'],
  ['{{ getHostByName "localhost" }}', '127.0.0.1'],
  ['{{ getHostByName "www.google.com" }}', ''],
]);

describe('flow_control_test', () => {
  it('fail stops the template with its message', () => {
    expect(() => run('{{ fail "This is an error" }}')).toThrow(/This is an error/);
  });
});

describe('dict_test: merge and mergeOverwrite', () => {
  it('merge keeps the destination, deeply, and fills what it lacks', () => {
    const data = mergeData();
    run('{{ $_ := merge .dst .src1 .src2 }}', data);
    expect(data.dst).toEqual({
      a: 'one',
      b: 2n,
      c: 3n,
      d: { e: 'four', f: 5n },
      g: [8n, 9n],
      h: 10n,
      i: 'eye',
      j: 'jay',
      k: { l: true },
    });
  });
  it('mergeOverwrite lets the later sources win, deeply', () => {
    const data = mergeData();
    run('{{ $_ := mergeOverwrite .dst .src1 .src2 }}', data);
    expect(data.dst).toEqual({
      a: 1n,
      b: 2n,
      c: 3n,
      d: { e: 'four', f: 5n },
      g: [6n, 7n],
      h: 10n,
      i: 'i',
      j: 'j',
      k: { l: false },
    });
  });
});

table(
  'defaults_test',
  [
    ['{{"" | default "foo"}}', 'foo'],
    ['{{default "foo" 234}}', '234'],
    ['{{default "foo" 2.34}}', '2.34'],
    ['{{ .Nothing | default "123" }}', '123'],
    ['{{ default "123" }}', '123'],
    ['{{if empty 1}}1{{else}}0{{end}}', '0'],
    ['{{if empty 0}}1{{else}}0{{end}}', '1'],
    ['{{if empty ""}}1{{else}}0{{end}}', '1'],
    ['{{if empty 0.0}}1{{else}}0{{end}}', '1'],
    ['{{if empty false}}1{{else}}0{{end}}', '1'],
    ['{{if empty .top.NoSuchThing}}1{{else}}0{{end}}', '1'],
    ['{{ coalesce 1 }}', '1'],
    ['{{ coalesce "" 0 nil 2 }}', '2'],
    ['{{ $two := 2 }}{{ coalesce "" 0 nil $two }}', '2'],
    ['{{ $two := 2 }}{{ coalesce "" $two 0 0 0 }}', '2'],
    ['{{ $two := 2 }}{{ coalesce "" $two 3 4 5 }}', '2'],
    ['{{ coalesce }}', '<no value>'],
    ['{{ all 1 }}', 'true'],
    ['{{ all "" 0 nil 2 }}', 'false'],
    ['{{ $two := 2 }}{{ all "" 0 nil $two }}', 'false'],
    ['{{ $two := 2 }}{{ all "" $two 0 0 0 }}', 'false'],
    ['{{ $two := 2 }}{{ all "" $two 3 4 5 }}', 'false'],
    ['{{ all }}', 'true'],
    ['{{ any 1 }}', 'true'],
    ['{{ any "" 0 nil 2 }}', 'true'],
    ['{{ $two := 2 }}{{ any "" 0 nil $two }}', 'true'],
    ['{{ $two := 2 }}{{ any "" $two 3 4 5 }}', 'true'],
    ['{{ $zero := 0 }}{{ any "" $zero 0 0 0 }}', 'false'],
    ['{{ any }}', 'false'],
    // Helm's fromJson (a map), and sprig's mustFromJson (any JSON value)
    ['{{ .json | fromJson }}', 'map[foo:55]'],
    ['{{ (.json | fromJson).foo }}', '55'],
    ['{{ .json | mustFromJson }}', 'map[foo:55]'],
    ['{{ (.json | mustFromJson).foo }}', '55'],
    ['{{ mustFromJson "[1, \\"a\\"]" }}', '[1 a]'],
    ['{{ .top | toJson }}', '{"bool":true,"number":42,"string":"test"}'],
    ['{{ .top | toPrettyJson }}', '{\n  "bool": true,\n  "number": 42,\n  "string": "test"\n}'],
    ['{{ .html | toRawJson }}', '{"bool":true,"html":"<HEAD>","number":42,"string":"test"}'],
    ['{{true | ternary "foo" "bar"}}', 'foo'],
    ['{{ternary "foo" "bar" true}}', 'foo'],
    ['{{false | ternary "foo" "bar"}}', 'bar'],
    ['{{ternary "foo" "bar" false}}', 'bar'],
  ],
  {
    top: { bool: true, string: 'test', number: 42n },
    html: { bool: true, string: 'test', number: 42n, html: '<HEAD>' },
    json: '{"foo": 55}',
  },
);

/**
 * Four of sprig's defaults cases read a field of a missing key (`.bottom.NoSuchThing`). Sprig runs
 * them with Go's default missingkey option, where that is no value; Helm runs every chart with
 * missingkey=zero, where the missing key is a nil interface and its field Go's error. We render
 * as Helm does: these are the error, not sprig's "1", "airplane", "false", "true".
 */
describe('defaults_test cases that differ under Helm (missingkey=zero)', () => {
  it.each([
    '{{if empty .bottom.NoSuchThing}}1{{else}}0{{end}}',
    '{{ coalesce .top.NoSuchThing .bottom .bottom.dollar "airplane"}}',
    '{{ all .top.NoSuchThing .bottom .bottom.dollar "airplane"}}',
    '{{ any .top.NoSuchThing .bottom .bottom.dollar "airplane"}}',
  ])('%s', (tpl) => {
    expect(() => run(tpl, { top: {} })).toThrow(
      /nil pointer evaluating interface \{\}\.(NoSuchThing|dollar)/,
    );
  });
});

describe('defaults_test: mustFromJson fails where fromJson swallows', () => {
  it('mustFromJson of text that is not JSON is an error', () => {
    expect(() => run('{{ mustFromJson "{nope" }}')).toThrow(/error calling mustFromJson/);
  });
  it('fromJson of text that is not JSON is a map with Error', () => {
    expect(run('{{ (fromJson "{nope").Error | empty }}')).toBe('false');
  });
});
