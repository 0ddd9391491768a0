import { readFileSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeObject,
  renderCluster,
  renderedToYaml,
  renderHub,
  type KubeObject,
  type RenderedObject,
} from '../../../src/cluster/render/index.js';
import { loadSite, readSiteInputs, resolveSite, type ResolvedSite } from '../../../src/cluster/site/index.js';
import { validateAgainstCrd } from '../../helpers/crd.js';
import { tempDir } from '../../helpers/fixtures.js';
import { lazy, realdata, withRealCrds, withRealdata } from '../../helpers/realdata.js';
import {
  BMC_PASSWORD,
  CPO_IMAGE,
  PULL_AUTH,
  REGISTRY,
  RELEASE_DIGEST,
  writeSiteFixture,
} from '../site/fixture.js';

/** The real CRD of each kind airgap renders for a CRD. */
const CRDS: Record<string, string> = {
  HostedCluster: 'hypershift.openshift.io_hostedclusters.Default.crd.yaml',
  NodePool: 'hypershift.openshift.io_nodepools.Default.crd.yaml',
  InfraEnv: 'agent-install.openshift.io_infraenvs.yaml',
  NMStateConfig: 'agent-install.openshift.io_nmstateconfigs.yaml',
  AgentServiceConfig: 'agent-install.openshift.io_agentserviceconfigs.yaml',
  BareMetalHost: 'metal3.io_baremetalhosts.yaml',
  MultiClusterEngine: 'multicluster.openshift.io_multiclusterengines.yaml',
  ImageDigestMirrorSet: 'config.openshift.io_imagedigestmirrorsets.crd.yaml',
  ImageTagMirrorSet: 'config.openshift.io_imagetagmirrorsets.crd.yaml',
  Image: 'config.openshift.io_images.crd.yaml',
  CatalogSource: 'operators.coreos.com_catalogsources.yaml',
};
const BUILTIN = ['Namespace', 'ConfigMap', 'Secret', 'Role'];

let dir: string;
const sites: Record<'ipv4' | 'ipv6' | 'dual' | 'example', ResolvedSite> = {} as never;

async function resolved(file: string): Promise<ResolvedSite> {
  const site = await loadSite(file);
  return resolveSite(site, await readSiteInputs(site), {
    releaseImage: RELEASE_DIGEST,
    releaseVersion: '4.17.3',
    controlPlaneOperatorImage: CPO_IMAGE,
  });
}

