import { describe, expect, it } from 'vitest';
import { compareSemver, compileGoRegexp, parseSemver } from '../../../src/mirror/isc/index.js';
import { parseVersion, semverHint } from '../../../src/mirror/isc/semver.js';
import { didYouMean, editDistance } from '../../../src/config/suggest.js';

describe('parseSemver (strict)', () => {
  it('accepts MAJOR.MINOR.PATCH with prerelease and build', () => {
    expect(parseSemver('4.18.1')).toMatchObject({ major: 4, minor: 18, patch: 1, prerelease: [], build: [] });
    expect(parseSemver('4.19.0-202509300824')?.prerelease).toEqual([202509300824n]);
    expect(parseSemver('4.19.5-rhodf')?.prerelease).toEqual(['rhodf']);
    expect(parseSemver('1.0.0-rc.1+build.5')).toMatchObject({
      prerelease: ['rc', 1n],
      build: ['build', '5'],
    });
    expect(parseSemver('0.0.0')).toBeDefined();
  });

  it('refuses loose forms', () => {
    for (const bad of [
      '4.18',
      '4',
      'v4.18.1',
      '04.1.0',
      '4.18.1-',
      '4.18.1-01',
      '4.18.1+',
      '4.18.1.2',
      ' 4.18.1',
      'x',
    ]) {
      expect(parseSemver(bad), bad).toBeUndefined();
    }
  });

  it('hints at the fix', () => {
    expect(semverHint('v4.18.1')).toBe('drop the "v": 4.18.1');
    expect(semverHint('4.18')).toBe('write a full version: 4.18.0');
    expect(semverHint('4')).toBe('write a full version: 4.0.0');
    expect(semverHint('4.018.0')).toMatch(/leading zeros/);
  });

  it('orders by semver precedence', () => {
    const order = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.2.0',
      '1.10.0',
      '2.0.0',
    ];
    for (let i = 0; i + 1 < order.length; i++) {
      const a = parseSemver(order[i])!;
      const b = parseSemver(order[i + 1])!;
      expect(compareSemver(a, b), `${order[i]} < ${order[i + 1]}`).toBe(-1);
      expect(compareSemver(b, a)).toBe(1);
    }
    expect(compareSemver(parseSemver('1.0.0+a')!, parseSemver('1.0.0+b')!)).toBe(0);
  });
});

describe('compileGoRegexp', () => {
  const compiles = (p: string) => compileGoRegexp(p).ok;

  it('compiles what Go compiles and matches unanchored', () => {
    const r = compileGoRegexp('registry.redhat.io/ubi8/ubi:fake');
    expect(r.ok && r.regexp.test('docker://registry.redhat.io/ubi8/ubi:fake')).toBe(true);
    expect(compiles('^quay\\.io/.*-operator@sha256:[a-f0-9]{64}$')).toBe(true);
    expect(compiles('[]a]')).toBe(true); // ']' first in a class is a literal in RE2
  });

  it('translates RE2 spellings', () => {
    const ci = compileGoRegexp('(?i)^QUAY\\.io/');
    expect(ci.ok && ci.regexp.test('quay.io/x')).toBe(true);
    const named = compileGoRegexp('(?P<repo>[[:lower:]]+)/x\\z');
    expect(named.ok && named.regexp.exec('abc/x')?.groups?.repo).toBe('abc');
    expect(named.ok && named.regexp.test('abc/x\n')).toBe(false);
    const quoted = compileGoRegexp('\\Qa.b*\\E$');
    expect(quoted.ok && quoted.regexp.test('a.b*')).toBe(true);
    expect(quoted.ok && quoted.regexp.test('aXb')).toBe(false);
    const hex = compileGoRegexp('\\x{41}\\101');
    expect(hex.ok && hex.regexp.test('AA')).toBe(true);
  });

  it('refuses what Go refuses, even where JavaScript would accept it', () => {
    for (const bad of [
      'a(?=b)',
      'a(?!b)',
      '(?<=a)b',
      '(a)\\1',
      '\\e',
      'a{1001}',
      '[[:nope:]]',
      '(?P=n)',
      'x\\',
    ]) {
      expect(compileGoRegexp(bad).ok, bad).toBe(false);
    }
  });

  it('refuses broken patterns with the reason', () => {
    const r = compileGoRegexp('quay.io/(foo');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/unterminated group/i);
    expect(compileGoRegexp('*a').ok).toBe(false);
    expect(compileGoRegexp('[z-a]').ok).toBe(false);
    expect(compileGoRegexp('[abc').ok).toBe(false);
  });
});

describe('suggestions', () => {
  it('counts a transposition as one edit', () => {
    expect(editDistance('tagret', 'target')).toBe(1);
    expect(editDistance('nmae', 'name')).toBe(1);
  });

  it('suggests the closest allowed key, or nothing', () => {
    expect(didYouMean('tagret', ['name', 'targetRepo', 'targetTag', 'platforms'])).toBe(
      'did you mean targetTag?',
    );
    expect(didYouMean('target', ['name', 'targetRepo', 'targetTag', 'platforms'])).toBe(
      'did you mean targetRepo or targetTag?',
    );
    expect(didYouMean('arch', ['architectures', 'platforms'])).toBe('did you mean architectures?');
    expect(didYouMean('TargetTag', ['targetTag'])).toBe('did you mean targetTag?');
    expect(didYouMean('foo', ['name', 'url', 'charts'])).toBeUndefined();
  });
});

describe('parseVersion (as oc-mirror reads minVersion/maxVersion)', () => {
  it('accepts a leading v and missing minor/patch like Masterminds semver, and nothing looser', () => {
    expect(parseVersion('v4.18.1')).toMatchObject({ major: 4, minor: 18, patch: 1, raw: 'v4.18.1' });
    expect(parseVersion('4.18')).toMatchObject({ major: 4, minor: 18, patch: 0 });
    expect(parseVersion('4')).toMatchObject({ major: 4, minor: 0, patch: 0 });
    expect(parseVersion('4.18-rc.1')).toMatchObject({ minor: 18, patch: 0, prerelease: ['rc', 1n] });
    for (const bad of ['4.x', '1.2.3.4', 'v', '', '04.1.0', '4.18.1-'] as const)
      expect(parseVersion(bad)).toBeUndefined();
  });

  it('keeps the order: v4.18 sorts with 4.18.0', () => {
    expect(compareSemver(parseVersion('v4.18')!, parseVersion('4.18.0')!)).toBe(0);
    expect(compareSemver(parseVersion('4.18')!, parseVersion('4.18.1')!)).toBeLessThan(0);
  });
});
