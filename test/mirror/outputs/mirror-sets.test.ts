import { readFileSync } from 'node:fs';

import { load, loadAll } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { buildIdms, buildItms, mirrorScope, type MirroredImage } from '../../../src/mirror/outputs/index.js';
import { img, ref } from './helpers.js';
import { toYamlDocuments } from '../../../src/util/yaml.js';
import { validateAgainstCrd } from '../../helpers/crd.js';
import { realdata, withRealCrds, withRealdataAndCrds } from '../../helpers/realdata.js';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const NOW = new Date(Date.UTC(2026, 10, 22, 3, 4, 5));

/** oc-mirror's "release use case" (internal/pkg/clusterresources/clusterresources_test.go). */
const RELEASE: MirroredImage[] = [
  img(
    'release',
    ref('quay.io', 'openshift-release-dev/ocp-v4.0-art-dev', undefined, D1),
    ref('myregistry', 'mynamespace/openshift/release', '4.13.10-x86_64-agent-installer-api-server'),
  ),
  img(
    'release',
    ref('quay.io', 'openshift-release-dev/ocp-release', '4.13.10-x86_64'),
    ref('myregistry', 'mynamespace/openshift/release-images', '4.13.10-x86_64'),
  ),
  img(
    'graph',
    ref('localhost', 'openshift/graph-image', 'latest'),
    ref('myregistry', 'mynamespace/openshift/graph-image', 'latest'),
  ),
];

describe('IDMS', () => {
  it('matches the release use case exactly: repository-scoped, payload included although by tag, graph left out', () => {
    const idms = buildIdms(RELEASE, { now: NOW, version: '0.1.0' });
    expect(idms).toEqual([
      {
        apiVersion: 'config.openshift.io/v1',
        kind: 'ImageDigestMirrorSet',
        metadata: {
          annotations: {
            createdAt: '2026-11-22T03:04:05Z',
            createdBy: 'airgap',
            'oc-mirror_version': 'airgap 0.1.0',
          },
          name: 'idms-release-0',
        },
        spec: {
          imageDigestMirrors: [
            // oc-mirror's order is a Go map's (random); airgap sorts sources so every run writes the same file.
            {
              mirrors: ['myregistry/mynamespace/openshift/release-images'],
              source: 'quay.io/openshift-release-dev/ocp-release',
            },
            {
              mirrors: ['myregistry/mynamespace/openshift/release'],
              source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
            },
          ],
        },
      },
    ]);
  });

  withRealCrds.it('the release IDMS validates against the real CRD', () => {
    for (const o of buildIdms(RELEASE, { now: NOW, version: '0.1.0' }))
      expect(validateAgainstCrd('config.openshift.io_imagedigestmirrorsets.crd.yaml', o)).toEqual([]);
  });

  it('is namespace-scoped when the destination path ends with the source path', () => {
    const images = [
      img(
        'operator',
        ref('registry.redhat.io', 'rhacm2/acm-operator-bundle', undefined, D1),
        ref('mirror.local:5000', 'ocp/rhacm2/acm-operator-bundle', 'sha256-1'),
      ),
      img(
        'operator',
        ref('registry.redhat.io', 'rhacm2/multicluster-engine', undefined, D2),
        ref('mirror.local:5000', 'ocp/rhacm2/multicluster-engine', 'sha256-2'),
      ),
      img(
        'generic',
        ref('docker.io', 'library/busybox', undefined, D1),
        ref('mirror.local:5000', 'library/busybox', 'sha256-1'),
      ),
      img('generic', ref('quay.io', 'single', undefined, D2), ref('mirror.local:5000', 'single', 'x')),
    ];
    const [op, gen] = buildIdms(images);
    expect(op!.metadata.name).toBe('idms-operator-0');
    expect(op!.spec).toEqual({
      imageDigestMirrors: [
        { mirrors: ['mirror.local:5000/ocp/rhacm2'], source: 'registry.redhat.io/rhacm2' },
      ],
    });
    expect(gen!.metadata.name).toBe('idms-generic-0');
    expect(gen!.spec).toEqual({
      imageDigestMirrors: [
        { mirrors: ['mirror.local:5000/library'], source: 'docker.io/library' },
        { mirrors: ['mirror.local:5000'], source: 'quay.io' },
      ],
    });
  });

  it('is repository-scoped when the destination was renamed, or when forced (max-nested-paths)', () => {
    const renamed = img(
      'generic',
      ref('quay.io', 'org/app', undefined, D1),
      ref('m.local', 'other/place', 'x'),
    );
    expect(buildIdms([renamed])[0]!.spec).toEqual({
      imageDigestMirrors: [{ mirrors: ['m.local/other/place'], source: 'quay.io/org/app' }],
    });
    const kept = img('generic', ref('quay.io', 'org/app', undefined, D1), ref('m.local', 'p/org/app', 'x'));
    expect(buildIdms([kept], { forceRepositoryScope: true })[0]!.spec).toEqual({
      imageDigestMirrors: [{ mirrors: ['m.local/p/org/app'], source: 'quay.io/org/app' }],
    });
  });

  it('compares the path suffix by component, not by characters', () => {
    expect(mirrorScope(ref('quay.io', 'ease', 't'), ref('m.local', 'openshift/release', 't'))).toEqual({
      source: 'quay.io/ease',
      mirror: 'm.local/openshift/release',
    });
  });

  it('leaves out catalogs, tag-only non-release images, and deduplicates mirrors', () => {
    const images = [
      img(
        'catalog',
        ref('registry.redhat.io', 'redhat/redhat-operator-index', 'v4.18'),
        ref('m.local', 'redhat/redhat-operator-index', 'v4.18'),
      ),
      img('generic', ref('quay.io', 'org/tagged', 'v1'), ref('m.local', 'org/tagged', 'v1')),
      img('generic', ref('quay.io', 'org/a', undefined, D1), ref('m.local', 'org/a', 'x')),
      img('generic', ref('quay.io', 'org/b', undefined, D2), ref('m.local', 'org/b', 'y')),
    ];
    const idms = buildIdms(images);
    expect(idms.map((o) => o.metadata.name)).toEqual(['idms-generic-0']);
    expect(idms[0]!.spec).toEqual({
      imageDigestMirrors: [{ mirrors: ['m.local/org'], source: 'quay.io/org' }],
    });
  });

  withRealdataAndCrds.it('has the shape of the real IDMS sample (oc testdata) for the same mapping', () => {
    const sample = load(
      readFileSync(realdata('samples', 'mirror-config', 'idms-oc-testdata-64921.yaml'), 'utf8'),
    ) as {
      spec: { imageDigestMirrors: { mirrors: string[]; source: string; mirrorSourcePolicy?: string }[] };
    };
    expect(validateAgainstCrd('config.openshift.io_imagedigestmirrorsets.crd.yaml', sample)).toEqual([]);
    const images = sample.spec.imageDigestMirrors.map((e) => {
      const [sReg, ...sPath] = e.source.split('/');
      const [dReg, ...dPath] = e.mirrors[0]!.split('/');
      return img('release', ref(sReg!, sPath.join('/'), undefined, D1), ref(dReg!, dPath.join('/'), 'x'));
    });
    // The sample is repository-scoped throughout: the same mapping is what oc-mirror writes with --max-nested-paths.
    const ours = buildIdms(images, { forceRepositoryScope: true })[0]!;
    const keys = (o: object) => Object.keys(o).sort();
    expect(keys(ours)).toEqual(keys(sample));
    const ourEntries = (ours.spec as { imageDigestMirrors: object[] }).imageDigestMirrors;
    for (const e of ourEntries) expect(keys(e)).toEqual(['mirrors', 'source']);
    // The sample lists one source twice (two mirrors); we merge them into one entry, in the same order.
    expect(ourEntries).toEqual([
      {
        mirrors: ['localhost:5000/openshift-release-dev/ocp-release', 'localhost:5000/target/release'],
        source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
      },
      { mirrors: ['localhost:5000/ocp/release'], source: 'registry.ci.openshift.org/ocp/release' },
    ]);
  });
});

