import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import {
  buildRegistriesConf,
  registriesConfToml,
  type MirroredImage,
} from '../../../src/mirror/outputs/index.js';
import { img, ref } from './helpers.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';

const SAMPLES = realdata('samples', 'registries-conf');
const D = `sha256:${'3'.repeat(64)}`;

const IMAGES: MirroredImage[] = [
  img(
    'release',
    ref('quay.io', 'openshift-release-dev/ocp-v4.0-art-dev', undefined, D),
    ref('mirror.local:8443', 'ocp/openshift/release', 'x'),
  ),
  img(
    'release',
    ref('quay.io', 'openshift-release-dev/ocp-release', '4.18.1-x86_64'),
    ref('mirror.local:8443', 'ocp/openshift/release-images', '4.18.1-x86_64'),
  ),
  img('generic', ref('quay.io', 'org/app', 'v1'), ref('mirror.local:8443', 'ocp/org/app', 'v1')),
  img('generic', ref('quay.io', 'org/tool', undefined, D), ref('mirror.local:8443', 'ocp/org/tool', 'x')),
  img(
    'generic',
    ref('docker.io', 'library/busybox', undefined, D),
    ref('mirror.local:8443', 'ocp/library/busybox', 'x'),
  ),
  img(
    'catalog',
    ref('registry.redhat.io', 'redhat/redhat-operator-index', 'v4.18'),
    ref('mirror.local:8443', 'ocp/redhat/redhat-operator-index', 'v4.18'),
  ),
];

describe('registries.conf', () => {
  const model = buildRegistriesConf(IMAGES);

  it('has one [[registry]] per source, digest-only entries marked mirror-by-digest-only', () => {
    expect(model).toEqual({
      registry: [
        {
          prefix: 'docker.io/library',
          location: 'docker.io/library',
          'mirror-by-digest-only': true,
          mirror: [{ location: 'mirror.local:8443/ocp/library' }],
        },
        {
          prefix: 'quay.io/openshift-release-dev/ocp-release',
          location: 'quay.io/openshift-release-dev/ocp-release',
          mirror: [{ location: 'mirror.local:8443/ocp/openshift/release-images' }],
        },
        {
          prefix: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
          location: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
          'mirror-by-digest-only': true,
          mirror: [{ location: 'mirror.local:8443/ocp/openshift/release' }],
        },
        {
          prefix: 'quay.io/org',
          location: 'quay.io/org',
          mirror: [{ location: 'mirror.local:8443/ocp/org' }],
        },
      ],
    });
    expect(new Set(model.registry.map((r) => r.prefix)).size).toBe(model.registry.length);
  });

  it('marks each mirror with pull-from-mirror when one source has digest-only and tag-only mirrors', () => {
    const mixed = buildRegistriesConf([
      img('generic', ref('quay.io', 'org/a', undefined, D), ref('m1.local', 'org/a', 'x')),
      img('generic', ref('quay.io', 'org/a', 'v1'), ref('m2.local', 'org/a', 'v1')),
    ]);
    expect(mixed.registry).toEqual([
      {
        prefix: 'quay.io/org',
        location: 'quay.io/org',
        mirror: [
          { location: 'm1.local/org', 'pull-from-mirror': 'digest-only' },
          { location: 'm2.local/org', 'pull-from-mirror': 'tag-only' },
        ],
      },
    ]);
  });

  it('parses back with smol-toml to exactly the model', () => {
    const text = registriesConfToml(model);
    expect(parse(text)).toEqual(model);
    expect(text.endsWith('"\n')).toBe(true); // exactly one final newline
  });

  withRealdata.it('has the table layout and keys of real containers-registries.conf files', () => {
    const text = registriesConfToml(model);
    // Layout: [[registry]] tables with their keys, then one [[registry.mirror]] table per mirror.
    expect(text).toContain(
      '[[registry]]\nprefix = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"\nlocation = "quay.io/openshift-release-dev/ocp-v4.0-art-dev"\nmirror-by-digest-only = true\n\n[[registry.mirror]]\nlocation = "mirror.local:8443/ocp/openshift/release"\n',
    );
    const registryKeys = new Set<string>();
    const mirrorKeys = new Set<string>();
    for (const file of readdirSync(SAMPLES)) {
      const sample = parse(readFileSync(resolve(SAMPLES, file), 'utf8')) as {
        registry?: Record<string, unknown>[];
      };
      for (const r of sample.registry ?? []) {
        for (const k of Object.keys(r)) registryKeys.add(k);
        for (const m of (r.mirror as Record<string, unknown>[] | undefined) ?? [])
          for (const k of Object.keys(m)) mirrorKeys.add(k);
      }
    }
    expect(registryKeys.has('mirror')).toBe(true); // the samples do nest mirrors as we do
    const ourTop = parse(text) as { registry: Record<string, unknown>[] };
    for (const r of ourTop.registry) {
      for (const k of Object.keys(r)) expect(registryKeys, `registry key ${k}`).toContain(k);
      for (const m of r.mirror as Record<string, unknown>[])
        for (const k of Object.keys(m)) expect(mirrorKeys, `mirror key ${k}`).toContain(k);
    }
    expect(Object.keys(ourTop)).toEqual(['registry']);
  });

  it('leaves catalogs and the graph image out, like the IDMS and ITMS', () => {
    expect(model.registry.some((r) => r.prefix.startsWith('registry.redhat.io'))).toBe(false);
  });
});
