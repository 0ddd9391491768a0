/**
 * Masterminds/semver v3.3 (what sprig v3.3, and so Helm 3, builds with) as its own test tables
 * state it: which versions parse, how versions compare, which constraints parse, and which
 * versions a constraint admits, restated through the template functions charts call (semver,
 * semverCompare). The cases are the library's facts; the tests are ours.
 */
import { describe, expect, it } from 'vitest';
import { TemplateSet } from '../../../src/mirror/helm/template/template.js';

function run(text: string, data: unknown = {}): string {
  const set = new TemplateSet();
  set.parse('t', text);
  return set.execute('t', data);
}

/** semverCompare's answer for a constraint and a version. */
const admits = (c: string, v: string) => run('{{ semverCompare .c .v }}', { c, v }) === 'true';

/** TestConstraintCheck: one constraint, one version. */
const CONSTRAINT_CHECK: [string, string, boolean][] = [
  ['=2.0.0', '1.2.3', false],
  ['=2.0.0', '2.0.0', true],
  ['=2.0', '1.2.3', false],
  ['=2.0', '2.0.0', true],
  ['=2.0', '2.0.1', true],
  ['4.1', '4.1.0', true],
  ['!=4.1.0', '4.1.0', false],
  ['!=4.1.0', '4.1.1', true],
  ['!=4.1', '4.1.0', false],
  ['!=4.1', '4.1.1', false],
  ['!=4.1', '5.1.0-alpha.1', false],
  ['!=4.1-alpha', '4.1.0', true],
  ['!=4.1', '5.1.0', true],
  ['<11', '0.1.0', true],
  ['<11', '11.1.0', false],
  ['<1.1', '0.1.0', true],
  ['<1.1', '1.1.0', false],
  ['<1.1', '1.1.1', false],
  ['<=11', '1.2.3', true],
  ['<=11', '12.2.3', false],
  ['<=11', '11.2.3', true],
  ['<=1.1', '1.2.3', false],
  ['<=1.1', '0.1.0', true],
  ['<=1.1', '1.1.0', true],
  ['<=1.1', '1.1.1', true],
  ['>1.1', '4.1.0', true],
  ['>1.1', '1.1.0', false],
  ['>0', '0', false],
  ['>0', '1', true],
  ['>0', '0.0.1-alpha', false],
  ['>0.0', '0.0.1-alpha', false],
  ['>0-0', '0.0.1-alpha', false],
  ['>0.0-0', '0.0.1-alpha', false],
  ['>0', '0.0.0-alpha', false],
  ['>0-0', '0.0.0-alpha', false],
  ['>0.0.0-0', '0.0.0-alpha', true],
  ['>1.2.3-alpha.1', '1.2.3-alpha.2', true],
  ['>1.2.3-alpha.1', '1.3.3-alpha.2', true],
  ['>11', '11.1.0', false],
  ['>11.1', '11.1.0', false],
  ['>11.1', '11.1.1', false],
  ['>11.1', '11.2.1', true],
  ['>=11', '11.1.2', true],
  ['>=11.1', '11.1.2', true],
  ['>=11.1', '11.0.2', false],
  ['>=1.1', '4.1.0', true],
  ['>=1.1', '1.1.0', true],
  ['>=1.1', '0.0.9', false],
  ['>=0', '0.0.1-alpha', false],
  ['>=0.0', '0.0.1-alpha', false],
  ['>=0-0', '0.0.1-alpha', true],
  ['>=0.0-0', '0.0.1-alpha', true],
  ['>=0', '0.0.0-alpha', false],
  ['>=0-0', '0.0.0-alpha', true],
  ['>=0.0.0-0', '0.0.0-alpha', true],
  ['>=0.0.0-0', '1.2.3', true],
  ['>=0.0.0-0', '3.4.5-beta.1', true],
  ['<0', '0.0.0-alpha', false],
  ['<0-z', '0.0.0-alpha', true],
  ['>=0', '0', true],
  ['=0', '1', false],
  ['*', '1', true],
  ['*', '4.5.6', true],
  ['*', '1.2.3-alpha.1', false],
  ['*-0', '1.2.3-alpha.1', true],
  ['2.*', '1', false],
  ['2.*', '3.4.5', false],
  ['2.*', '2.1.1', true],
  ['2.1.*', '2.1.1', true],
  ['2.1.*', '2.2.1', false],
  ['2', '1', false],
  ['2', '3.4.5', false],
  ['2', '2.1.1', true],
  ['2.1', '2.1.1', true],
  ['2.1', '2.2.1', false],
  ['~1.2.3', '1.2.4', true],
  ['~1.2.3', '1.3.4', false],
  ['~1.2', '1.2.4', true],
  ['~1.2', '1.3.4', false],
  ['~1', '1.2.4', true],
  ['~1', '2.3.4', false],
  ['~0.2.3', '0.2.5', true],
  ['~0.2.3', '0.3.5', false],
  ['~1.2.3-beta.2', '1.2.3-beta.4', true],
  ['~1.2.3-beta.2', '1.2.4-beta.2', true],
  ['~1.2.3-beta.2', '1.3.4-beta.2', false],
  ['^1.2.3', '1.8.9', true],
  ['^1.2.3', '2.8.9', false],
  ['^1.2.3', '1.2.1', false],
  ['^1.1.0', '2.1.0', false],
  ['^1.2.0', '2.2.1', false],
  ['^1.2.0', '1.2.1-alpha.1', false],
  ['^1.2.0-alpha.0', '1.2.1-alpha.1', true],
  ['^1.2.0-alpha.0', '1.2.1-alpha.0', true],
  ['^1.2.0-alpha.2', '1.2.0-alpha.1', false],
  ['^1.2', '1.8.9', true],
  ['^1.2', '2.8.9', false],
  ['^1', '1.8.9', true],
  ['^1', '2.8.9', false],
  ['^0.2.3', '0.2.5', true],
  ['^0.2.3', '0.5.6', false],
  ['^0.2', '0.2.5', true],
  ['^0.2', '0.5.6', false],
  ['^0.0.3', '0.0.3', true],
  ['^0.0.3', '0.0.4', false],
  ['^0.0', '0.0.3', true],
  ['^0.0', '0.1.4', false],
  ['^0.0', '1.0.4', false],
  ['^0', '0.2.3', true],
  ['^0', '1.1.4', false],
  ['^0.2.3-beta.2', '0.2.3-beta.4', true],
  ['^0.2.3-beta.2', '0.2.4-beta.2', true],
  ['^0.2.3-beta.2', '0.3.4-beta.2', false],
  ['^0.2.3-beta.2', '0.2.3-beta.2', true],
];

