/**
 * The lexer against the cases of Go's text/template/parse lexer tests (lexTests, the delimiter
 * tests and the position tests), re-expressed as our own tokens. Differences in shape, not in
 * behaviour: Go emits comments as items, ours drops them (the parser never sees a comment); Go's
 * itemChar is our `comma` for `,` and `punct` for other punctuation; a complex number is a
 * `number` token here (the parser refuses it).
 */
import { describe, expect, it } from 'vitest';
import { lex, type LexOptions, type TokenType } from '../../../src/mirror/helm/template/lexer.js';

type Item = [TokenType, string];

const items = (src: string, options?: LexOptions): Item[] =>
  lex('lex', src, options).map((t) => [t.type, t.value] as Item);

const L: Item = ['leftDelim', '{{'];
const R: Item = ['rightDelim', '}}'];
const SP: Item = ['space', ' '];
const EOF: Item = ['eof', ''];
const num = (v: string): Item => ['number', v];
const text = (v: string): Item => ['text', v];

function lexError(src: string, options?: LexOptions): string {
  try {
    lex('lex', src, options);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`expected a lex error for ${JSON.stringify(src)}`);
}

const RAW = '`abc\\n\\t\\" `';
const RAW_NL = '`now is{{\n}}the time`';

/** Go's lexTests, as [name, input, our tokens]. */
const LEX_CASES: [string, string, Item[]][] = [
  ['empty', '', [EOF]],
  ['spaces', ' \t\n', [text(' \t\n'), EOF]],
  ['text', 'now is the time', [text('now is the time'), EOF]],
  ['text with comment', 'hello-{{/* this is a comment */}}-world', [text('hello-'), text('-world'), EOF]],
  ['punctuation', '{{,@% }}', [L, ['comma', ','], ['punct', '@'], ['punct', '%'], SP, R, EOF]],
  [
    'parens',
    '{{((3))}}',
    [L, ['leftParen', '('], ['leftParen', '('], num('3'), ['rightParen', ')'], ['rightParen', ')'], R, EOF],
  ],
  ['empty action', '{{}}', [L, R, EOF]],
  ['for', '{{for}}', [L, ['identifier', 'for'], R, EOF]],
  [
    'block',
    '{{block "foo" .}}',
    [L, ['keyword', 'block'], SP, ['string', '"foo"'], SP, ['dot', '.'], R, EOF],
  ],
  ['quote', '{{"abc \\n\\t\\" "}}', [L, ['string', '"abc \\n\\t\\" "'], R, EOF]],
  ['raw quote', `{{${RAW}}}`, [L, ['rawString', RAW], R, EOF]],
  ['raw quote with newline', `{{${RAW_NL}}}`, [L, ['rawString', RAW_NL], R, EOF]],
  [
    'numbers',
    '{{1 02 0x14 0X14 -7.2i 1e3 1E3 +1.2e-4 4.2i 1+2i 1_2 0x1.e_fp4 0X1.E_FP4}}',
    [
      L,
      ...[
        '1',
        '02',
        '0x14',
        '0X14',
        '-7.2i',
        '1e3',
        '1E3',
        '+1.2e-4',
        '4.2i',
        '1+2i',
        '1_2',
        '0x1.e_fp4',
      ].flatMap((n) => [num(n), SP]),
      num('0X1.E_FP4'),
      R,
      EOF,
    ],
  ],
  [
    'characters',
    "{{'a' '\\n' '\\'' '\\\\' '\\u00FF' '\\xFF' '本'}}",
    [
      L,
      ...["'a'", "'\\n'", "'\\''", "'\\\\'", "'\\u00FF'", "'\\xFF'"].flatMap((c): Item[] => [
        ['char', c],
        SP,
      ]),
      ['char', "'本'"],
      R,
      EOF,
    ],
  ],
  ['bools', '{{true false}}', [L, ['bool', 'true'], SP, ['bool', 'false'], R, EOF]],
  ['dot', '{{.}}', [L, ['dot', '.'], R, EOF]],
  ['nil', '{{nil}}', [L, ['nil', 'nil'], R, EOF]],
  [
    'dots',
    '{{.x . .2 .x.y.z}}',
    [
      L,
      ['field', '.x'],
      SP,
      ['dot', '.'],
      SP,
      num('.2'),
      SP,
      ['field', '.x'],
      ['field', '.y'],
      ['field', '.z'],
      R,
      EOF,
    ],
  ],
  [
    'keywords',
    '{{range if else end with}}',
    [
      L,
      ...['range', 'if', 'else', 'end'].flatMap((k): Item[] => [['keyword', k], SP]),
      ['keyword', 'with'],
      R,
      EOF,
    ],
  ],
  [
    'variables',
    '{{$c := printf $ $hello $23 $ $var.Field .Method}}',
    [
      L,
      ['variable', '$c'],
      SP,
      ['declare', ':='],
      SP,
      ['identifier', 'printf'],
      SP,
      ...['$', '$hello', '$23', '$'].flatMap((v): Item[] => [['variable', v], SP]),
      ['variable', '$var'],
      ['field', '.Field'],
      SP,
      ['field', '.Method'],
      R,
      EOF,
    ],
  ],
  ['variable invocation', '{{$x 23}}', [L, ['variable', '$x'], SP, num('23'), R, EOF]],
  [
    'pipeline',
    'intro {{echo hi 1.2 |noargs|args 1 "hi"}} outro',
    [
      text('intro '),
      L,
      ['identifier', 'echo'],
      SP,
      ['identifier', 'hi'],
      SP,
      num('1.2'),
      SP,
      ['pipe', '|'],
      ['identifier', 'noargs'],
      ['pipe', '|'],
      ['identifier', 'args'],
      SP,
      num('1'),
      SP,
      ['string', '"hi"'],
      R,
      text(' outro'),
      EOF,
    ],
  ],
  ['declaration', '{{$v := 3}}', [L, ['variable', '$v'], SP, ['declare', ':='], SP, num('3'), R, EOF]],
  [
    '2 declarations',
    '{{$v , $w := 3}}',
    [
      L,
      ['variable', '$v'],
      SP,
      ['comma', ','],
      SP,
      ['variable', '$w'],
      SP,
      ['declare', ':='],
      SP,
      num('3'),
      R,
      EOF,
    ],
  ],
  [
    'field of parenthesized expression',
    '{{(.X).Y}}',
    [L, ['leftParen', '('], ['field', '.X'], ['rightParen', ')'], ['field', '.Y'], R, EOF],
  ],
  [
    'trimming spaces before and after',
    'hello- {{- 3 -}} -world',
    [text('hello-'), L, num('3'), R, text('-world'), EOF],
  ],
  [
    'trimming spaces before and after comment',
    'hello- {{- /* hello */ -}} -world',
    [text('hello-'), text('-world'), EOF],
  ],
  ['long pipeline deadlock', '{{|||||}}', [L, ...Array<Item>(5).fill(['pipe', '|']), R, EOF]],
  ['unmatched right delimiter', 'hello-{.}}-world', [text('hello-{.}}-world'), EOF]],
];

