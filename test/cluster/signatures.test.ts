/**
 * The cluster side of signatures, through the real CLI against real registries and the hub
 * simulator: `install hub` applies (or `--render` writes) the release-signature ConfigMap `airgap
 * mirror` put in cluster-resources, and refuses a malformed one; `install cluster` for 4.21 and later
 * refuses a release whose Sigstore signature tag (`sha256-<hex>.sig`) is not in the mirror, before
 * anything is applied, and does not ask for one below 4.21.
 */
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { ClusterError } from '../../src/cluster/errors.js';
import { signatureTag, verifiesReleaseSignature } from '../../src/cluster/release.js';
import { renderHub } from '../../src/cluster/render/hub.js';
import type { ResolvedSite } from '../../src/cluster/site/types.js';
import { pushReleaseSignatureTag } from '../../lab/site.js';
import { airgap } from '../helpers/cli.js';
import { useLabSite, type LabFixture } from '../helpers/lab-site.js';

const CM = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'openshift-config-managed' };
const CM_NAME = 'mirrored-release-signatures';

/** The objects of a hosted cluster an install would have applied (none after a refused preflight). */
function clusterObjects(t: LabFixture) {
  const h = t.hub;
  return [
    ...h.store.list('hypershift.openshift.io/v1beta1', 'HostedCluster', {}),
    ...h.store.list('hypershift.openshift.io/v1beta1', 'NodePool', {}),
    ...h.store.list('v1', 'Secret', { namespace: 'clusters' }),
  ];
}

/** A copy of the lab's cluster-resources with `signature-configmap.yaml` replaced, and a site naming it. */
async function siteWithSignatureFile(t: LabFixture, text: string): Promise<{ site: string; file: string }> {
  const dir = t.fresh('cluster-resources');
  await cp(t.lab.clusterResources, dir, { recursive: true });
  const file = join(dir, 'signature-configmap.yaml');
  await writeFile(file, text);
  const site = await t.siteWith((s) => {
    s.mirror.clusterResources = dir;
  });
  return { site, file };
}

describe('when releases verify their signature', () => {
  it('4.21 and later do, earlier ones do not', () => {
    expect(verifiesReleaseSignature('4.20.12')).toBe(false);
    expect(verifiesReleaseSignature('4.18.3')).toBe(false);
    expect(verifiesReleaseSignature('4.21.0')).toBe(true);
    expect(verifiesReleaseSignature('4.21.0-ec.2')).toBe(true);
    expect(verifiesReleaseSignature('4.22.1')).toBe(true);
    expect(verifiesReleaseSignature('5.0.0')).toBe(true);
    expect(signatureTag(`sha256:${'ab'.repeat(32)}`)).toBe(`sha256-${'ab'.repeat(32)}.sig`);
  });

  it('renderHub puts the signature ConfigMap in the trust step, as it was written, and not as a secret', () => {
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: CM_NAME,
        namespace: CM.namespace,
        labels: { 'release.openshift.io/verification-signatures': '' },
      },
      binaryData: { [`sha256-${'c'.repeat(64)}-1`]: 'c2lnbmF0dXJl' },
    };
    const site = {
      site: {
        cluster: { name: 'lab', namespace: 'clusters' },
        mirror: { registry: 'mirror.example.com:8443' },
        hub: { databaseStorage: '10Gi', filesystemStorage: '100Gi', imageStorage: '10Gi' },
      },
      caBundlePem: '',
      mirrorMappings: [],
      imageContentSources: [],
      mirrorSets: [],
      catalogSources: [],
      osImages: [],
      releaseSignatures: cm,
    } as unknown as ResolvedSite;
    const items = renderHub(site);
    const found = items.filter((i) => i.object.metadata.name === CM_NAME);
    expect(found).toEqual([{ object: cm, sensitive: false, step: 'trust' }]);
    expect(
      renderHub({ ...site, releaseSignatures: undefined }).some((i) => i.object.metadata.name === CM_NAME),
    ).toBe(false);
  });
});