/** TestConstraintsCheck: constraint lists (`,`, spaces, `||`, hyphen ranges). */
const CONSTRAINTS_CHECK: [string, string, boolean][] = [
  ['*', '1.2.3', true],
  ['~0.0.0', '1.2.3', true],
  ['0.x.x', '1.2.3', false],
  ['0.0.x', '1.2.3', false],
  ['0.0.0', '1.2.3', false],
  ['*', '1.2.3', true],
  ['^0.0.0', '1.2.3', false],
  ['= 2.0', '1.2.3', false],
  ['= 2.0', '2.0.0', true],
  ['4.1', '4.1.0', true],
  ['4.1.x', '4.1.3', true],
  ['1.x', '1.4', true],
  ['!=4.1', '4.1.0', false],
  ['!=4.1-alpha', '4.1.0-alpha', false],
  ['!=4.1-alpha', '4.1.1-alpha', false],
  ['!=4.1-alpha', '4.1.0', true],
  ['!=4.1', '5.1.0', true],
  ['!=4.x', '5.1.0', true],
  ['!=4.x', '4.1.0', false],
  ['!=4.1.x', '4.2.0', true],
  ['!=4.2.x', '4.2.3', false],
  ['>1.1', '4.1.0', true],
  ['>1.1', '1.1.0', false],
  ['<1.1', '0.1.0', true],
  ['<1.1', '1.1.0', false],
  ['<1.1', '1.1.1', false],
  ['<1.x', '1.1.1', false],
  ['<1.x', '0.1.1', true],
  ['<1.x', '2.0.0', false],
  ['<1.1.x', '1.2.1', false],
  ['<1.1.x', '1.1.500', false],
  ['<1.1.x', '1.0.500', true],
  ['<1.2.x', '1.1.1', true],
  ['>=1.1', '4.1.0', true],
  ['>=1.1', '4.1.0-beta', false],
  ['>=1.1', '1.1.0', true],
  ['>=1.1', '0.0.9', false],
  ['<=1.1', '0.1.0', true],
  ['<=1.1', '0.1.0-alpha', false],
  ['<=1.1-a', '0.1.0-alpha', true],
  ['<=1.1', '1.1.0', true],
  ['<=1.x', '1.1.0', true],
  ['<=2.x', '3.0.0', false],
  ['<=1.1', '1.1.1', true],
  ['<=1.1.x', '1.2.500', false],
  ['<=4.5', '3.4.0', true],
  ['<=4.5', '3.7.0', true],
  ['<=4.5', '4.6.3', false],
  ['>1.1, <2', '1.1.1', false],
  ['>1.1, <2', '1.2.1', true],
  ['>1.1, <3', '4.3.2', false],
  ['>=1.1, <2, !=1.2.3', '1.2.3', false],
  ['>1.1 <2', '1.1.1', false],
  ['>1.1 <2', '1.2.1', true],
  ['>1.1 <3', '4.3.2', false],
  ['>=1.1 <2 !=1.2.3', '1.2.3', false],
  ['>=1.1, <2, !=1.2.3 || > 3', '4.1.2', true],
  ['>=1.1, <2, !=1.2.3 || > 3', '3.1.2', false],
  ['>=1.1, <2, !=1.2.3 || >= 3', '3.0.0', true],
  ['>=1.1, <2, !=1.2.3 || > 3', '3.0.0', false],
  ['>=1.1, <2, !=1.2.3 || > 3', '1.2.3', false],
  ['>=1.1 <2 !=1.2.3', '1.2.3', false],
  ['>=1.1 <2 !=1.2.3 || > 3', '4.1.2', true],
  ['>=1.1 <2 !=1.2.3 || > 3', '3.1.2', false],
  ['>=1.1 <2 !=1.2.3 || >= 3', '3.0.0', true],
  ['>=1.1 <2 !=1.2.3 || > 3', '3.0.0', false],
  ['>=1.1 <2 !=1.2.3 || > 3', '1.2.3', false],
  ['> 1.1, < 2', '1.1.1', false],
  ['> 1.1, <2', '1.2.1', true],
  ['>1.1, < 3', '4.3.2', false],
  ['>= 1.1, < 2, !=1.2.3', '1.2.3', false],
  ['> 1.1 < 2', '1.1.1', false],
  ['>1.1 < 2', '1.2.1', true],
  ['> 1.1 <3', '4.3.2', false],
  ['>=1.1 < 2 != 1.2.3', '1.2.3', false],
  ['>= 1.1, <2, !=1.2.3 || > 3', '4.1.2', true],
  ['>= 1.1, <2, != 1.2.3 || > 3', '3.1.2', false],
  ['>= 1.1, <2, != 1.2.3 || >= 3', '3.0.0', true],
  ['>= 1.1, <2, !=1.2.3 || > 3', '3.0.0', false],
  ['>= 1.1, <2, !=1.2.3 || > 3', '1.2.3', false],
  ['>= 1.1 <2 != 1.2.3', '1.2.3', false],
  ['>= 1.1 <2 != 1.2.3 || > 3', '4.1.2', true],
  ['>= 1.1 <2 != 1.2.3 || > 3', '3.1.2', false],
  ['>= 1.1 <2 != 1.2.3 || >= 3', '3.0.0', true],
  ['>= 1.1 < 2 !=1.2.3 || > 3', '3.0.0', false],
  ['>=1.1 < 2 !=1.2.3 || > 3', '1.2.3', false],
  ['1.1 - 2', '1.1.1', true],
  ['1.5.0 - 4.5', '3.7.0', true],
  ['1.1-3', '4.3.2', false],
  ['^1.1', '1.1.1', true],
  ['^1.1', '4.3.2', false],
  ['^1.x', '1.1.1', true],
  ['^2.x', '1.1.1', false],
  ['^1.x', '2.1.1', false],
  ['^1.x', '1.1.1-beta1', false],
  ['^1.1.2-alpha', '1.2.1-beta1', true],
  ['^1.2.x-alpha', '1.1.1-beta1', false],
  ['^0.0.1', '0.0.1', true],
  ['^0.0.1', '0.3.1', false],
  ['~*', '2.1.1', true],
  ['~1', '2.1.1', false],
  ['~1', '1.3.5', true],
  ['~1', '1.4', true],
  ['~1.x', '2.1.1', false],
  ['~1.x', '1.3.5', true],
  ['~1.x', '1.4', true],
  ['~1.1', '1.1.1', true],
  ['~1.1', '1.1.1-alpha', false],
  ['~1.1-alpha', '1.1.1-beta', true],
  ['~1.1.1-beta', '1.1.1-alpha', false],
  ['~1.1.1-beta', '1.1.1', true],
  ['~1.2.3', '1.2.5', true],
  ['~1.2.3', '1.2.2', false],
  ['~1.2.3', '1.3.2', false],
  ['~1.1', '1.2.3', false],
  ['~1.3', '2.4.5', false],
  ['1.0.0 - 2.0.0 <=2.0.0', '1.5.0', true],
  ['1.0.0 - 2.0.0, <=2.0.0', '1.5.0', true],
];

