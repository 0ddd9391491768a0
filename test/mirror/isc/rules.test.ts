import { describe, expect, it } from 'vitest';
import { parseImageSetConfig, positionOf } from '../../../src/mirror/isc/index.js';
import { HEADER, parseError, problemsOf, yamlOf } from './helpers.js';
import { IscErrorCode } from '../../../src/mirror/isc/errors.js';

describe("oc-mirror's validation rules", () => {
  const operators = (...lines: string[]) =>
    yamlOf(
      ...HEADER,
      '  operators:',
      '  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18',
      ...lines,
    );

  it('duplicate package in a catalog, at the second one, naming the first line', () => {
    const e = parseError(operators('    packages:', '    - name: foo', '    - name: bar', '    - name: foo'));
    expect(e.code).toBe(IscErrorCode.Duplicate);
    expect(e.where).toBe('isc.yaml:9:13');
    expect(e.message).toBe(
      'package "foo" of catalog "registry.redhat.io/redhat/redhat-operator-index:v4.18" is listed twice (first at line 7)',
    );
  });

  it('duplicate catalogs (same targets), channels in a package, and release channels', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  platform:',
        '    channels: [{name: stable-4.18}, {name: stable-4.18}]',
        '  operators:',
        '  - catalog: reg/idx:v1',
        '    packages: [{name: p, channels: [{name: c}, {name: c}]}]',
        '  - catalog: reg/idx:v1',
        '    targetTag: other',
        '  - catalog: reg/idx:v1',
      ),
    );
    expect(problemsOf(e).map((p) => [p.code, p.where])).toEqual([
      [IscErrorCode.Duplicate, 'isc.yaml:5:44'],
      [IscErrorCode.Duplicate, 'isc.yaml:8:55'],
      [IscErrorCode.Duplicate, 'isc.yaml:11:14'],
    ]);
    expect(problemsOf(e).map((p) => p.message)).toEqual([
      'release channel "stable-4.18" is listed twice (first at line 5, column 23)',
      'channel "c" of package "p" is listed twice (first at line 8, column 44)',
      'catalog "reg/idx:v1" is listed twice (first at line 7)',
    ]);
  });

  it('bad semver, with hints', () => {
    const e = parseError(
      operators(
        '    packages:',
        '    - name: a',
        '      minVersion: 1.2.3.4', // line 8
        '    - name: b',
        '      channels:',
        '      - name: stable',
        '        maxVersion: "4.x"', // line 12
      ),
    );
    expect(problemsOf(e).map((p) => [p.code, p.message, p.where, p.hint])).toEqual([
      [
        IscErrorCode.Invalid,
        'mirror.operators[0].packages[0].minVersion "1.2.3.4" is not a semantic version',
        'isc.yaml:8:19',
        'write MAJOR.MINOR.PATCH, optionally with -prerelease and +build, e.g. 4.18.1 or 5.8.0-rc.1',
      ],
      [
        IscErrorCode.Invalid,
        'mirror.operators[0].packages[1].channels[0].maxVersion "4.x" is not a semantic version',
        'isc.yaml:12:21',
        'write MAJOR.MINOR.PATCH, optionally with -prerelease and +build, e.g. 4.18.1 or 5.8.0-rc.1',
      ],
    ]);
    const rel = parseError(
      yamlOf(
        ...HEADER,
        '  platform:',
        '    channels:',
        '    - name: stable-4.18',
        '      minVersion: 4.18.01',
      ),
    );
    expect([rel.code, rel.where]).toEqual([IscErrorCode.Invalid, 'isc.yaml:7:19']);
  });

  it('minVersion above maxVersion', () => {
    const e = parseError(
      operators('    packages:', '    - name: a', '      minVersion: 1.10.0', '      maxVersion: 1.9.0'),
    );
    expect(e.message).toBe('mirror.operators[0].packages[0].minVersion 1.10.0 is above maxVersion 1.9.0');
  });

  it('package-level and channel-level ranges together', () => {
    const e = parseError(
      operators(
        '    packages:',
        '    - name: a',
        '      minVersion: 1.0.0',
        '      channels:',
        '      - name: s',
        '        maxVersion: 2.0.0',
      ),
    );
    expect([e.code, e.where]).toEqual([IscErrorCode.Conflict, 'isc.yaml:11:9']);
    expect(e.message).toMatch(/cannot be mixed/);
  });

  it('full: true with a version range on the same catalog', () => {
    const e = parseError(
      operators('    full: true', '    packages:', '    - name: a', '      maxVersion: 1.0.0'),
    );
    expect([e.code, e.where]).toEqual([IscErrorCode.Conflict, 'isc.yaml:9:7']);
    expect(e.message).toBe(
      'mirror.operators[0].packages[0].maxVersion cannot be used with full: true on its catalog',
    );
  });

  it('platforms together with architectures', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  platform:',
        '    architectures: [amd64]',
        '    platforms:',
        '    - {os: linux, architecture: arm64}',
      ),
    );
    expect([e.code, e.where]).toEqual([IscErrorCode.Conflict, 'isc.yaml:6:5']);
    expect(e.message).toBe(
      'mirror.platform.platforms and mirror.platform.architectures cannot be used together',
    );
  });

  it('blocked images must be valid Go regular expressions', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  blockedImages:',
        '  - name: "quay.io/(foo"',
        '  - name: ^quay\\.io/.*$',
        '  - name: "a(?!b)"',
      ),
    );
    const problems = problemsOf(e);
    expect(problems.map((p) => [p.code, p.path, p.where])).toEqual([
      [IscErrorCode.Invalid, 'mirror.blockedImages[0].name', 'isc.yaml:5:11'],
      [IscErrorCode.Invalid, 'mirror.blockedImages[2].name', 'isc.yaml:7:11'],
    ]);
    expect(problems[0].message).toMatch(
      /^blocked image "quay\.io\/\(foo" is not a valid regular expression: /,
    );
    expect(problems[1].message).toMatch(/lookahead/);
  });

  it('targetCatalog must be a path without tag; targetTag a tag; archiveSize above 0', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  operators:',
        '  - catalog: reg/idx:v1',
        '    targetCatalog: my-ns/My-Index:v1', // line 6
        '    targetTag: "bad tag"',
        'archiveSize: 0', // line 8
      ),
    );
    expect(problemsOf(e).map((p) => [p.path, p.where])).toEqual([
      ['mirror.operators[0].targetCatalog', 'isc.yaml:6:20'],
      ['mirror.operators[0].targetTag', 'isc.yaml:7:16'],
      ['archiveSize', 'isc.yaml:8:14'],
    ]);
  });

  it('collects every problem into one error with the code of the first', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  additionalImages:',
        '  - nam: a/b:1', //              line 5: unknown + name required
        '  blockedImages: [{name: "("}]', // line 6
        '  platform:',
        '    channels: [{name: c, minVersion: x}]', // line 8
      ),
    );
    expect(e.code).toBe(IscErrorCode.UnknownField);
    const lines = e.message.split('\n');
    expect(lines[0]).toBe('4 problems in isc.yaml:');
    expect(lines.slice(1).map((l) => l.trim().split(': ')[0])).toEqual([
      'isc.yaml:5:5',
      'isc.yaml:5:5',
      'isc.yaml:6:26',
      'isc.yaml:8:38',
    ]);
    expect(e.hint).toBeUndefined();
  });
});

