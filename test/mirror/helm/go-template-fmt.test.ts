/**
 * Go's fmt as charts reach it through print, printf and println: the verbs, flags, widths and
 * error notes (`%!d(float64=1.5)`, MISSING, EXTRA) Go writes, with values shaped as Helm's are
 * (YAML numbers are float64, literals int). Facts from Go's fmt documentation and behaviour.
 */
import { describe, expect, it } from 'vitest';
import { exec } from './go-template-data.js';

const values = {
  port: 8080,
  ratio: 1.5,
  name: 'web',
  utf: '日本',
  tags: ['a', 'b'],
  labels: { tier: 'front', app: 'web', replicas: 3 },
  nested: { b: [1, { z: 1.5, a: null }], a: 'x' },
  nothing: null,
  on: true,
};

describe('printf: verbs charts use', () => {
  it.each<[string, string]>([
    ['{{printf "%v" .labels}}', 'map[app:web replicas:3 tier:front]'],
    ['{{printf "%v" .nested}}', 'map[a:x b:[1 map[a:<nil> z:1.5]]]'],
    ['{{printf "%s" .labels}}', 'map[app:web replicas:%!s(float64=3) tier:front]'],
    [
      '{{printf "%d" .labels}}',
      'map[%!d(string=app):%!d(string=web) %!d(string=replicas):%!d(float64=3) %!d(string=tier):%!d(string=front)]',
    ],
    ['{{printf "%v" .tags}}', '[a b]'],
    ['{{printf "%q" .tags}}', '["a" "b"]'],
    ['{{printf "%q" .name}}', '"web"'],
    ['{{printf "%q" "a\\"b\\n"}}', '"a\\"b\\n"'],
    ['{{printf "%#q" .name}}', '`web`'],
    ['{{printf "%x" .name}}', '776562'],
    ['{{printf "%X" .name}}', '776562'],
    ['{{printf "%x" 255}}', 'ff'],
    ['{{printf "%x" -255}}', '-ff'],
    ['{{printf "%#x" 255}}', '0xff'],
    ['{{printf "%#06x" 1}}', '0x000001'],
    ['{{printf "%o %#o %O %b" 8 8 8 5}}', '10 010 0o10 101'],
    ['{{printf "%d" .port}}', '%!d(float64=8080)'],
    ['{{printf "%d" 8080}}', '8080'],
    ['{{printf "%v" .port}}', '8080'],
    ['{{printf "%s" 5}}', '%!s(int=5)'],
    ['{{printf "%s" .on}}', '%!s(bool=true)'],
    ['{{printf "%t" .on}}', 'true'],
    ['{{printf "%s" .nothing}}', '%!s(<nil>)'],
    ['{{printf "%d" .nothing}}', '%!d(<nil>)'],
    ['{{printf "%v" .nothing}}', '<nil>'],
    ['{{printf "%f %.2f %5.1f|" .ratio .ratio .ratio}}', '1.500000 1.50   1.5|'],
    ['{{printf "%08.3f" -1.5}}', '-001.500'],
    ['{{printf "%e %E" 123456.789 123456.789}}', '1.234568e+05 1.234568E+05'],
    ['{{printf "%g %g %g" 1e21 100000.0 0.00001}}', '1e+21 100000 1e-05'],
    ['{{printf "%v %v" 1000000.0 123456789.0}}', '1e+06 1.23456789e+08'],
    ['{{printf "%05d|%-5d|%+d|% d" 42 42 42 42}}', '00042|42   |+42| 42'],
    ['{{printf "%06d" -42}}', '-00042'],
    ['{{printf "%05.2d|%.0d|" 1 0}}', '   01||'],
    ['{{printf "%5s|%-5s|%.2s" .utf .utf "日本語"}}', '   日本|日本   |日本'],
    ['{{printf "%c %q %q %U %#U" 26085 39 97 65 65}}', "日 '\\'' 'a' U+0041 U+0041 'A'"],
    [
      '{{printf "%T %T %T %T %T %T" 1 1.5 "s" .tags .labels .nothing}}',
      'int float64 string []interface {} map[string]interface {} <nil>',
    ],
    ['{{printf "%d %d" 1}}', '1 %!d(MISSING)'],
    ['{{printf "%d" 1 2 "x"}}', '1%!(EXTRA int=2, string=x)'],
    ['{{printf "100%%"}}', '100%'],
    ['{{printf "%z" 1}}', '%!z(int=1)'],
    ['{{printf "%"}}', '%!(NOVERB)'],
    ['{{printf "%*d|%-*d|" 4 7 4 7}}', '   7|7   |'],
    ['{{printf "%05s|%-05s|%06q" "ab" "ab" "ab"}}', '000ab|ab   |00"ab"'],
    ['{{printf "%05s|%5d" 7 "x"}}', '%!s(int=7)|%!d(string=x)'],
    ['{{printf "%[1]s-%[1]s" .name}}', 'web-web'],
    ['{{printf "%[2]d %[1]d" 11 22}}', '22 11'],
    ['{{printf "%d %d %#[1]x %#x" 16 17}}', '16 17 0x10 0x11'],
    ['{{printf "%[3]*.[2]*[1]f" 12.0 2 6}}', ' 12.00'],
    ['{{printf "%[3]d|%[0]d|%[x]d|%[1]d" 1}}', '%!d(BADINDEX)|%!d(BADINDEX)|%!d(BADINDEX)|1'],
    ['{{printf "%[2]s" "a" "b" "c"}}', 'b'],
    ['{{printf "% x|%#x|% #X|%.1x" "hi" "hi" "hi" "hi"}}', '68 69|0x6869|0X68 0X69|68'],
    [
      '{{printf "%q|%+q|%#q|%#q" "日本\u200b" "日本" "tab\there" "new\\nline"}}',
      '"日本\\u200b"|"\\u65e5\\u672c"|`tab\there`|"new\\nline"',
    ],
    ['{{printf "%.2q" "abc"}}', '"ab"'],
  ])('%s', (text, want) => {
    expect(exec(text, values)).toBe(want);
  });
});

describe('print and println', () => {
  it.each<[string, string]>([
    ['{{print 1 2 "a" 3 .ratio .on}}', '1 2a3 1.5 true'],
    ['{{print "a" "b"}}', 'ab'],
    ['{{print .nothing}}', '<nil>'],
    ['{{print .labels}}', 'map[app:web replicas:3 tier:front]'],
    ['{{println "a" 1 "b"}}', 'a 1 b\n'],
    ['{{println}}', '\n'],
  ])('%s', (text, want) => {
    expect(exec(text, values)).toBe(want);
  });
});