/** TestNewVersion: text, and whether NewVersion refuses it. */
const NEW_VERSION: [string, boolean][] = [
  ['1.2.3', false],
  ['1.2.3-alpha.01', true],
  ['1.2.3+test.01', false],
  ['1.2.3-alpha.-1', false],
  ['v1.2.3', false],
  ['1.0', false],
  ['v1.0', false],
  ['1', false],
  ['v1', false],
  ['1.2.beta', true],
  ['v1.2.beta', true],
  ['foo', true],
  ['1.2-5', false],
  ['v1.2-5', false],
  ['1.2-beta.5', false],
  ['v1.2-beta.5', false],
  ['\n1.2', true],
  ['\nv1.2', true],
  ['1.2.0-x.Y.0+metadata', false],
  ['v1.2.0-x.Y.0+metadata', false],
  ['1.2.0-x.Y.0+metadata-width-hypen', false],
  ['v1.2.0-x.Y.0+metadata-width-hypen', false],
  ['1.2.3-rc1-with-hypen', false],
  ['v1.2.3-rc1-with-hypen', false],
  ['1.2.3.4', true],
  ['v1.2.3.4', true],
  ['1.2.2147483648', false],
  ['1.2147483648.3', false],
  ['2147483648.3.0', false],
  ['12.3.4.1234', true],
  ['12.23.4.1234', true],
  ['12.3.34.1234', true],
  ['20221209-update-renovatejson-v4', false],
];

