/**
 * Sprig v3.3's test tables, continued (sprig-conformance.test.ts has strings, numeric, list, dict
 * and defaults): reflect, regex, url, date, crypto shapes, and Go's checks of typed parameters.
 * The cases are sprig's facts; the tests are ours.
 */
import { describe, expect, it } from 'vitest';
import bcryptjs from 'bcryptjs';
import { GoStruct } from '../../../src/mirror/helm/template/values.js';
import { JUNE13, run, table, type Table } from './sprig-table.js';

const FIXTURE = new GoStruct('*sprig.fixtureTO', { Name: 'hello', Value: 'world' });
describe('reflect_test', () => {
  it.each([
    ['{{typeOf .}}', FIXTURE, '*sprig.fixtureTO'],
    ['{{kindOf .}}', new GoStruct('sprig.fixtureTO', { Name: 'hello', Value: 'world' }), 'struct'],
    ['{{kindOf .}}', ['hello'], 'slice'],
    ['{{if typeIs "*sprig.fixtureTO" .}}t{{else}}f{{end}}', FIXTURE, 't'],
    ['{{if typeIs "*sprig.fixtureTO" .}}t{{else}}f{{end}}', 'hello', 'f'],
    ['{{if typeIsLike "string" .}}t{{else}}f{{end}}', 'foo', 't'],
    ['{{if kindIs "ptr" .}}t{{else}}f{{end}}', FIXTURE, 't'],
    ['{{if kindIs "ptr" .}}t{{else}}f{{end}}', 'hello', 'f'],
  ] as [string, unknown, string][])('%s', (tpl, data, want) => {
    expect(run(tpl, data)).toBe(want);
  });
});

const EMAIL = '[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\\\.[A-Za-z]{2,}';
table('regex_test', [
  ...(['regexMatch', 'mustRegexMatch'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "${EMAIL}" "test@acme.com" }}`, 'true'],
    [`{{ ${fn} "${EMAIL}" "Test@Acme.Com" }}`, 'true'],
    [`{{ ${fn} "${EMAIL}" "test" }}`, 'false'],
    [`{{ ${fn} "${EMAIL}" "test.com" }}`, 'false'],
    [`{{ ${fn} "${EMAIL}" "test@acme" }}`, 'false'],
  ]),
  ...(['regexFindAll', 'mustRegexFindAll'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "a{2}" "aa" -1 | len }}`, '1'],
    [`{{ ${fn} "a{2}" "aaaaaaaa" 1 | len }}`, '1'],
    [`{{ ${fn} "a{2}" "aaaa" -1 | len }}`, '2'],
    [`{{ ${fn} "a{2}" "none" -1 | len }}`, '0'],
  ]),
  ...(['regexFind', 'mustRegexFind'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "fo.?" "foorbar" }}`, 'foo'],
    [`{{ ${fn} "fo.?" "foo foe fome" }}`, 'foo'],
    [`{{ ${fn} "fo.?" "none" }}`, ''],
  ]),
  ...(['regexReplaceAll', 'mustRegexReplaceAll'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "T" }}`, '-T-T-'],
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "$1" }}`, '--xx-'],
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "$1W" }}`, '---'],
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "\${1}W" }}`, '-W-xxW-'],
  ]),
  ...(['regexReplaceAllLiteral', 'mustRegexReplaceAllLiteral'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "T" }}`, '-T-T-'],
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "$1" }}`, '-$1-$1-'],
    [`{{ ${fn} "a(x*)b" "-ab-axxb-" "\${1}" }}`, '-${1}-${1}-'],
  ]),
  ...(['regexSplit', 'mustRegexSplit'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "a" "banana" -1 | len }}`, '4'],
    [`{{ ${fn} "a" "banana" 0 | len }}`, '0'],
    [`{{ ${fn} "a" "banana" 1 | len }}`, '1'],
    [`{{ ${fn} "a" "banana" 2 | len }}`, '2'],
    [`{{ ${fn} "z+" "pizza" -1 | len }}`, '2'],
    [`{{ ${fn} "z+" "pizza" 0 | len }}`, '0'],
    [`{{ ${fn} "z+" "pizza" 1 | len }}`, '1'],
    [`{{ ${fn} "z+" "pizza" 2 | len }}`, '2'],
  ]),
  ['{{ regexQuoteMeta "1.2.3" }}', '1\\.2\\.3'],
  ['{{ regexQuoteMeta "pretzel" }}', 'pretzel'],
]);

