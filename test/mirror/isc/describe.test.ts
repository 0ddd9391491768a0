import { describe, expect, it } from 'vitest';
import { AirgapError } from '../../../src/util/errors.js';
import {
  assertSupported,
  describeUnsupported,
  parseImageSetConfig,
  pathPattern,
  positionOf,
  type ImageSetConfig,
} from '../../../src/mirror/isc/index.js';
import { HEADER, yamlOf } from './helpers.js';
import { IscErrorCode } from '../../../src/mirror/isc/errors.js';

const TEXT = yamlOf(
  ...HEADER,
  '  platform:', //                       line 4
  '    channels:',
  '    - name: stable-4.18', //           line 6
  '    graph: false',
  '  additionalImages:', //               line 8
  '  - name: registry.redhat.io/ubi9/ubi:latest',
  '    platforms: [{os: linux, architecture: amd64}]', // line 10
  '  operators: []', //                   line 11: empty, so not set
  '  helm:', //                           line 12
  '    local: [{name: c, path: /tmp/c}]',
  '  samples: [{name: s}]', //           line 14
  'archiveSize: 4', //                    line 15
);

const parse = () => parseImageSetConfig(TEXT, 'isc.yaml', { kind: 'ImageSetConfiguration' });

describe('positionOf', () => {
  it('gives the key, or the value, of a field as file:line:column', () => {
    const cfg = parse();
    expect(positionOf(cfg, 'mirror.platform')).toEqual({
      file: 'isc.yaml',
      line: 4,
      column: 3,
      where: 'isc.yaml:4:3',
    });
    expect(positionOf(cfg, 'mirror.additionalImages[0].name', 'value')?.where).toBe('isc.yaml:9:11');
    expect(positionOf(cfg, 'mirror.additionalImages[0].platforms[0].architecture')?.where).toBe(
      'isc.yaml:10:29',
    );
    expect(positionOf(cfg, 'archiveSize', 'value')?.where).toBe('isc.yaml:15:14');
  });

  it('falls back to the nearest ancestor for defaulted fields, and knows nothing of copies', () => {
    const cfg = parse();
    expect(positionOf(cfg, 'mirror.platform.channels[0].type')?.where).toBe('isc.yaml:6:7');
    expect(positionOf({ ...cfg }, 'mirror.platform')).toBeUndefined();
  });
});

describe('describeUnsupported', () => {
  it('lists the topmost set fields not covered, in file order, skipping empty ones', () => {
    const cfg = parse();
    const found = describeUnsupported(cfg, [
      'mirror.additionalImages',
      'mirror.blockedImages',
      'archiveSize',
    ]);
    expect(found.map((f) => [f.path, f.where])).toEqual([
      ['mirror.platform', 'isc.yaml:4:3'],
      ['mirror.helm', 'isc.yaml:12:3'],
      ['mirror.samples', 'isc.yaml:14:3'],
    ]);
  });

  it('reports sub-fields a "!" pattern takes back out, and sub-fields not listed under a partly supported parent', () => {
    const cfg = parse();
    const found = describeUnsupported(cfg, [
      'mirror.additionalImages',
      '!mirror.additionalImages[].platforms',
      'mirror.platform.channels',
      'mirror.helm',
      'mirror.samples',
      'archiveSize',
    ]);
    // graph: false is not set, so the platform needs nothing more than channels.
    expect(found.map((f) => [f.path, f.where])).toEqual([
      ['mirror.additionalImages[0].platforms', 'isc.yaml:10:5'],
    ]);
  });

  it('reports a set boolean under a partly supported parent', () => {
    const cfg = parseImageSetConfig(
      yamlOf(...HEADER, '  platform:', '    graph: true', '    channels: [{name: a}]'),
      'i.yaml',
    );
    const found = describeUnsupported(cfg, ['mirror.platform.channels']);
    expect(found.map((f) => f.path)).toEqual(['mirror.platform.graph']);
    expect(found[0].location).toMatchObject({ line: 5, column: 5 });
  });

  it('returns nothing when everything is covered, and works on configs built in code', () => {
    const cfg = parse();
    expect(describeUnsupported(cfg, ['mirror', 'archiveSize'])).toEqual([]);
    const built: ImageSetConfig = {
      kind: 'ImageSetConfiguration',
      apiVersion: 'mirror.openshift.io/v2alpha1',
      mirror: { operators: [], additionalImages: [], blockedImages: [{ name: 'x' }], samples: [] },
    };
    expect(describeUnsupported(built, ['mirror.additionalImages'])).toEqual([
      { path: 'mirror.blockedImages', where: 'mirror.blockedImages' },
    ]);
  });

  it('pathPattern drops list indexes', () => {
    expect(pathPattern('mirror.operators[2].packages[10].name')).toBe('mirror.operators[].packages[].name');
  });
});

describe('assertSupported', () => {
  it('throws one ISC_UNSUPPORTED usage error naming each field and line', () => {
    const cfg = parse();
    let err: unknown;
    try {
      assertSupported(cfg, ['mirror.additionalImages', 'mirror.helm', 'mirror.samples', 'archiveSize']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AirgapError);
    expect(err).toMatchObject({
      code: IscErrorCode.Unsupported,
      exitCode: 2,
      message: 'mirror.platform (isc.yaml:4) is not supported yet',
      where: 'isc.yaml:4:3',
    });
    expect(() => assertSupported(cfg, ['mirror.additionalImages', 'archiveSize'])).toThrow(
      'these parts of the configuration are not supported yet:\n  mirror.platform (isc.yaml:4)\n  mirror.helm (isc.yaml:12)\n  mirror.samples (isc.yaml:14)',
    );
    expect(() => assertSupported(cfg, ['mirror', 'archiveSize'])).not.toThrow();
  });
});