/** TestCompare: a.Compare(b). */
const COMPARE: [string, string, number][] = [
  ['1.2.3', '1.5.1', -1],
  ['2.2.3', '1.5.1', 1],
  ['2.2.3', '2.2.2', 1],
  ['3.2-beta', '3.2-beta', 0],
  ['1.3', '1.1.4', 1],
  ['4.2', '4.2-beta', 1],
  ['4.2-beta', '4.2', -1],
  ['4.2-alpha', '4.2-beta', -1],
  ['4.2-alpha', '4.2-alpha', 0],
  ['4.2-beta.2', '4.2-beta.1', 1],
  ['4.2-beta2', '4.2-beta1', 1],
  ['4.2-beta', '4.2-beta.2', -1],
  ['4.2-beta', '4.2-beta.foo', -1],
  ['4.2-beta.2', '4.2-beta', 1],
  ['4.2-beta.foo', '4.2-beta', 1],
  ['1.2+bar', '1.2+baz', 0],
  ['1.0.0-beta.4', '1.0.0-beta.-2', -1],
  ['1.0.0-beta.-2', '1.0.0-beta.-3', -1],
  ['1.0.0-beta.-3', '1.0.0-beta.5', 1],
];

/** TestNewConstraint: constraint text, and whether NewConstraint refuses it. */
const NEW_CONSTRAINT: [string, boolean][] = [
  ['>= 1.1', false],
  ['>40.50.60, < 50.70', false],
  ['2.0', false],
  ['v2.3.5-20161202202307-sha.e8fc5e5', false],
  ['>= bar', true],
  ['BAR >= 1.2.3', true],
  ['>= 1.2.3 < 2.0', false],
  ['>= 1.2.3 < 2.0 || => 3.0 < 4', false],
  ['>= 1.2.3, < 2.0', false],
  ['>= 1.2.3, < 2.0 || => 3.0, < 4', false],
  ['3 - 4 || => 3.0, < 4', false],
  ['12.3.4.1234', true],
  ['12.23.4.1234', true],
  ['12.3.34.1234', true],
  ['12.3.34 ~1.2.3', false],
  ['12.3.34~ 1.2.3', true],
  ['1.0.0 - 2.0.0, <=2.0.0', false],
  // TestParseConstraint's texts
  ['>= 1.2', false],
  ['1.0', false],
  ['foo', true],
  ['<= 1.2', false],
  ['=< 1.2', false],
  ['=> 1.2', false],
  ['v1.2', false],
  ['=1.5', false],
  ['> 1.3', false],
  ['< 1.4.1', false],
  ['< 40.50.10', false],
];