table('semver_test', [
  ['{{ semverCompare "1.2.3" "1.2.3" }}', 'true'],
  ['{{ semverCompare "^1.2.0" "1.2.3" }}', 'true'],
  ['{{ semverCompare "^1.2.0" "2.2.3" }}', 'false'],
  ['{{ $s := semver "1.2.3-beta.1+c0ff33" }}{{ $s.Prerelease }}', 'beta.1'],
  ['{{ $s := semver "1.2.3-beta.1+c0ff33" }}{{ $s.Major}}', '1'],
  ['{{ semver "1.2.3" | (semver "1.2.3").Compare }}', '0'],
  ['{{ semver "1.2.3" | (semver "1.3.3").Compare }}', '1'],
  ['{{ semver "1.4.3" | (semver "1.2.3").Compare }}', '-1'],
]);

/** sprig's url_test: a URL and the dict urlParse makes of it (urlJoin writes the URL back). */
const URLS: [string, Record<string, string>][] = [
  [
    'proto://auth@host:80/path?query#fragment',
    {
      fragment: 'fragment',
      host: 'host:80',
      hostname: 'host',
      opaque: '',
      path: '/path',
      query: 'query',
      scheme: 'proto',
      userinfo: 'auth',
    },
  ],
  [
    'proto://host:80/path',
    {
      fragment: '',
      host: 'host:80',
      hostname: 'host',
      opaque: '',
      path: '/path',
      query: '',
      scheme: 'proto',
      userinfo: '',
    },
  ],
  [
    'something',
    {
      fragment: '',
      host: '',
      hostname: '',
      opaque: '',
      path: 'something',
      query: '',
      scheme: '',
      userinfo: '',
    },
  ],
  [
    'proto://user:passwor%20d@host:80/path',
    {
      fragment: '',
      host: 'host:80',
      hostname: 'host',
      opaque: '',
      path: '/path',
      query: '',
      scheme: 'proto',
      userinfo: 'user:passwor%20d',
    },
  ],
  [
    'proto://host:80/pa%20th?key=val%20ue',
    {
      fragment: '',
      host: 'host:80',
      hostname: 'host',
      opaque: '',
      path: '/pa th',
      query: 'key=val%20ue',
      scheme: 'proto',
      userinfo: '',
    },
  ],
];

describe('url_test', () => {
  it.each(URLS)('urlParse %s', (url, parts) => {
    expect(JSON.parse(run('{{ urlParse .u | toJson }}', { u: url }))).toEqual(parts);
  });
  it.each(URLS)('urlJoin writes %s back', (url, parts) => {
    expect(run('{{ urlJoin .d }}', { d: parts })).toBe(url);
  });
  it.each([
    ['{{ index ( urlParse "proto://auth@host:80/path?query#fragment" ) "host" }}', 'host:80'],
    [
      '{{ urlJoin (dict "fragment" "fragment" "host" "host:80" "path" "/path" "query" "query" "scheme" "proto") }}',
      'proto://host:80/path?query#fragment',
    ],
    [
      '{{ urlJoin (dict "fragment" "fragment" "host" "host:80" "path" "/path" "scheme" "proto" "userinfo" "ASDJKJSD") }}',
      'proto://ASDJKJSD@host:80/path#fragment',
    ],
  ])('%s', (tpl, want) => {
    expect(run(tpl)).toBe(want);
  });
});

