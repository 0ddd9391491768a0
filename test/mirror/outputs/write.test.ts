import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadAll } from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  renderClusterResources,
  writeClusterResources,
  type MirroredImage,
} from '../../../src/mirror/outputs/index.js';
import { img, ref } from './helpers.js';
import { validateAgainstCrd } from '../../helpers/crd.js';
import { withRealCrds } from '../../helpers/realdata.js';

const D1 = `sha256:${'a'.repeat(64)}`;
const D2 = `sha256:${'b'.repeat(64)}`;
const NOW = new Date(Date.UTC(2026, 10, 22, 12, 0, 0));
const CRDS: Record<string, string> = {
  ImageDigestMirrorSet: 'config.openshift.io_imagedigestmirrorsets.crd.yaml',
  ImageTagMirrorSet: 'config.openshift.io_imagetagmirrorsets.crd.yaml',
  CatalogSource: 'operators.coreos.com_catalogsources.yaml',
  ClusterCatalog: 'olm.operatorframework.io_clustercatalogs.yaml',
};

const M = 'mirror.example.com:8443';

const ALL: MirroredImage[] = [
  img(
    'release',
    ref('quay.io', 'openshift-release-dev/ocp-release', '4.18.1-x86_64'),
    ref(M, 'ocp/openshift/release-images', '4.18.1-x86_64'),
  ),
  img(
    'release',
    ref('quay.io', 'openshift-release-dev/ocp-v4.0-art-dev', undefined, D1),
    ref(M, 'ocp/openshift/release', '4.18.1-x86_64-etcd'),
  ),
  img(
    'graph',
    ref('localhost:55000', 'openshift/graph-image', 'latest'),
    ref(M, 'ocp/openshift/graph-image', undefined, D2),
  ),
  img(
    'catalog',
    ref('registry.redhat.io', 'redhat/redhat-operator-index', 'v4.18'),
    ref(M, 'ocp/redhat/redhat-operator-index', 'v4.18'),
  ),
  img(
    'operator',
    ref('registry.redhat.io', 'rhacm2/acm-operator-bundle', undefined, D1),
    ref(M, 'ocp/rhacm2/acm-operator-bundle', 'sha256-aaa'),
  ),
  img('generic', ref('docker.io', 'library/busybox', '1.36'), ref(M, 'ocp/library/busybox', '1.36')),
];

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airgap-outputs-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('writeClusterResources', () => {
  it('writes oc-mirror v2 file names, every object with the annotations oc-mirror writes', async () => {
    const written = await writeClusterResources(dir, ALL, { now: NOW, version: '0.1.0' });
    expect(written.map((p) => basename(p))).toEqual([
      'idms-oc-mirror.yaml',
      'itms-oc-mirror.yaml',
      'cs-redhat-operator-index-v4-18.yaml',
      'cc-redhat-operator-index-v4-18.yaml',
      'updateService.yaml',
      'registries.conf',
      'mapping.txt',
    ]);
    expect((await readdir(dir)).sort()).toEqual(written.map((p) => basename(p)).sort()); // no temp files left
    let docs = 0;
    for (const path of written.filter((p) => p.endsWith('.yaml'))) {
      for (const doc of loadAll(await readFile(path, 'utf8')) as {
        metadata: { annotations: Record<string, string> };
      }[]) {
        expect(doc.metadata.annotations).toEqual({
          createdAt: '2026-11-22T12:00:00Z',
          createdBy: 'airgap',
          'oc-mirror_version': 'airgap 0.1.0',
        });
        docs++;
      }
    }
    expect(docs).toBe(7); // idms release+operator, itms release+generic, cs, cc, the UpdateService
  });

  withRealCrds.it('writes objects that validate against their real CRDs', async () => {
    const written = await writeClusterResources(dir, ALL, { now: NOW, version: '0.1.0' });
    let checked = 0;
    for (const path of written.filter((p) => p.endsWith('.yaml'))) {
      for (const doc of loadAll(await readFile(path, 'utf8')) as { kind: string }[]) {
        if (doc.kind === 'UpdateService') continue; // no CRD in the real-data set; shape checked below
        expect(validateAgainstCrd(CRDS[doc.kind]!, doc), `${basename(path)} ${doc.kind}`).toEqual([]);
        checked++;
      }
    }
    expect(checked).toBe(6); // idms release+operator, itms release+generic, cs, cc
  });

  it('writes the UpdateService with the payload repository and the graph image as mirrored', async () => {
    const files = renderClusterResources(ALL, { now: NOW });
    const [osus] = loadAll(files.get('updateService.yaml')!);
    expect(osus).toMatchObject({
      apiVersion: 'updateservice.operator.openshift.io/v1',
      kind: 'UpdateService',
      metadata: { name: 'update-service-oc-mirror', namespace: 'openshift-update-service' },
      spec: {
        graphDataImage: `${M}/ocp/openshift/graph-image@${D2}`,
        releases: `${M}/ocp/openshift/release-images`,
        replicas: 2,
      },
    });
    expect(renderClusterResources(ALL.filter((i) => i.category !== 'graph')).has('updateService.yaml')).toBe(
      false,
    );
    expect(() => renderClusterResources(ALL.filter((i) => i.category === 'graph'))).toThrow(
      /no release payload/,
    );
  });

  it('writes mapping.txt as source=destination lines', async () => {
    const files = renderClusterResources(ALL.slice(0, 2));
    expect(files.get('mapping.txt')).toBe(
      `quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64=${M}/ocp/openshift/release-images:4.18.1-x86_64\n` +
        `quay.io/openshift-release-dev/ocp-v4.0-art-dev@${D1}=${M}/ocp/openshift/release:4.18.1-x86_64-etcd\n`,
    );
  });

  it('removes only the stale files it owns', async () => {
    await writeClusterResources(dir, ALL, { now: NOW });
    const ours = `apiVersion: operators.coreos.com/v1alpha1\nkind: CatalogSource\nmetadata:\n  annotations:\n    createdBy: airgap\n  name: cs-old-v1\n`;
    await writeFile(join(dir, 'cs-old-v1.yaml'), ours);
    await writeFile(
      join(dir, 'cs-theirs-v1.yaml'),
      ours.replace('createdBy: airgap', 'createdBy: oc-mirror v2'),
    );
    await writeFile(join(dir, 'cc-broken.yaml'), ': not yaml : [');
    await writeFile(join(dir, 'README.md'), 'mine\n');
    // Second run: only digest-referenced generic images, no catalogs, no graph.
    const second = [img('generic', ref('quay.io', 'org/app', undefined, D1), ref(M, 'ocp/org/app', 'x'))];
    const written = await writeClusterResources(dir, second, { now: NOW });
    expect(written.map((p) => basename(p))).toEqual([
      'idms-oc-mirror.yaml',
      'registries.conf',
      'mapping.txt',
    ]);
    expect((await readdir(dir)).sort()).toEqual([
      'README.md',
      'cc-broken.yaml',
      'cs-theirs-v1.yaml',
      'idms-oc-mirror.yaml',
      'mapping.txt',
      'registries.conf',
    ]);
  });

  it('refuses two catalogs that would share a file name', () => {
    const a = img('catalog', ref('registry.redhat.io', 'redhat/index', 'v1'), ref(M, 'a/index', 'v1'));
    const b = img('catalog', ref('quay.io', 'other/index', 'v1'), ref(M, 'b/index', 'v1'));
    expect(() => renderClusterResources([a, b])).toThrow(/both be written to cs-index-v1\.yaml/);
    expect(renderClusterResources([a, a]).has('cs-index-v1.yaml')).toBe(true); // the same catalog twice is fine
  });

  it('writes nothing for no images', async () => {
    expect(await writeClusterResources(join(dir, 'missing'), [])).toEqual([]);
  });
});