describe('constraints_test: TestConstraintCheck', () => {
  it.each(CONSTRAINT_CHECK)('%j admits %j: %s', (c, v, want) => {
    expect(admits(c, v)).toBe(want);
  });
});

/**
 * TestConstraintCheck also parses the empty constraint (as `*`: it admits 1 and 4.5.6, not
 * 1.2.3-alpha.1), through parseConstraint. semverCompare parses with NewConstraint, whose
 * validation refuses "": in Helm it is an error, and so it is here.
 */
describe('constraints_test: the empty constraint, through semverCompare', () => {
  it.each(['1', '4.5.6', '1.2.3-alpha.1'])('"" with %j is an error', (v) => {
    expect(() => admits('', v)).toThrow(/improper constraint/);
  });
});

describe('constraints_test: TestConstraintsCheck', () => {
  it.each(CONSTRAINTS_CHECK)('%j admits %j: %s', (c, v, want) => {
    expect(admits(c, v)).toBe(want);
  });
});

describe('constraints_test: TestNewConstraint', () => {
  it.each(NEW_CONSTRAINT)('%j is refused: %s', (c, refused) => {
    const parse = () => run('{{ semverCompare .c "1.0.0" }}', { c });
    if (refused) expect(parse).toThrow(/error calling semverCompare/);
    else expect(parse).not.toThrow();
  });
});

describe('version_test: TestNewVersion', () => {
  it.each(NEW_VERSION)('%j is refused: %s', (v, refused) => {
    const parse = () => run('{{ (semver .v).Major }}', { v });
    if (refused) expect(parse).toThrow(/Invalid Semantic Version/);
    else expect(parse).not.toThrow();
  });
});