table(
  'date_test',
  [
    ['{{ .t | htmlDate }}', '2019-06-13'],
    ['{{toDate "2006-01-02" "2017-12-31" | date "02/01/2006"}}', '31/12/2017'],
    ['{{unixEpoch .t}}', '1560458379'],
    ['{{ date_in_zone "02 Jan 06 15:04 -0700" .t "UTC" }}', '13 Jun 19 20:39 +0000'],
    ['{{ date_in_zone "02 Jan 06 15:04 -0700" .epoch "UTC" }}', '13 Jun 19 20:39 +0000'],
    ['{{ date_in_zone "02 Jan 06 15:04 -0700" .t "foobar" }}', '13 Jun 19 20:39 +0000'],
    ['{{ duration "61" }}', '1m1s'],
    ['{{ duration "3600" }}', '1h0m0s'],
    ['{{ duration "93784" }}', '26h3m4s'],
    ['{{ durationRound "2h5s" }}', '2h'],
    ['{{ durationRound "24h5s" }}', '1d'],
    ['{{ durationRound "2400h5s" }}', '3mo'],
    ['{{ date_modify "24h" .t | date "2006-01-02 15:04:05 -0700 MST" }}', '2019-06-14 20:39:39 +0000 UTC'],
    // Go's facts beyond sprig's tables: zones, layouts, durations
    ['{{ htmlDateInZone .t "Asia/Tokyo" }}', '2019-06-14'],
    ['{{ dateInZone "2006-01-02T15:04:05Z07:00" .t "America/New_York" }}', '2019-06-13T16:39:39-04:00'],
    ['{{ dateInZone "15:04 MST" .t "America/New_York" }}', '16:39 EDT'],
    ['{{ dateInZone "15:04 MST" .t "Europe/Berlin" }}', '22:39 CEST'],
    ['{{ dateInZone "15:04 MST -0700" .t "Asia/Kolkata" }}', '02:09 IST +0530'],
    ['{{ dateInZone "15:04 MST" .t "America/Sao_Paulo" }}', '17:39 -03'],
    ['{{ dateModify "-1.5h" .t | date "15:04" }}', '19:09'],
    ['{{ dateModify "bogus" .t | date "15:04" }}', '20:39'],
    ['{{ toDate "2006-01-02" "nope" | date "2006" }}', '0001'],
    ['{{ duration (int64 90) }}', '1m30s'],
    ['{{ duration .float }}', '0s'],
    ['{{ durationRound "90s" }}', '1m'],
    ['{{ durationRound "-3h" }}', '3h'],
    ['{{ durationRound "1s" }}', '0s'],
  ],
  { t: JUNE13, epoch: 1560458379n, float: 61 },
);

describe('date_test: ago, mustDateModify', () => {
  it('ago gives the time since, to the second', () => {
    expect(run('{{ ago .t }}', { t: new Date(Date.now() - 125_000) })).toBe('2m5s');
    expect(run('{{ ago .t }}', { t: new Date(Date.now() - (2 * 3600 + 34 * 60 + 17) * 1000) })).toBe(
      '2h34m17s',
    );
    expect(run('{{ ago .t }}', { t: new Date(Date.now() + 5000) })).toBe('-5s');
  });
  it.each(['must_date_modify', 'mustDateModify'])('%s of a bad duration is an error', (fn) => {
    expect(() => run(`{{ ${fn} "1f" .t }}`, { t: JUNE13 })).toThrow(
      /time: unknown unit "f" in duration "1f"/,
    );
  });
});