describe('Go lexTests: items', () => {
  it.each(LEX_CASES)('%s', (_name, src, want) => {
    expect(items(src)).toEqual(want);
  });
});

describe('Go lexTests: errors', () => {
  const cases: [string, string, string][] = [
    ['badchar', '#{{\x01}}', 'unrecognized character in action: U+0001'],
    ['unclosed action', '{{', 'unclosed action'],
    ['EOF in action', '{{range', 'unclosed action'],
    ['unclosed quote', '{{"\n"}}', 'unterminated quoted string'],
    ['unclosed raw quote', '{{`xx}}', 'unterminated raw quoted string'],
    ['unclosed char constant', "{{'\n}}", 'unterminated character constant'],
    ['bad number', '{{3k}}', 'bad number syntax: "3k"'],
    ['unclosed paren', '{{(3}}', 'unclosed left paren'],
    ['extra right paren', '{{3)}}', 'unexpected right paren'],
    ['text with bad comment', 'hello-{{/*/}}-world', 'unclosed comment'],
    [
      'text with comment close separated from delim',
      'hello-{{/* */ }}-world',
      'comment ends before closing delimiter',
    ],
  ];
  it.each(cases)('%s', (_name, src, want) => {
    expect(lexError(src)).toMatch(new RegExp(`^template: lex:\\d+:\\d+: ${want.replace(/[()+]/g, '\\$&')}$`));
  });
});

