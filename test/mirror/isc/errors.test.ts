import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadImageSetConfig, parseImageSetConfig } from '../../../src/mirror/isc/index.js';
import { HEADER, parseError, problemsOf, yamlOf } from './helpers.js';
import { IscErrorCode } from '../../../src/mirror/isc/errors.js';

describe('unknown fields (DisallowUnknownFields)', () => {
  it('names a misspelled additionalImages key with its path, file:line:column and a suggestion', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  additionalImages:',
        '  - name: registry.redhat.io/ubi8/ubi:latest',
        '  - name: quay.io/x/y:1',
        '    tagret: v1', // line 7
      ),
    );
    expect(e.code).toBe(IscErrorCode.UnknownField);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('unknown field mirror.additionalImages[1].tagret');
    expect(e.where).toBe('isc.yaml:7:5');
    expect(e.hint).toBe('did you mean targetTag?');
  });

  it('finds unknown keys at the top level', () => {
    const e = parseError(yamlOf(...HEADER, '  additionalImages:', '  - name: a/b:1', 'archivesize: 4'));
    expect(e.message).toBe('unknown field archivesize');
    expect(e.where).toBe('isc.yaml:6:1');
    expect(e.hint).toBe('did you mean archiveSize?');
  });

  it('finds unknown keys deep in operators and platform', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  platform:',
        '    channels:',
        '    - name: stable-4.18',
        '      typ: okd', // line 7
        '  operators:',
        '  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18',
        '    packages:',
        '    - name: foo',
        '      channels:',
        '      - name: stable',
        '        minVersoin: 1.0.0', // line 14
      ),
    );
    const problems = problemsOf(e);
    expect(problems.map((p) => [p.code, p.path, p.where, p.hint])).toEqual([
      [IscErrorCode.UnknownField, 'mirror.platform.channels[0].typ', 'isc.yaml:7:7', 'did you mean type?'],
      [
        IscErrorCode.UnknownField,
        'mirror.operators[0].packages[0].channels[0].minVersoin',
        'isc.yaml:14:9',
        'did you mean minVersion?',
      ],
    ]);
    expect(e.message.split('\n')).toEqual([
      '2 problems in isc.yaml:',
      '  isc.yaml:7:7: unknown field mirror.platform.channels[0].typ — did you mean type?',
      '  isc.yaml:14:9: unknown field mirror.operators[0].packages[0].channels[0].minVersoin — did you mean minVersion?',
    ]);
    expect(e.where).toBe('isc.yaml');
  });

  it('finds unknown keys in flow style and lists the allowed keys when nothing is close', () => {
    const e = parseError(yamlOf(...HEADER, '  additionalImages: [{name: a/b:1, tag: v1}]'));
    expect(e.message).toBe('unknown field mirror.additionalImages[0].tag');
    expect(e.where).toBe('isc.yaml:4:36');
    expect(e.hint).toBe('allowed here: name, targetRepo, targetTag, platforms');
  });

  it('rejects packages[].bundles with a hint that oc-mirror v2 removed it', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  operators:',
        '  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18',
        '    packages:',
        '    - name: foo',
        '      bundles:', // line 8
        '      - name: foo.v1.0.0',
      ),
    );
    expect(e.code).toBe(IscErrorCode.UnknownField);
    expect(e.message).toBe('unknown field mirror.operators[0].packages[0].bundles');
    expect(e.where).toBe('isc.yaml:8:7');
    expect(e.hint).toMatch(/oc-mirror v2 removed packages\[\]\.bundles/);
  });

  it('refuses delete: in an ImageSetConfiguration and v1 storageConfig', () => {
    const e = parseError(
      yamlOf(...HEADER, '  additionalImages: [{name: a/b:1}]', 'delete: {}', 'storageConfig: {}'),
    );
    const problems = problemsOf(e);
    expect(problems.map((p) => [p.path, p.where])).toEqual([
      ['delete', 'isc.yaml:5:1'],
      ['storageConfig', 'isc.yaml:6:1'],
    ]);
    expect(problems[0].hint).toMatch(/DeleteImageSetConfiguration/);
    expect(problems[1].hint).toMatch(/oc-mirror v1/);
  });
});