describe('crypto_test (shapes; values that are random are checked for their form)', () => {
  it.each([
    [
      'sha512sum',
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    ],
    ['sha256sum', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['sha1sum', 'a9993e364706816aba3e25717850c26c9cd0d89d'],
    ['adler32sum', '38600999'],
  ])('%s "abc"', (fn, want) => {
    expect(run(`{{ "abc" | ${fn} }}`)).toBe(want);
  });
  it('bcrypt gives a Go-shaped hash ($2a$, cost 10) that checks against the password', () => {
    const out = run('{{ "abc" | bcrypt }}');
    expect(out).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
    expect(bcryptjs.compareSync('abc', out)).toBe(true);
  });
  it.each([
    ['myUser', 'myPassword'],
    ["special'o79Cv_*qFe,)<user", 'special<j7+3p#6-.Jx2U:m8G;kGypassword'],
  ])('htpasswd %s gives user:bcrypt', (user, password) => {
    const out = run('{{ htpasswd .u .p }}', { u: user, p: password });
    const [name, hash] = [out.slice(0, out.indexOf(':')), out.slice(out.indexOf(':') + 1)];
    expect(name).toBe(user);
    expect(bcryptjs.compareSync(password, hash)).toBe(true);
  });
  it('htpasswd refuses a user with a colon, in its output', () => {
    expect(run('{{ htpasswd "wrongus:er" "x" }}')).toBe('invalid username: wrongus:er');
  });
  it('randBytes gives that many random bytes in base64, different each time', () => {
    const a = run('{{ randBytes 12 }}');
    expect(Buffer.from(a, 'base64')).toHaveLength(12);
    expect(run('{{ randBytes 12 }}')).not.toBe(a);
  });
  it('uuidv4 is a UUID, different each time', () => {
    const a = run('{{ uuidv4 }}');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(run('{{ uuidv4 }}')).not.toBe(a);
  });
  it.each([
    ['{{derivePassword 1 "long" "password" "user" "example.com"}}', 'ZedaFaxcZaso9*'],
    ['{{derivePassword 2 "long" "password" "user" "example.com"}}', 'Fovi2@JifpTupx'],
    ['{{derivePassword 1 "maximum" "password" "user" "example.com"}}', 'pf4zS1LjCg&LjhsZ7T2~'],
    ['{{derivePassword 1 "medium" "password" "user" "example.com"}}', 'ZedJuz8$'],
    ['{{derivePassword 1 "basic" "password" "user" "example.com"}}', 'pIS54PLs'],
    ['{{derivePassword 1 "short" "password" "user" "example.com"}}', 'Zed5'],
    ['{{derivePassword 1 "pin" "password" "user" "example.com"}}', '6685'],
  ])('%s', (tpl, want) => {
    expect(run(tpl)).toBe(want);
  });
  it('encryptAES then decryptAES gives the text back; the ciphertext is IV and blocks in base64', () => {
    const enc = run('{{ encryptAES "secretkey" "plaintext" }}');
    expect(Buffer.from(enc, 'base64')).toHaveLength(32);
    expect(run('{{ decryptAES "secretkey" .e }}', { e: enc })).toBe('plaintext');
    expect(run('{{ encryptAES "secretkey" "" }}')).toBe('');
  });
  it.each(['randAlphaNum', 'randAlpha', 'randAscii', 'randNumeric'])('%s 5 is five characters', (fn) => {
    expect(run(`{{ ${fn} 5 }}`)).toHaveLength(5);
  });
});

table('paths (Go path and path/filepath on Linux)', [
  ...(['base', 'osBase'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "foo/bar/baz.txt" }}`, 'baz.txt'],
    [`{{ ${fn} "/a/b/" }}`, 'b'],
    [`{{ ${fn} "" }}`, '.'],
    [`{{ ${fn} "///" }}`, '/'],
  ]),
  ...(['dir', 'osDir'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "foo/bar/baz" }}`, 'foo/bar'],
    [`{{ ${fn} "/a/b/" }}`, '/a/b'],
    [`{{ ${fn} "baz" }}`, '.'],
    [`{{ ${fn} "/" }}`, '/'],
    [`{{ ${fn} "" }}`, '.'],
  ]),
  ...(['clean', 'osClean'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "foo/bar/../baz" }}`, 'foo/baz'],
    [`{{ ${fn} "a//b/./c/" }}`, 'a/b/c'],
    [`{{ ${fn} "/../a" }}`, '/a'],
    [`{{ ${fn} "../../a/.." }}`, '../..'],
    [`{{ ${fn} "" }}`, '.'],
  ]),
  ...(['ext', 'osExt'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "foo.bar/baz.tar.gz" }}`, '.gz'],
    [`{{ ${fn} "foo.bar/baz" }}`, ''],
    [`{{ ${fn} "a/.hidden" }}`, '.hidden'],
  ]),
  ...(['isAbs', 'osIsAbs'] as const).flatMap((fn): Table => [
    [`{{ ${fn} "/foo" }}`, 'true'],
    [`{{ ${fn} "foo" }}`, 'false'],
  ]),
]);

describe("Go's type checks on typed parameters (Helm errors, so do we)", () => {
  it.each([
    ['{{ randInt 0 .Values.n }}', /wrong type for value; expected int; got float64/],
    ['{{ base 1 }}', /wrong type for value; expected string; got int/],
    ['{{ wrapWith 5 "x" .Values.none }}', /invalid value; expected string/],
    ['{{ randInt 5 5 }}', /invalid argument to Intn/],
    ['{{ unixEpoch "2020" }}', /expected time.Time; got string/],
  ])('%s', (tpl, why) => {
    expect(() => run(tpl, { Values: { n: 5 } })).toThrow(why);
  });
});