describe('ITMS', () => {
  const images = [
    ...RELEASE,
    img(
      'catalog',
      ref('registry.redhat.io', 'redhat/redhat-operator-index', 'v4.18'),
      ref('m.local', 'redhat/redhat-operator-index', 'v4.18'),
    ),
    img('generic', ref('quay.io', 'org/app', 'v1'), ref('m.local', 'org/app', 'v1')),
    img('generic', ref('quay.io', 'org/pinned', undefined, D1), ref('m.local', 'org/pinned', 'x')),
  ];

  it('covers tag-referenced images, release payload included, catalogs and graph left out', () => {
    const itms = buildItms(images);
    expect(itms.map((o) => [o.kind, o.metadata.name, o.spec])).toEqual([
      [
        'ImageTagMirrorSet',
        'itms-release-0',
        {
          imageTagMirrors: [
            {
              mirrors: ['myregistry/mynamespace/openshift/release-images'],
              source: 'quay.io/openshift-release-dev/ocp-release',
            },
          ],
        },
      ],
      [
        'ImageTagMirrorSet',
        'itms-generic-0',
        { imageTagMirrors: [{ mirrors: ['m.local/org'], source: 'quay.io/org' }] },
      ],
    ]);
  });

  withRealCrds.it('the ITMS validate against the real CRD', () => {
    for (const o of buildItms(images))
      expect(validateAgainstCrd('config.openshift.io_imagetagmirrorsets.crd.yaml', o)).toEqual([]);
  });

  it('includes an image referenced by both tag and digest in both sets', () => {
    const both = { ...img('generic', ref('quay.io', 'org/app', 'v1', D1), ref('m.local', 'org/app', 'v1')) };
    expect(buildIdms([both])).toHaveLength(1);
    expect(buildItms([both])).toHaveLength(1);
  });
});

describe('idms-oc-mirror.yaml text', () => {
  it('is one --- document per category, in oc-mirror key order, readable back', () => {
    const images = [
      ...RELEASE,
      img('generic', ref('quay.io', 'org/a', undefined, D1), ref('m.local', 'org/a', 'x')),
    ];
    const text = toYamlDocuments(buildIdms(images, { now: NOW, version: 'v1' }));
    expect(
      text.startsWith(
        '---\napiVersion: config.openshift.io/v1\nkind: ImageDigestMirrorSet\nmetadata:\n  annotations:\n    createdAt: "2026-11-22T03:04:05Z"\n    createdBy: airgap\n',
      ),
    ).toBe(true);
    expect(text).toContain(
      '  name: idms-release-0\nspec:\n  imageDigestMirrors:\n  - mirrors:\n    - myregistry/mynamespace/openshift/release-images\n    source: quay.io/openshift-release-dev/ocp-release\n  - mirrors:\n',
    );
    expect(text.match(/^---$/gm)).toHaveLength(2);
    expect((loadAll(text) as { metadata: { name: string } }[]).map((d) => d.metadata.name)).toEqual([
      'idms-release-0',
      'idms-generic-0',
    ]);
  });
});