describe('version_test: TestCompare', () => {
  it.each(COMPARE)('%j compared with %j is %d', (a, b, want) => {
    expect(run('{{ (semver .a).Compare (semver .b) }}', { a, b })).toBe(String(want));
  });
});

/** TestInc: a version, how it is incremented, its String() and its Original() after. */
const INC: [string, string, string, string][] = [
  ['1.2.3', '1.2.4', 'Patch', '1.2.4'],
  ['v1.2.4', '1.2.5', 'Patch', 'v1.2.5'],
  ['1.2.3', '1.3.0', 'Minor', '1.3.0'],
  ['v1.2.4', '1.3.0', 'Minor', 'v1.3.0'],
  ['1.2.3', '2.0.0', 'Major', '2.0.0'],
  ['v1.2.4', '2.0.0', 'Major', 'v2.0.0'],
  ['1.2.3+meta', '1.2.4', 'Patch', '1.2.4'],
  ['1.2.3-beta+meta', '1.2.3', 'Patch', '1.2.3'],
  ['v1.2.4-beta+meta', '1.2.4', 'Patch', 'v1.2.4'],
  ['1.2.3-beta+meta', '1.3.0', 'Minor', '1.3.0'],
  ['v1.2.4-beta+meta', '1.3.0', 'Minor', 'v1.3.0'],
  ['1.2.3-beta+meta', '2.0.0', 'Major', '2.0.0'],
  ['v1.2.4-beta+meta', '2.0.0', 'Major', 'v2.0.0'],
];

describe('version_test: TestInc', () => {
  it.each(INC)('%j gives %j by Inc%s', (v, want, how, original) => {
    expect(run(`{{ $n := (semver .v).Inc${how} }}{{ $n }} {{ $n.Original }}`, { v })).toBe(
      `${want} ${original}`,
    );
  });
});

/** TestLessThan, TestLessThanEqual, TestGreaterThan, TestGreaterThanEqual, TestEqual (non-nil cases). */
const ORDER: [string, string, string, boolean][] = [
  ['LessThan', '1.2.3', '1.5.1', true],
  ['LessThan', '2.2.3', '1.5.1', false],
  ['LessThan', '3.2-beta', '3.2-beta', false],
  ['LessThanEqual', '1.2.3', '1.5.1', true],
  ['LessThanEqual', '2.2.3', '1.5.1', false],
  ['LessThanEqual', '1.5.1', '1.5.1', true],
  ['GreaterThan', '1.2.3', '1.5.1', false],
  ['GreaterThan', '2.2.3', '1.5.1', true],
  ['GreaterThan', '3.2-beta', '3.2-beta', false],
  ['GreaterThan', '3.2.0-beta.1', '3.2.0-beta.5', false],
  ['GreaterThan', '3.2-beta.4', '3.2-beta.2', true],
  ['GreaterThan', '7.43.0-SNAPSHOT.99', '7.43.0-SNAPSHOT.103', false],
  ['GreaterThan', '7.43.0-SNAPSHOT.FOO', '7.43.0-SNAPSHOT.103', true],
  ['GreaterThan', '7.43.0-SNAPSHOT.99', '7.43.0-SNAPSHOT.BAR', false],
  ['GreaterThanEqual', '1.2.3', '1.5.1', false],
  ['GreaterThanEqual', '2.2.3', '1.5.1', true],
  ['GreaterThanEqual', '1.5.1', '1.5.1', true],
  ['Equal', '1.2.3', '1.5.1', false],
  ['Equal', '2.2.3', '1.5.1', false],
  ['Equal', '3.2-beta', '3.2-beta', true],
  ['Equal', '3.2-beta+foo', '3.2-beta+bar', true],
];

describe('version_test: LessThan, LessThanEqual, GreaterThan, GreaterThanEqual, Equal', () => {
  it.each(ORDER)('%s(%j, %j) is %s', (method, a, b, want) => {
    expect(run(`{{ (semver .a).${method} (semver .b) }}`, { a, b })).toBe(String(want));
  });
});