describe('wrong types', () => {
  it('a string where a list is expected', () => {
    const e = parseError(yamlOf(...HEADER, '  additionalImages: registry.redhat.io/ubi8/ubi:latest'));
    expect(e.code).toBe(IscErrorCode.Invalid);
    expect(e.message).toBe(
      'mirror.additionalImages must be a list, not the string "registry.redhat.io/ubi8/ubi:latest"',
    );
    expect(e.where).toBe('isc.yaml:4:21');
  });

  it('a number where a string is expected, with the source text in the hint', () => {
    const e = parseError(
      yamlOf(...HEADER, '  additionalImages:', '  - name: a/b', '    targetTag: 4.10 # tag'),
    );
    expect(e.code).toBe(IscErrorCode.Invalid);
    expect(e.message).toBe('mirror.additionalImages[0].targetTag must be a string, not the number 4.1');
    expect(e.where).toBe('isc.yaml:6:16');
    expect(e.hint).toBe('quote it: "4.10"');
  });

  it('a mapping where a list is expected, a list where a mapping is expected, and a bad boolean', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  operators:',
        '    catalog: x',
        '  platform:',
        '  - graph: true',
        'archiveSize: "4"',
      ),
    );
    expect(problemsOf(e).map((p) => [p.path, p.where, p.code])).toEqual([
      ['mirror.operators', 'isc.yaml:5:5', IscErrorCode.Invalid],
      ['mirror.platform', 'isc.yaml:7:3', IscErrorCode.Invalid],
      ['archiveSize', 'isc.yaml:8:14', IscErrorCode.Invalid],
    ]);
    const g = parseError(yamlOf(...HEADER, '  platform:', '    graph: maybe'));
    expect(g.message).toBe('mirror.platform.graph must be true or false, not the string "maybe"');
    expect(g.where).toBe('isc.yaml:5:12');
  });

  it('accepts YAML 1.1 booleans as oc-mirror does, unless quoted', () => {
    const cfg = parseImageSetConfig(
      yamlOf(...HEADER, '  platform:', '    graph: yes', '    kubeVirtContainer: off'),
      'x',
    );
    expect(cfg.kind === 'ImageSetConfiguration' && cfg.mirror.platform).toMatchObject({
      graph: true,
      kubeVirtContainer: false,
    });
    expect(parseError(yamlOf(...HEADER, '  platform:', '    graph: "yes"')).code).toBe(IscErrorCode.Invalid);
  });

  it('a bad enum value, with a suggestion', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  platform:',
        '    architectures: [amd64, arm]',
        '    channels:',
        '    - {name: a, type: odk}',
      ),
    );
    expect(problemsOf(e).map((p) => [p.path, p.where, p.hint])).toEqual([
      ['mirror.platform.architectures[1]', 'isc.yaml:5:28', 'did you mean arm64?'],
      ['mirror.platform.channels[0].type', 'isc.yaml:7:23', 'did you mean okd?'],
    ]);
  });

  it('a required field that is missing or empty', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  additionalImages:',
        '  - targetTag: v1',
        '  operators:',
        '  - catalog: ""',
        '    packages: [{}]',
      ),
    );
    expect(problemsOf(e).map((p) => [p.code, p.message, p.where])).toEqual([
      [IscErrorCode.Required, 'mirror.additionalImages[0].name is required', 'isc.yaml:5:5'],
      [IscErrorCode.Required, 'mirror.operators[0].catalog is required', 'isc.yaml:7:5'],
      [IscErrorCode.Required, 'mirror.operators[0].packages[0].name is required', 'isc.yaml:8:16'],
    ]);
  });
});