describe('a 4.21 site whose mirror has the release signature ConfigMap', () => {
  const t = useLabSite({ version: '4.21.0', signatureConfigMap: true });

  it('install hub applies the signature ConfigMap with its signatures; --render writes it', async () => {
    const written = load(
      await readFile(join(t.lab.clusterResources, 'signature-configmap.yaml'), 'utf8'),
    ) as {
      binaryData: Record<string, string>;
    };
    expect(Object.keys(written.binaryData)).toEqual([`${t.lab.releaseDigest.replace(':', '-')}-1`]);

    const hub = await t.startHub();
    const r = await airgap([
      'install',
      'hub',
      '-f',
      t.lab.siteFile,
      '--kubeconfig',
      hub.kubeconfigFile,
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { applied: { object: string }[] };
    expect(out.applied.map((a) => a.object)).toContain(`ConfigMap ${CM.namespace}/${CM_NAME}`);
    const live = hub.store.get({ ...CM, name: CM_NAME });
    expect(live?.metadata.labels).toEqual({ 'release.openshift.io/verification-signatures': '' });
    expect((live as unknown as { binaryData: unknown }).binaryData).toEqual(written.binaryData);

    const dir = t.fresh('render-hub');
    const rendered = await airgap(['install', 'hub', '-f', t.lab.siteFile, '--render', dir]);
    expect(rendered.exitCode, rendered.stderr).toBe(0);
    const files = await readdir(dir);
    const file = files.find((f) => f.includes(CM_NAME));
    expect(file, files.join(', ')).toBeDefined();
    // In the trust step: right after the registry CA and the Image patch.
    expect(file).toMatch(/^03-configmap-openshift-config-managed-/);
    const doc = load(await readFile(join(dir, file!), 'utf8')) as { binaryData: unknown; metadata: unknown };
    expect(doc.binaryData).toEqual(written.binaryData);
    expect(doc.metadata).toMatchObject({ name: CM_NAME, namespace: CM.namespace });
  }, 120_000);

  it('install hub refuses a malformed signature file, naming it and what is wrong, before touching the hub', async () => {
    const hub = await t.startHub();
    const before = hub.store.list('v1', 'ConfigMap', {}).length;
    const bad = (await readFile(join(t.lab.clusterResources, 'signature-configmap.yaml'), 'utf8'))
      .replace('openshift-config-managed', 'openshift-config')
      .replace(/sha256-([0-9a-f]{64})-1/, 'sha256-$1');
    const { site, file } = await siteWithSignatureFile(t, bad);
    const r = await airgap(['install', 'hub', '-f', site, '--kubeconfig', hub.kubeconfigFile]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(file);
    expect(r.stderr).toMatch(/metadata\.namespace is "openshift-config", not openshift-config-managed/);
    expect(r.stderr).toMatch(/binaryData key "sha256-[0-9a-f]{64}" is not sha256-<hex>-<n>/);
    expect(hub.store.list('v1', 'ConfigMap', {})).toHaveLength(before);

    const notYaml = await siteWithSignatureFile(t, 'binaryData: [unclosed\n');
    const y = await airgap(['install', 'hub', '-f', notYaml.site, '--render', t.fresh('render')]);
    expect(y.exitCode).toBe(2);
    expect(y.stderr).toContain(`${notYaml.file} is not YAML`);
  }, 120_000);

  it('install cluster refuses a 4.21 release without its Sigstore signature in the mirror, before anything is applied', async () => {
    const h = await t.readyHub();
    const r = await t.install(h);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(ClusterError.RELEASE_SIGNATURE_NOT_IN_MIRROR);
    const tag = `${t.lab.releaseDigest.replace(':', '-')}.sig`;
    expect(r.stderr).toContain(`no tag ${tag} in ${t.lab.mirrorName}/openshift/release-images`);
    expect(r.stderr).toMatch(
      /every node verifies the release image's signature \(the openshift ClusterImagePolicy\)/,
    );
    expect(r.stderr).toMatch(/hint: mirror the release again .*without --remove-signatures/);
    expect(clusterObjects(t)).toEqual([]);

    const render = await airgap(['install', 'cluster', '-f', t.lab.siteFile, '--render', t.fresh('render')]);
    expect(render.exitCode).toBe(2);
    expect(render.stderr).toContain(ClusterError.RELEASE_SIGNATURE_NOT_IN_MIRROR);
  }, 120_000);

  it('install cluster goes on once the signature tag is in the mirror', async () => {
    const tag = await pushReleaseSignatureTag(t.lab);
    const dir = t.fresh('render');
    const render = await airgap(['install', 'cluster', '-f', t.lab.siteFile, '--render', dir]);
    expect(render.exitCode, render.stderr).toBe(0);
    expect(render.stderr).toMatch(/release 4\.21\.0 = /);

    const h = await t.readyHub();
    const r = await t.install(h, ['--json']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toContain(tag);
    expect((JSON.parse(r.stdout) as { failures: string[] }).failures).toEqual([]);
  }, 180_000);
});

describe('a 4.18 site without signatures', () => {
  const t = useLabSite({ version: '4.18.3' });

  it('install cluster does not ask for a release signature below 4.21, and install hub renders no signature ConfigMap', async () => {
    const r = await airgap(['install', 'cluster', '-f', t.lab.siteFile, '--render', t.fresh('render')]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/release 4\.18\.3 = /);

    const dir = t.fresh('render-hub');
    const hub = await airgap(['install', 'hub', '-f', t.lab.siteFile, '--render', dir]);
    expect(hub.exitCode, hub.stderr).toBe(0);
    expect((await readdir(dir)).some((f) => f.includes(CM_NAME))).toBe(false);
  }, 120_000);
});