describe('Go lexer: delimiters', () => {
  const opts = { left: '$$', right: '@@' };
  const DL: Item = ['leftDelim', '$$'];
  const DR: Item = ['rightDelim', '@@'];
  it.each<[string, string, Item[]]>([
    [
      'punctuation',
      '$$,@%{{}}@@',
      [
        DL,
        ['comma', ','],
        ['punct', '@'],
        ['punct', '%'],
        ['punct', '{'],
        ['punct', '{'],
        ['punct', '}'],
        ['punct', '}'],
        DR,
        EOF,
      ],
    ],
    ['empty action', '$$@@', [DL, DR, EOF]],
    ['for', '$$for@@', [DL, ['identifier', 'for'], DR, EOF]],
    ['quote', '$$"abc \\n\\t\\" "@@', [DL, ['string', '"abc \\n\\t\\" "'], DR, EOF]],
    ['raw quote', `$$${RAW}@@`, [DL, ['rawString', RAW], DR, EOF]],
  ])('%s', (_name, src, want) => {
    expect(items(src, opts)).toEqual(want);
  });

  it('takes a right delimiter that starts with a letter', () => {
    expect(items('{{hub .host hub}}', { left: '{{hub', right: 'hub}}' })).toEqual([
      ['leftDelim', '{{hub'],
      SP,
      ['field', '.host'],
      SP,
      ['rightDelim', 'hub}}'],
      EOF,
    ]);
  });

  it('takes delimiters that look like trim markers', () => {
    expect(items('{{- .x -}} {{- - .x - -}}', { left: '{{- ', right: ' -}}' })).toEqual([
      ['leftDelim', '{{- '],
      ['field', '.x'],
      ['rightDelim', ' -}}'],
      ['leftDelim', '{{- '],
      ['field', '.x'],
      ['rightDelim', ' -}}'],
      EOF,
    ]);
  });
});

describe('Go lexer: positions', () => {
  const positioned = (src: string) => lex('lex', src).map((t) => [t.type, t.pos, t.value]);
  it.each<[string, string, [TokenType, number, string][]]>([
    ['empty', '', [['eof', 0, '']]],
    [
      'punctuation',
      '{{,@%#}}',
      [
        ['leftDelim', 0, '{{'],
        ['comma', 2, ','],
        ['punct', 3, '@'],
        ['punct', 4, '%'],
        ['punct', 5, '#'],
        ['rightDelim', 6, '}}'],
        ['eof', 8, ''],
      ],
    ],
    [
      'sample',
      '0123{{hello}}xyz',
      [
        ['text', 0, '0123'],
        ['leftDelim', 4, '{{'],
        ['identifier', 6, 'hello'],
        ['rightDelim', 11, '}}'],
        ['text', 13, 'xyz'],
        ['eof', 16, ''],
      ],
    ],
    [
      'trimafter',
      '{{x -}}\n{{y}}',
      [
        ['leftDelim', 0, '{{'],
        ['identifier', 2, 'x'],
        ['rightDelim', 5, '}}'],
        ['leftDelim', 8, '{{'],
        ['identifier', 10, 'y'],
        ['rightDelim', 11, '}}'],
        ['eof', 13, ''],
      ],
    ],
    [
      'trimbefore',
      '{{x}}\n{{- y}}',
      [
        ['leftDelim', 0, '{{'],
        ['identifier', 2, 'x'],
        ['rightDelim', 3, '}}'],
        ['leftDelim', 6, '{{'],
        ['identifier', 10, 'y'],
        ['rightDelim', 11, '}}'],
        ['eof', 13, ''],
      ],
    ],
    [
      'longcomment',
      '{{/*\n*/}}\n{{undefinedFunction "test"}}',
      [
        ['text', 9, '\n'],
        ['leftDelim', 10, '{{'],
        ['identifier', 12, 'undefinedFunction'],
        ['space', 29, ' '],
        ['string', 30, '"test"'],
        ['rightDelim', 36, '}}'],
        ['eof', 38, ''],
      ],
    ],
  ])('%s', (_name, src, want) => {
    expect(positioned(src)).toEqual(want);
  });

  it('names the line an unclosed action ends on, and the line it started on', () => {
    expect(lexError('line1\n{{"x"\n"y"\n')).toBe('template: lex:4:0: unclosed action started at lex:2');
    expect(lexError('line1\n{{')).toBe('template: lex:2:2: unclosed action');
  });
});

describe('Go lexer: identifiers end at a terminator', () => {
  it('refuses a word glued to a character that cannot follow it', () => {
    expect(lexError('{{a#}}')).toBe("template: lex:1:3: bad character U+0023 '#'");
    expect(lexError('{{$x=3}}')).toBe("template: lex:1:4: bad character U+003D '='");
    expect(items('{{$x:=3}}')).toEqual([L, ['variable', '$x'], ['declare', ':='], num('3'), R, EOF]);
  });

  it('reads break and continue as names when a function has them', () => {
    expect(items('{{break}}', { breakOK: false })).toEqual([L, ['identifier', 'break'], R, EOF]);
    expect(items('{{continue}}')).toEqual([L, ['keyword', 'continue'], R, EOF]);
  });
});