describe('YAML, kind and apiVersion', () => {
  it('a YAML syntax error has the line and column of js-yaml', () => {
    const e = parseError(yamlOf(...HEADER, '  additionalImages:', '  - name: a', '   - name: b'));
    expect(e.code).toBe(IscErrorCode.Yaml);
    expect(e.where).toBe('isc.yaml:6:4');
    expect(e.message).toMatch(/^isc\.yaml is not valid YAML: /);
  });

  it('a tab in the indentation is a YAML error', () => {
    const e = parseError(yamlOf(...HEADER, '\tadditionalImages: []'));
    expect(e.code).toBe(IscErrorCode.Yaml);
    expect(e.where).toMatch(/^isc\.yaml:4:\d+$/);
  });

  it('duplicate keys are a YAML error at the second key', () => {
    const e = parseError(yamlOf(...HEADER, '  additionalImages: []', '  additionalImages: []'));
    expect(e.code).toBe(IscErrorCode.Yaml);
    expect(e.where).toBe('isc.yaml:5:3');
  });

  it('a bad image reference is a problem with its file, line and field, like any other', () => {
    const e = parseError(
      yamlOf(
        ...HEADER,
        '  additionalImages:',
        '  - name: quay.io/ok/app:v1',
        '  - name: "Quay.io/Bad Ref"',
        '  operators:',
        '  - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18:extra',
      ),
    );
    const problems = (e.details?.problems ?? []) as { where: string; message: string }[];
    expect(problems.map((p) => [p.where, p.message.split(':')[0]])).toEqual([
      ['isc.yaml:6:11', 'mirror.additionalImages[1].name'],
      ['isc.yaml:8:14', 'mirror.operators[0].catalog'],
    ]);
    expect(problems[0]!.message).toContain('repository names must be lowercase');
  });

  it('never quotes the content of a file that is not a configuration (a password, /etc/passwd)', () => {
    const secret = 'root:x:0:0:hunter2-not-yaml-content';
    const plain = parseError(`${secret}\nsecond line\n`);
    expect(plain.message).toBe(
      'isc.yaml holds a string; expected a mapping with kind, apiVersion and mirror',
    );
    const kind = parseError(yamlOf(`kind: "${secret} with spaces"`, 'apiVersion: x'));
    expect(kind.message).toBe('the kind is not ImageSetConfiguration or DeleteImageSetConfiguration');
    const api = parseError(yamlOf('kind: ImageSetConfiguration', `apiVersion: "${secret}"`, 'mirror: {}'));
    expect(api.message).toMatch(/^the apiVersion is not mirror\.openshift\.io\/v2alpha1/);
    for (const e of [plain, kind, api]) expect(`${e.message} ${e.hint ?? ''}`).not.toContain('hunter2');
  });

  it('an empty file, a list, a missing or wrong kind', () => {
    expect(parseError('').code).toBe(IscErrorCode.Invalid);
    expect(parseError('- a\n').message).toMatch(/holds a list/);
    const missing = parseError(yamlOf('apiVersion: mirror.openshift.io/v2alpha1', 'mirror: {}'));
    expect([missing.code, missing.message]).toEqual([IscErrorCode.Kind, 'kind is missing']);
    const wrong = parseError(
      yamlOf('kind: ImageSetConfig', 'apiVersion: mirror.openshift.io/v2alpha1', 'mirror: {}'),
    );
    expect([wrong.code, wrong.where, wrong.hint]).toEqual([
      IscErrorCode.Kind,
      'isc.yaml:1:7',
      'did you mean ImageSetConfiguration?',
    ]);
  });

  it('accepts v2alpha1; refuses v1alpha2 for an ImageSetConfiguration but accepts it for a delete', () => {
    const v1 = parseError(
      yamlOf('kind: ImageSetConfiguration', 'apiVersion: mirror.openshift.io/v1alpha2', 'mirror: {}'),
    );
    expect([v1.code, v1.where]).toEqual([IscErrorCode.ApiVersion, 'isc.yaml:2:13']);
    expect(v1.message).toMatch(/oc-mirror v1 format/);
    const disc = parseImageSetConfig(
      yamlOf(
        'kind: DeleteImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v1alpha2',
        'delete:',
        '  additionalImages: [{name: a/b:1}]',
      ),
      'disc.yaml',
    );
    expect(disc.kind === 'DeleteImageSetConfiguration' && disc.delete.additionalImages).toEqual([
      { name: 'a/b:1', platforms: [] },
    ]);
    const other = parseError(yamlOf('kind: DeleteImageSetConfiguration', 'apiVersion: v1', 'delete: {}'));
    expect([other.code, other.message]).toEqual([
      IscErrorCode.ApiVersion,
      'apiVersion v1 is not mirror.openshift.io/v2alpha1 or mirror.openshift.io/v1alpha2',
    ]);
  });

  it('mirror is required in an ISC, delete in a DISC, and mirror is refused in a DISC', () => {
    const isc = parseError(yamlOf('kind: ImageSetConfiguration', 'apiVersion: mirror.openshift.io/v2alpha1'));
    expect([isc.code, isc.message]).toEqual([
      IscErrorCode.Required,
      'mirror is required in a ImageSetConfiguration',
    ]);
    const disc = parseError(
      yamlOf('kind: DeleteImageSetConfiguration', 'apiVersion: mirror.openshift.io/v2alpha1', 'mirror: {}'),
    );
    expect(problemsOf(disc).map((p) => [p.code, p.path])).toEqual([
      [IscErrorCode.Required, ''],
      [IscErrorCode.UnknownField, 'mirror'],
    ]);
  });

  it('a missing file is a usage error naming the path', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'isc-')), 'nope.yaml');
    await expect(loadImageSetConfig(path)).rejects.toMatchObject({
      code: IscErrorCode.Read,
      exitCode: 2,
      where: path,
      message: `cannot read the image set configuration ${path}: no such file`,
    });
  });
});