describe('what is accepted', () => {
  it('an empty mirror: (as oc-mirror), a BOM and CRLF line endings', () => {
    const cfg = parseImageSetConfig(`\ufeff${HEADER.join('\r\n')}\r\n`, 'isc.yaml');
    expect(cfg).toEqual({
      kind: 'ImageSetConfiguration',
      apiVersion: 'mirror.openshift.io/v2alpha1',
      mirror: { operators: [], additionalImages: [], blockedImages: [], samples: [] },
    });
    const e = parseError(`\ufeff${[...HEADER, '  additionalImages:', '  - nam: x'].join('\r\n')}\r\n`);
    expect(problemsOf(e).map((p) => p.where)).toEqual(['isc.yaml:5:5', 'isc.yaml:5:5']);
  });

  it('merge keys, with merged fields placed at the item that merges them', () => {
    const cfg = parseImageSetConfig(
      yamlOf(
        ...HEADER,
        '  additionalImages:',
        '  - &img {name: a/b:1, targetTag: v1}',
        '  - <<: *img', // line 6
        '    name: c/d:2',
      ),
      'isc.yaml',
    );
    expect(cfg.kind === 'ImageSetConfiguration' && cfg.mirror.additionalImages).toEqual([
      { name: 'a/b:1', targetTag: 'v1', platforms: [] },
      { name: 'c/d:2', targetTag: 'v1', platforms: [] },
    ]);
    expect(positionOf(cfg, 'mirror.additionalImages[1].name')?.where).toBe('isc.yaml:7:5');
    expect(positionOf(cfg, 'mirror.additionalImages[1].targetTag')?.where).toBe('isc.yaml:6:5');
  });

  it('decodes the same whether a part is written once and shared (an alias) or written twice', () => {
    // Without aliases the loaded value is decoded in place; with them, it is copied.
    const written = parseImageSetConfig(
      yamlOf(
        ...HEADER,
        '  operators:',
        '  - catalog: r.io/a/index:v1',
        '    packages: [{name: p, channels: [{name: c, minVersion: 1.0.0}]}]',
        '  - catalog: r.io/b/index:v1',
        '    packages: [{name: p, channels: [{name: c, minVersion: 1.0.0}]}]',
        '  additionalImages:',
        '  - {name: a/b:1, targetTag: ~, targetRepo:}',
      ),
      'isc.yaml',
    );
    const shared = parseImageSetConfig(
      yamlOf(
        ...HEADER,
        '  operators:',
        '  - catalog: r.io/a/index:v1',
        '    packages: &p [{name: p, channels: [{name: c, minVersion: 1.0.0}]}]',
        '  - catalog: r.io/b/index:v1',
        '    packages: *p',
        '  additionalImages:',
        '  - {name: a/b:1, targetTag: ~, targetRepo:}',
      ),
      'isc.yaml',
    );
    const expected = {
      catalog: 'r.io/a/index:v1',
      full: false,
      skipDependencies: false,
      platforms: [],
      packages: [{ name: 'p', channels: [{ name: 'c', minVersion: '1.0.0' }] }],
    };
    for (const cfg of [written, shared]) {
      if (cfg.kind !== 'ImageSetConfiguration') throw new Error('not an ISC');
      expect(cfg.mirror.operators).toStrictEqual([expected, { ...expected, catalog: 'r.io/b/index:v1' }]);
      // A field written empty is absent, as if it were not written.
      expect(cfg.mirror.additionalImages).toStrictEqual([{ name: 'a/b:1', platforms: [] }]);
    }
  });

  it('blockedImages and v1alpha2 in a DeleteImageSetConfiguration', () => {
    const cfg = parseImageSetConfig(
      yamlOf(
        'kind: DeleteImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v2alpha1',
        'delete:',
        '  blockedImages: [{name: ".*-rc"}]',
      ),
      'd.yaml',
    );
    expect(cfg.kind === 'DeleteImageSetConfiguration' && cfg.delete.blockedImages).toEqual([
      { name: '.*-rc' },
    ]);
  });
});