beforeAll(async () => {
  dir = await tempDir('airgap-render-');
  await writeSiteFixture(dir);
  const v4 = await readFile(join(dir, 'site.yaml'), 'utf8');
  await writeFile(
    join(dir, 'site-ipv6.yaml'),
    v4
      .replace('stack: ipv4', 'stack: ipv6')
      .replace('- 192.168.125.0/24', '- 2620:52:0:1305::/64')
      .replace('apiServerAddress: 192.168.125.10', "apiServerAddress: '2620:52:0:1305::10'")
      .replace('address: 192.168.125.1\n', 'address: 2620:52:0:1305::1\n'),
  );
  // The hcp sample's names: `example` in `clusters`.
  await writeFile(join(dir, 'site-example.yaml'), v4.replace('  name: hosted', '  name: example'));
  sites.ipv4 = await resolved(join(dir, 'site.yaml'));
  sites.ipv6 = await resolved(join(dir, 'site-ipv6.yaml'));
  sites.dual = await resolved(join(dir, 'site-dual.yaml'));
  sites.example = await resolved(join(dir, 'site-example.yaml'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const all = (r: ResolvedSite): RenderedObject[] => [...renderHub(r), ...renderCluster(r)];
const find = (items: RenderedObject[], kind: string, name?: string): KubeObject => {
  const hit = items.find(
    (i) => i.object.kind === kind && (name === undefined || i.object.metadata.name === name),
  );
  if (!hit) throw new Error(`no ${kind} ${name ?? ''}`);
  return hit.object;
};
const spec = (o: KubeObject) => o.spec as Record<string, unknown>;

/** Paths of every `status` key, anywhere. */
function statusPaths(v: unknown, path = '$'): string[] {
  if (Array.isArray(v)) return v.flatMap((x, i) => statusPaths(x, `${path}[${i}]`));
  if (v === null || typeof v !== 'object') return [];
  return Object.entries(v).flatMap(([k, x]) => [
    ...(k === 'status' ? [`${path}.${k}`] : []),
    ...statusPaths(x, `${path}.${k}`),
  ]);
}

describe.each(['ipv4', 'ipv6', 'dual'] as const)('%s site', (stack) => {
  it('every object is of a CRD kind or of a known built-in kind', () => {
    for (const { object } of all(sites[stack]))
      if (!CRDS[object.kind]) expect(BUILTIN, describeObject(object)).toContain(object.kind);
  });

  withRealCrds.it('every object of a CRD kind validates against the real CRD', () => {
    for (const { object } of all(sites[stack])) {
      const crd = CRDS[object.kind];
      if (crd) expect(validateAgainstCrd(crd, object), describeObject(object)).toEqual([]);
    }
  });

  it('has no status anywhere, and round-trips through YAML', () => {
    const items = all(sites[stack]);
    expect(statusPaths(items.map((i) => i.object))).toEqual([]);
    const docs = loadAll(renderedToYaml(items, { sensitive: true }));
    expect(docs).toEqual(JSON.parse(JSON.stringify(items.map((i) => i.object))));
  });
});

describe('renderCluster', () => {
  it('renders in dependency order, with the names and namespaces of the flow', () => {
    const items = renderCluster(sites.ipv4);
    expect(items.map((i) => `${i.step} ${describeObject(i.object)}`)).toEqual([
      'namespaces Namespace clusters',
      'namespaces Namespace clusters-hosted',
      'cluster ConfigMap clusters/user-ca-bundle',
      'cluster Secret clusters/hosted-pull-secret',
      'cluster Secret clusters/hosted-ssh-key',
      'cluster Secret clusters/hosted-etcd-encryption-key',
      'cluster Secret clusters-hosted/pull-secret',
      'cluster Role clusters-hosted/capi-provider-role',
      'cluster HostedCluster clusters/hosted',
      'nodepool NodePool clusters/hosted',
      'infraenv NMStateConfig clusters-hosted/hosted-worker-1',
      'infraenv InfraEnv clusters-hosted/hosted',
      'hosts Secret clusters-hosted/hosted-worker-0-bmc-secret',
      'hosts BareMetalHost clusters-hosted/hosted-worker-0',
      'hosts Secret clusters-hosted/hosted-worker-1-bmc-secret',
      'hosts BareMetalHost clusters-hosted/hosted-worker-1',
    ]);
    expect(items.filter((i) => i.sensitive).map((i) => i.object.kind)).toEqual(Array(6).fill('Secret'));
    for (const i of items.filter(
      (x) => x.object.kind === 'Secret' && x.object.metadata.namespace === 'clusters',
    ))
      expect(i.object.metadata.labels).toEqual({
        'hypershift.openshift.io/safe-to-delete-with-cluster': 'true',
      });
    const pull = find(items, 'Secret', 'hosted-pull-secret');
    expect(pull.type).toBe('kubernetes.io/dockerconfigjson');
    expect(
      Buffer.from((pull.data as Record<string, string>)['.dockerconfigjson']!, 'base64').toString(),
    ).toContain(PULL_AUTH);
    const etcd = find(items, 'Secret', 'hosted-etcd-encryption-key');
    expect(Buffer.from((etcd.data as { key: string }).key, 'base64')).toHaveLength(32);
    expect(find(items, 'Role')).toMatchObject({
      rules: [{ apiGroups: ['agent-install.openshift.io'], resources: ['agents'], verbs: ['*'] }],
    });
  });

  it('HostedCluster: digest release, CPO annotation, mirrors, trust bundle, catalogs, NodePort services', () => {
    const hc = find(renderCluster(sites.ipv4), 'HostedCluster');
    expect(hc.metadata.annotations).toEqual({
      'hypershift.openshift.io/control-plane-operator-image': CPO_IMAGE,
      // Only redhat-operators was mirrored: the ImageStream rewrite, not the four image annotations.
      'hypershift.openshift.io/olm-catalogs-is-registry-overrides': `registry.redhat.io/redhat=${REGISTRY}/redhat`,
    });
    const s = spec(hc);
    expect(s.release).toEqual({ image: RELEASE_DIGEST });
    expect(s.additionalTrustBundle).toEqual({ name: 'user-ca-bundle' });
    expect(s.imageContentSources).toContainEqual({
      mirrors: [`${REGISTRY}/openshift/release`],
      source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
    });
    expect(s.platform).toEqual({ agent: { agentNamespace: 'clusters-hosted' }, type: 'Agent' });
    expect(s.etcd).toMatchObject({
      managed: { storage: { persistentVolume: { size: '8Gi', storageClassName: 'lvms-vg1' } } },
    });
    expect(
      (s.services as { servicePublishingStrategy: unknown }[]).map((x) => x.servicePublishingStrategy),
    ).toEqual(Array(5).fill({ nodePort: { address: '192.168.125.10' }, type: 'NodePort' }));
    expect(s.networking).toEqual({
      clusterNetwork: [{ cidr: '10.132.0.0/14' }],
      machineNetwork: [{ cidr: '192.168.125.0/24' }],
      networkType: 'OVNKubernetes',
      serviceNetwork: [{ cidr: '172.31.0.0/16' }],
    });
  });

  it('four digest catalog images become the four catalog annotations', () => {
    const images = Object.fromEntries(
      ['redhat-operators', 'certified-operators', 'community-operators', 'redhat-marketplace'].map((c) => [
        c,
        `${REGISTRY}/redhat/${c}@sha256:${'c'.repeat(64)}`,
      ]),
    );
    const hc = find(renderCluster({ ...sites.ipv4, catalogOverrides: { images } }), 'HostedCluster');
    expect(hc.metadata.annotations).toMatchObject({
      'hypershift.openshift.io/redhat-operators-catalog-image': images['redhat-operators'],
      'hypershift.openshift.io/redhat-marketplace-catalog-image': images['redhat-marketplace'],
    });
    expect(hc.metadata.annotations).not.toHaveProperty(
      'hypershift.openshift.io/olm-catalogs-is-registry-overrides',
    );
  });

  it('dual stack: both families, LoadBalancer/Route services, guest catalogs, agent labels and approval', () => {
    const items = renderCluster(sites.dual);
    const s = spec(find(items, 'HostedCluster'));
    expect(s.networking).toMatchObject({
      clusterNetwork: [{ cidr: '10.132.0.0/14' }, { cidr: 'fd01::/48' }],
      serviceNetwork: [{ cidr: '172.31.0.0/16' }, { cidr: 'fd02::/112' }],
    });
    expect(s.services).toEqual([
      { service: 'APIServer', servicePublishingStrategy: { type: 'LoadBalancer' } },
      { service: 'Ignition', servicePublishingStrategy: { type: 'Route' } },
      { service: 'Konnectivity', servicePublishingStrategy: { type: 'Route' } },
      { service: 'OAuthServer', servicePublishingStrategy: { type: 'Route' } },
      { service: 'OIDC', servicePublishingStrategy: { type: 'Route' } },
    ]);
    expect(s.olmCatalogPlacement).toBe('guest');
    expect(Object.keys(find(items, 'HostedCluster').metadata.annotations!)).toEqual([
      'hypershift.openshift.io/control-plane-operator-image',
    ]);
    expect(spec(find(items, 'NodePool')).platform).toEqual({
      agent: { agentLabelSelector: { matchLabels: { size: 'large' } } },
      type: 'Agent',
    });
    const ie = spec(find(items, 'InfraEnv'));
    expect(ie).toMatchObject({
      agentApproval: { autoApprove: true },
      agentLabels: { size: 'large' },
      osImageVersion: '4.17',
    });
    expect(ie).not.toHaveProperty('nmStateConfigLabelSelector');
    const bmhs = items.filter((i) => i.object.kind === 'BareMetalHost').map((i) => spec(i.object).bmc);
    expect(bmhs).toEqual([
      {
        address:
          'redfish-virtualmedia://[2620:52:0:1306::1]:9000/redfish/v1/Systems/local/hosted-dual-worker-0',
        credentialsName: 'hosted-dual-worker-0-bmc-secret',
        disableCertificateVerification: true,
      },
      {
        address: 'ilo5-virtualmedia://[2620:52:0:1306::22]/redfish/v1/Systems/1',
        credentialsName: 'hosted-dual-worker-1-bmc-secret',
        disableCertificateVerification: false,
      },
    ]);
  });

  it('InfraEnv, NMStateConfig and BareMetalHost follow the BMAC contract', () => {
    const items = renderCluster(sites.ipv4);
    const ie = find(items, 'InfraEnv');
    expect(spec(ie)).toMatchObject({
      additionalTrustBundle: sites.ipv4.caBundlePem,
      cpuArchitecture: 'x86_64',
      nmStateConfigLabelSelector: { matchLabels: { 'airgap.openshift.io/infraenv': 'hosted' } },
      pullSecretRef: { name: 'pull-secret' },
      sshAuthorizedKey: sites.ipv4.sshPublicKey,
    });
    expect(spec(ie)).not.toHaveProperty('agentApproval');
    expect(find(items, 'NMStateConfig').metadata.labels).toEqual({
      'airgap.openshift.io/infraenv': 'hosted',
    });
    const bmh = find(items, 'BareMetalHost', 'hosted-worker-0');
    expect(bmh.metadata).toMatchObject({
      labels: { 'infraenvs.agent-install.openshift.io': 'hosted' },
      annotations: {
        'inspect.metal3.io': 'disabled',
        'bmac.agent-install.openshift.io/hostname': 'hosted-worker-0',
        'bmac.agent-install.openshift.io/role': 'worker',
      },
    });
    expect(spec(bmh)).toEqual({
      automatedCleaningMode: 'disabled',
      bmc: {
        address:
          'redfish-virtualmedia://192.168.125.1:8000/redfish/v1/Systems/6b1e7c52-0c1b-4a2e-9d7e-2f1a9c0e0001',
        credentialsName: 'hosted-worker-0-bmc-secret',
        disableCertificateVerification: true,
      },
      bootMACAddress: '52:54:00:aa:01:01',
      bootMode: 'UEFI',
      online: true,
      rootDeviceHints: { deviceName: '/dev/vda' },
    });
  });

  it('IPv6: NodePort address unbracketed, BMC address bracketed', () => {
    const items = renderCluster(sites.ipv6);
    const s = spec(find(items, 'HostedCluster'));
    expect(
      (s.services as { servicePublishingStrategy: { nodePort: unknown } }[])[0]!.servicePublishingStrategy
        .nodePort,
    ).toEqual({
      address: '2620:52:0:1305::10',
    });
    expect(s.networking).toMatchObject({
      clusterNetwork: [{ cidr: 'fd01::/48' }],
      serviceNetwork: [{ cidr: 'fd02::/112' }],
    });
    expect(spec(find(items, 'BareMetalHost', 'hosted-worker-0')).bmc).toMatchObject({
      address:
        'redfish-virtualmedia://[2620:52:0:1305::1]:8000/redfish/v1/Systems/6b1e7c52-0c1b-4a2e-9d7e-2f1a9c0e0001',
    });
  });
});

withRealdata.describe('the real hcp create cluster agent --render sample', () => {
  const sample = lazy(
    () =>
      loadAll(
        readFileSync(
          realdata('samples', 'cr-examples', 'hypershift', 'hcp-create-cluster-agent-render.yaml'),
          'utf8',
        ),
      ).filter((o) => o !== null) as KubeObject[],
  );

  /** Leaf paths (empty objects and lists count as leaves) → values. */
  function leaves(v: unknown, path = '', out = new Map<string, unknown>()): Map<string, unknown> {
    if (v !== null && typeof v === 'object' && Object.keys(v).length > 0) {
      for (const [k, x] of Object.entries(v))
        leaves(x, Array.isArray(v) ? `${path}[${k}]` : `${path}.${k}`, out);
    } else out.set(path, v);
    return out;
  }

  /** Fields that differ from hcp's render on purpose, and why. */
  const HC_DIFFERENT: Record<string, string> = {
    '.spec.controllerAvailabilityPolicy':
      'the site default is HighlyAvailable, the hcp product CLI default; the sample was rendered with the core default SingleReplica',
    '.spec.dns.baseDomain': 'from the site (hcp defaults to example.com)',
    '.spec.infraID':
      'the cluster name, stable across renders (infraID is immutable); hcp adds a random suffix',
    '.spec.platform.agent.agentNamespace':
      'the control plane namespace <ns>-<name>, where the InfraEnv and Agents live (the sample was rendered without --agent-namespace)',
    '.spec.release.image': 'the mirrored release by digest (the sample has none)',
    '.spec.sshKey': 'the site always has an SSH key (the sample had none: {})',
  };
  for (let i = 0; i < 5; i++)
    HC_DIFFERENT[`.spec.services[${i}].servicePublishingStrategy.nodePort.address`] =
      "the site's apiServerAddress (the sample's is fakeAddress)";
  /** Fields airgap adds that the sample lacks, and why. */
  const HC_ADDED: Record<string, string> = {
    '.metadata.annotations':
      'control-plane-operator image by digest (OCPBUGS-29494) and the OLM catalog overrides',
    '.spec.additionalTrustBundle.name': 'user-ca-bundle: the workers trust the mirror registry',
    '.spec.imageContentSources': 'the mirror mapping, for the data plane',
    '.spec.etcd.managed.storage.persistentVolume.storageClassName': 'the site etcd storage class',
    '.spec.networking.machineNetwork': 'the site machine networks',
    '.spec.sshKey.name': 'the SSH key Secret',
  };
  const NP_DIFFERENT: Record<string, string> = {
    '.spec.release.image': 'the mirrored release by digest (the sample has none)',
  };

  function compare(
    ours: KubeObject,
    theirs: KubeObject,
    different: Record<string, string>,
    added: Record<string, string>,
  ) {
    const { status: _s, ...t } = theirs;
    const a = leaves(ours);
    const b = leaves(t);
    const covered = (p: string, table: Record<string, string>) =>
      Object.keys(table).some((k) => p === k || p.startsWith(`${k}.`) || p.startsWith(`${k}[`));
    for (const [p, v] of b) {
      if (covered(p, different)) continue;
      expect(a.has(p), `sample field ${p} missing`).toBe(true);
      expect(a.get(p), p).toEqual(v);
    }
    for (const p of a.keys()) {
      if (b.has(p) || covered(p, different) || covered(p, added)) continue;
      throw new Error(`field ${p} is not in the sample and not listed as added`);
    }
    for (const p of Object.keys(different)) expect(a.get(p), p).not.toEqual(b.get(p));
  }

  it('HostedCluster matches field by field, except the listed differences', () => {
    const hc = find(renderCluster(sites.example), 'HostedCluster');
    compare(
      hc,
      sample().find((o) => o.kind === 'HostedCluster')!,
      HC_DIFFERENT,
      HC_ADDED,
    );
  });

  it('NodePool matches field by field, except the release', () => {
    const np = find(renderCluster(sites.example), 'NodePool');
    compare(
      np,
      sample().find((o) => o.kind === 'NodePool')!,
      NP_DIFFERENT,
      {},
    );
  });

  it('the Namespace and Secrets match in names, types and labels', () => {
    const ours = renderCluster(sites.example).map((i) => i.object);
    for (const kind of ['Namespace', 'Secret']) {
      for (const t of sample().filter((o) => o.kind === kind)) {
        const o = ours.find((x) => x.kind === kind && x.metadata.name === t.metadata.name);
        expect(o, `${kind} ${t.metadata.name}`).toBeDefined();
        expect(o!.metadata).toEqual(t.metadata);
        // Intended difference: hcp writes the pull secret without a type (Opaque); airgap types it
        // kubernetes.io/dockerconfigjson, as the seed's flow and the InfraEnv's pullSecretRef expect.
        if (t.metadata.name === 'example-pull-secret') expect(o!.type).toBe('kubernetes.io/dockerconfigjson');
        else expect(o!.type).toEqual(t.type);
        expect(Object.keys(o!.data ?? {})).toEqual(Object.keys(t.data ?? {}));
      }
    }
  });
});

describe('renderHub', () => {
  it('renders trust, mirror sets, catalogs, MCE, install flags, custom-registries, AgentServiceConfig', () => {
    const items = renderHub(sites.ipv4);
    expect(items.map((i) => `${i.step} ${describeObject(i.object)}`)).toEqual([
      'trust ConfigMap openshift-config/registry-config',
      'trust Image cluster',
      'mirror ImageDigestMirrorSet idms-release-0',
      'mirror ImageDigestMirrorSet idms-operator-0',
      'mirror ImageTagMirrorSet itms-generic-0',
      'catalogs CatalogSource openshift-marketplace/cs-redhat-operator-index-v4-17',
      'mce MultiClusterEngine multiclusterengine',
      'mce-config ConfigMap local-cluster/hypershift-operator-install-flags',
      'mce-config ConfigMap multicluster-engine/custom-registries',
      'agent AgentServiceConfig agent',
    ]);
    expect(items.every((i) => !i.sensitive)).toBe(true);
    expect(find(items, 'ConfigMap', 'registry-config').data).toEqual({
      'registry.lab.example.com..8443': sites.ipv4.caBundlePem,
    });
    expect(spec(find(items, 'Image'))).toEqual({ additionalTrustedCA: { name: 'registry-config' } });
    expect(find(items, 'ConfigMap', 'hypershift-operator-install-flags').data).toEqual({
      installFlagsToAdd: '',
      installFlagsToRemove: '--enable-uwm-telemetry-remote-write',
    });
    expect(spec(find(items, 'MultiClusterEngine'))).toEqual({
      overrides: {
        components: ['assisted-service', 'hypershift', 'hypershift-local-hosting', 'local-cluster'].map(
          (name) => ({
            name,
            enabled: true,
          }),
        ),
      },
    });
    const cr = find(items, 'ConfigMap', 'custom-registries');
    expect(cr.metadata.labels).toEqual({ app: 'assisted-service' });
    const conf = parseToml((cr.data as Record<string, string>)['registries.conf']!) as {
      registry: { location: string }[];
    };
    expect(conf.registry.map((r) => r.location)).toContain('quay.io/openshift-release-dev/ocp-release');
    const asc = spec(find(items, 'AgentServiceConfig'));
    expect(asc).toMatchObject({
      databaseStorage: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '10Gi' } },
        storageClassName: 'lvms-vg1',
      },
      mirrorRegistryRef: { name: 'custom-registries' },
      osImages: [{ cpuArchitecture: 'x86_64', openshiftVersion: '4.17' }],
    });
  });

  it('osImages over HTTPS: a tls.crt ConfigMap with the site CA, named by OSImageCACertRef; none over HTTP', () => {
    expect(renderHub(sites.ipv4).some((i) => i.object.metadata.name === 'airgap-os-images-ca')).toBe(false);
    expect(spec(find(renderHub(sites.ipv4), 'AgentServiceConfig')).OSImageCACertRef).toBeUndefined();
    const https: ResolvedSite = {
      ...sites.ipv4,
      osImages: sites.ipv4.osImages.map((o) => ({ ...o, url: o.url.replace(/^http:/, 'https:') })),
    };
    const items = renderHub(https);
    const cm = find(items, 'ConfigMap', 'airgap-os-images-ca');
    expect(cm.metadata.namespace).toBe('multicluster-engine');
    expect(cm.data).toEqual({ 'tls.crt': sites.ipv4.caBundlePem });
    expect(spec(find(items, 'AgentServiceConfig')).OSImageCACertRef).toEqual({ name: 'airgap-os-images-ca' });
  });

  withRealCrds.it('the AgentServiceConfig of HTTPS osImages validates against the real CRD', () => {
    const https: ResolvedSite = {
      ...sites.ipv4,
      osImages: sites.ipv4.osImages.map((o) => ({ ...o, url: o.url.replace(/^http:/, 'https:') })),
    };
    const asc = find(renderHub(https), 'AgentServiceConfig');
    expect(spec(asc).OSImageCACertRef).toEqual({ name: 'airgap-os-images-ca' });
    expect(validateAgainstCrd(CRDS.AgentServiceConfig!, asc)).toEqual([]);
  });

  it('inline imageContentSources become one IDMS; no catalogs', () => {
    const items = renderHub(sites.dual);
    const idms = items.filter((i) => i.object.kind === 'ImageDigestMirrorSet');
    expect(idms.map((i) => i.object.metadata.name)).toEqual(['airgap-hosted-dual']);
    expect(items.some((i) => i.object.kind === 'CatalogSource')).toBe(false);
  });
});

describe('renderedToYaml', () => {
  it('leaves Secrets out unless sensitive, like hcp --render', () => {
    const items = [...renderHub(sites.ipv4), ...renderCluster(sites.ipv4)];
    const plain = renderedToYaml(items);
    const kinds = (loadAll(plain) as KubeObject[]).map((o) => o.kind);
    expect(kinds).not.toContain('Secret');
    expect(plain).not.toContain(Buffer.from(BMC_PASSWORD).toString('base64'));
    expect(plain).not.toContain(sites.ipv4.etcdEncryptionKey);
    expect(plain.startsWith('---\n')).toBe(true);
    const full = loadAll(renderedToYaml(items, { sensitive: true })) as KubeObject[];
    expect(full.filter((o) => o.kind === 'Secret')).toHaveLength(6);
    // PEMs are literal blocks with `|`, never `|-`.
    expect(plain).toMatch(/ca-bundle\.crt: \|\n/);
    expect(plain).not.toMatch(/ca-bundle\.crt: \|-/);
    expect(load(renderedToYaml(items.slice(0, 1)))).toEqual(items[0]!.object);
  });
});
