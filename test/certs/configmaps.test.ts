import { X509Certificate } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load, loadAll } from 'js-yaml';
import { parse as parseToml } from 'smol-toml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  readCaFile,
  registryConfigKey,
  renderTrustConfigMaps,
  trustConfigMapFiles,
  trustConfigMapsYaml,
  type ConfigMap,
  type TrustConfigMapsOptions,
} from '../../src/certs/configmaps.js';
import { createCA, issueServerCert, type CertKeyPair } from '../../src/certs/mint.js';
import { parseHostPort, parseMirrorFlag, readMirrorSetFile } from '../../src/certs/mirror-mapping.js';
import type { BuiltImage } from '../../lab/images.js';
import {
  buildRegistriesConf,
  buildRegistriesConfFromMappings,
  writeClusterResources,
  type MirroredImage,
} from '../../src/mirror/outputs/index.js';
import { runMirror } from '../../src/mirror/run.js';
import { img, ref } from '../mirror/outputs/helpers.js';
import { airgap } from '../helpers/cli.js';
import { validateAgainstCrd } from '../helpers/crd.js';
import { refOf, seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { realdata, rejection, withRealCrds, withRealdata } from '../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';
import { CertsError } from '../../src/certs/errors.js';
import { CommonError } from '../../src/util/errors.js';

const IMAGE_CRD = 'config.openshift.io_images.crd.yaml';
const SAMPLES = () => realdata('samples', 'registries-conf');
const D = `sha256:${'4'.repeat(64)}`;

/** A PEM as airgap writes it: LF line ends (a CA file given to it may have CRLF). */
const lf = (pem: string) => pem.replaceAll('\r\n', '\n');

/** Small, fast CAs (ECDSA P-256). */
function ca(commonName: string, extra: { notBefore?: Date; days?: number } = {}): Promise<CertKeyPair> {
  return createCA({ commonName, keyType: 'ecdsa-p256', ...extra });
}

const IDMS = `---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-release-0
spec:
  imageDigestMirrors:
  - mirrors:
    - mirror.example.com:8443/ocp/openshift/release
    source: quay.io/openshift-release-dev/ocp-v4.0-art-dev
  - mirrors:
    - mirror.example.com:8443/ocp/openshift/release-images
    source: quay.io/openshift-release-dev/ocp-release
---
apiVersion: config.openshift.io/v1
kind: ImageDigestMirrorSet
metadata:
  name: idms-generic-0
spec:
  imageDigestMirrors:
  - mirrors:
    - mirror.example.com:8443/ocp/org
    source: quay.io/org
`;

const ITMS = `---
apiVersion: config.openshift.io/v1
kind: ImageTagMirrorSet
metadata:
  name: itms-generic-0
spec:
  imageTagMirrors:
  - mirrors:
    - quay.lab.example.com/org
    source: quay.io/org
`;

describe('airgap certs configmaps: rendering', () => {
  let dir: string;
  let caA: CertKeyPair;
  let caB: CertKeyPair;
  let caAFile: string;
  let caBFile: string;
  let idmsFile: string;
  let itmsFile: string;
  /** Options every case starts from: CA A, the IDMS and ITMS above. */
  const base = (): TrustConfigMapsOptions => ({
    caFiles: [caAFile],
    idmsFiles: [idmsFile],
    itmsFiles: [itmsFile],
  });

  beforeAll(async () => {
    dir = await tempDir();
    caA = await ca('Lab CA A');
    caB = await ca('Lab CA B');
    caAFile = join(dir, 'ca-a.crt');
    caBFile = join(dir, 'ca-b.crt');
    await writeFile(caAFile, caA.certPem);
    // openssl x509 -text output and CRLF line ends around the PEM: read past both.
    await writeFile(caBFile, `Certificate:\r\n    Data: ...\r\n${caB.certPem.replaceAll('\n', '\r\n')}`);
    idmsFile = join(dir, 'idms-oc-mirror.yaml');
    itmsFile = join(dir, 'itms-oc-mirror.yaml');
    await writeFile(idmsFile, IDMS);
    await writeFile(itmsFile, ITMS);
  });

  it('writes registry-config with a host..port key per registry and each PEM as a `|` block that reads back exactly', async () => {
    const r = await renderTrustConfigMaps({
      ...base(),
      registries: ['mirror.example.com:8443', 'quay.lab.example.com', `10.0.0.5:5000=${caBFile}`],
    });
    const text = trustConfigMapFiles(r).get('registry-config.yaml')!;
    expect(text).toContain('  mirror.example.com..8443: |\n    -----BEGIN CERTIFICATE-----\n');
    expect(text).toContain('  quay.lab.example.com: |\n');
    expect(text).toContain('  10.0.0.5..5000: |\n');
    expect(text).not.toMatch(/: \|[-+]/);
    const cm = load(text) as ConfigMap;
    expect(cm.metadata).toEqual({ name: 'registry-config', namespace: 'openshift-config' });
    expect(Object.keys(cm.data)).toEqual([
      'mirror.example.com..8443',
      'quay.lab.example.com',
      '10.0.0.5..5000',
    ]);
    expect(cm.data['mirror.example.com..8443']).toBe(lf(caA.certPem));
    expect(text).not.toContain('\r');
    // Its own CA file, given with host=file, read past the text and CRLFs around it.
    expect(cm.data['10.0.0.5..5000']).toBe(lf(caB.certPem));
    expect(new X509Certificate(cm.data['10.0.0.5..5000']!).subject).toBe('CN=Lab CA B');

    // user-ca-bundle and custom-registries get every CA, once each, as `|` blocks.
    for (const file of ['user-ca-bundle.yaml', 'custom-registries.yaml']) {
      const t = trustConfigMapFiles(r).get(file)!;
      expect(t).toContain('  ca-bundle.crt: |\n');
      expect(t).not.toMatch(/: \|[-+]/);
      expect((load(t) as ConfigMap).data['ca-bundle.crt']).toBe(lf(caA.certPem) + lf(caB.certPem));
    }
    const user = load(trustConfigMapFiles(r).get('user-ca-bundle.yaml')!) as ConfigMap;
    expect(user.metadata).toEqual({ name: 'user-ca-bundle', namespace: 'clusters' });
    const custom = load(trustConfigMapFiles(r).get('custom-registries.yaml')!) as ConfigMap;
    expect(custom.metadata).toEqual({
      name: 'custom-registries',
      namespace: 'multicluster-engine',
      labels: { app: 'assisted-service' },
    });
    expect(Object.keys(custom.data)).toEqual(['ca-bundle.crt', 'registries.conf']);
    expect(custom.data['registries.conf']).toBe(trustConfigMapFiles(r).get('registries.conf'));

    // The stdout form: the same four objects, one YAML stream.
    const docs = loadAll(trustConfigMapsYaml(r)) as { kind: string; metadata: { name: string } }[];
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual([
      'ConfigMap/registry-config',
      'Image/cluster',
      'ConfigMap/user-ca-bundle',
      'ConfigMap/custom-registries',
    ]);
  });

  it('writes user-ca-bundle into the hosted cluster namespace given', async () => {
    const r = await renderTrustConfigMaps({ ...base(), hostedClusterNamespace: 'hcp-prod' });
    expect(r.userCaBundle.metadata.namespace).toBe('hcp-prod');
    expect(r.readme).toContain('oc create namespace hcp-prod');
  });

  it('without --registry, trusts the registries of the mirrors in the mapping', async () => {
    const r = await renderTrustConfigMaps(base());
    expect(r.registries.map((g) => [g.registry, g.key, g.from])).toEqual([
      ['mirror.example.com:8443', 'mirror.example.com..8443', 'mapping'],
      ['quay.lab.example.com', 'quay.lab.example.com', 'mapping'],
    ]);
  });

  it('patches image.config.openshift.io/cluster in the object form, the same as the one-liner in the README', async () => {
    const r = await renderTrustConfigMaps(base());
    const patch = load(trustConfigMapFiles(r).get('image-cluster-patch.yaml')!);
    expect(patch).toEqual({
      apiVersion: 'config.openshift.io/v1',
      kind: 'Image',
      metadata: { name: 'cluster' },
      spec: { additionalTrustedCA: { name: 'registry-config' } },
    });
    // The one-liner is the same merge patch, and it is in the README.
    expect(r.patchCommand).toBe(
      `oc patch image.config.openshift.io/cluster --type merge -p '{"spec":{"additionalTrustedCA":{"name":"registry-config"}}}'`,
    );
    const merge = JSON.parse(r.patchCommand.slice(r.patchCommand.indexOf("'") + 1, -1));
    expect({ ...r.imagePatch, ...merge }).toEqual(patch);
    expect(trustConfigMapFiles(r).get('README.md')).toContain(r.patchCommand);
  });

  withRealCrds.it(
    'the patch is in the form the real Image CRD accepts; the seeds’ list form fails it',
    async () => {
      const r = await renderTrustConfigMaps(base());
      const patch = load(trustConfigMapFiles(r).get('image-cluster-patch.yaml')!);
      expect(validateAgainstCrd(IMAGE_CRD, patch)).toEqual([]);
      const listForm = { ...r.imagePatch, spec: { additionalTrustedCA: [{ name: 'registry-config' }] } };
      expect(validateAgainstCrd(IMAGE_CRD, listForm)).toEqual([
        { path: '$.spec.additionalTrustedCA', message: 'must be object' },
      ]);
      const merge = JSON.parse(r.patchCommand.slice(r.patchCommand.indexOf("'") + 1, -1));
      expect(validateAgainstCrd(IMAGE_CRD, { ...r.imagePatch, ...merge })).toEqual([]);
    },
  );

  it('writes registries.conf from the IDMS and ITMS: digest-only prefixes marked, mixed ones per mirror', async () => {
    const r = await renderTrustConfigMaps(base());
    const conf = parseToml(r.registriesConf);
    expect(conf).toEqual({
      registry: [
        {
          prefix: 'quay.io/openshift-release-dev/ocp-release',
          location: 'quay.io/openshift-release-dev/ocp-release',
          'mirror-by-digest-only': true,
          mirror: [{ location: 'mirror.example.com:8443/ocp/openshift/release-images' }],
        },
        {
          prefix: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
          location: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
          'mirror-by-digest-only': true,
          mirror: [{ location: 'mirror.example.com:8443/ocp/openshift/release' }],
        },
        {
          prefix: 'quay.io/org',
          location: 'quay.io/org',
          mirror: [
            { location: 'mirror.example.com:8443/ocp/org', 'pull-from-mirror': 'digest-only' },
            { location: 'quay.lab.example.com/org', 'pull-from-mirror': 'tag-only' },
          ],
        },
      ],
    });
    expect(r.registriesConf).toMatch(/^# Generated by airgap certs configmaps/);
    expect(r.registriesConf).toContain(
      '[[registry]]\nprefix = "quay.io/org"\nlocation = "quay.io/org"\n\n[[registry.mirror]]\nlocation = "mirror.example.com:8443/ocp/org"\npull-from-mirror = "digest-only"\n',
    );
  });

  withRealdata.it('writes a registries.conf shaped like real files', async () => {
    const conf = parseToml((await renderTrustConfigMaps(base())).registriesConf);
    // Every key we write is one the real containers-registries.conf samples use, at the same level.
    const registryKeys = new Set<string>();
    const mirrorKeys = new Set<string>();
    for (const file of readdirSync(SAMPLES())) {
      const sample = parseToml(readFileSync(join(SAMPLES(), file), 'utf8')) as {
        registry?: Record<string, unknown>[];
      };
      for (const reg of sample.registry ?? []) {
        for (const k of Object.keys(reg)) registryKeys.add(k);
        for (const m of (reg.mirror as Record<string, unknown>[] | undefined) ?? [])
          for (const k of Object.keys(m)) mirrorKeys.add(k);
      }
    }
    const ours = conf as { registry: Record<string, unknown>[] };
    expect(Object.keys(ours)).toEqual(['registry']);
    for (const reg of ours.registry) {
      for (const k of Object.keys(reg)) expect(registryKeys, `registry key ${k}`).toContain(k);
      for (const m of reg.mirror as Record<string, unknown>[])
        for (const k of Object.keys(m)) expect(mirrorKeys, `mirror key ${k}`).toContain(k);
    }
  });

  it('adds --mirror mappings (source=mirror, @digest, @tag) to those of the files', async () => {
    const r = await renderTrustConfigMaps({
      caFiles: [caAFile],
      mirrors: [
        'registry.redhat.io/rhacm2=mirror.example.com:8443/rhacm2@digest',
        'registry.redhat.io/ubi9=mirror.example.com:8443/ubi9@tag',
        'docker.io/library=mirror.example.com:8443/library',
      ],
    });
    expect(parseToml(r.registriesConf)).toEqual({
      registry: [
        {
          prefix: 'docker.io/library',
          location: 'docker.io/library',
          mirror: [{ location: 'mirror.example.com:8443/library' }],
        },
        {
          prefix: 'registry.redhat.io/rhacm2',
          location: 'registry.redhat.io/rhacm2',
          'mirror-by-digest-only': true,
          mirror: [{ location: 'mirror.example.com:8443/rhacm2' }],
        },
        {
          prefix: 'registry.redhat.io/ubi9',
          location: 'registry.redhat.io/ubi9',
          mirror: [{ location: 'mirror.example.com:8443/ubi9', 'pull-from-mirror': 'tag-only' }],
        },
      ],
    });
  });

  withRealdata.it(
    'reads a real IDMS (one document, the same source twice) into one [[registry]] with both mirrors in order',
    async () => {
      const read = await readMirrorSetFile(
        realdata('samples', 'mirror-config', 'idms-oc-testdata-64921.yaml'),
        'digest',
      );
      const conf = buildRegistriesConfFromMappings(read.mappings);
      expect(
        conf.registry.find((e) => e.prefix === 'quay.io/openshift-release-dev/ocp-v4.0-art-dev'),
      ).toEqual({
        prefix: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
        location: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
        'mirror-by-digest-only': true,
        mirror: [
          { location: 'localhost:5000/openshift-release-dev/ocp-release' },
          { location: 'localhost:5000/target/release' },
        ],
      });
    },
  );

  it('reads back what airgap mirror writes to cluster-resources into the same registries.conf that run wrote', async () => {
    const images: MirroredImage[] = [
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
      img(
        'operator',
        ref('registry.redhat.io', 'rhacm2/a', undefined, D),
        ref('mirror.local:8443', 'ocp/rhacm2/a', 'x'),
      ),
      img('generic', ref('quay.io', 'org/app', 'v1'), ref('mirror.local:8443', 'ocp/org/app', 'v1')),
      img(
        'catalog',
        ref('registry.redhat.io', 'redhat/redhat-operator-index', 'v4.18'),
        ref('mirror.local:8443', 'ocp/redhat/redhat-operator-index', 'v4.18'),
      ),
    ];
    const cr = join(dir, 'cluster-resources');
    await writeClusterResources(cr, images);
    const r = await renderTrustConfigMaps({ caFiles: [caAFile], clusterResources: cr });
    expect(parseToml(r.registriesConf)).toEqual(buildRegistriesConf(images));
    expect(r.mirrorSets.map((s) => s.slice(cr.length + 1))).toEqual([
      'idms-oc-mirror.yaml, document 1: ImageDigestMirrorSet/idms-release-0',
      'idms-oc-mirror.yaml, document 2: ImageDigestMirrorSet/idms-operator-0',
      'itms-oc-mirror.yaml, document 1: ImageTagMirrorSet/itms-release-0',
      'itms-oc-mirror.yaml, document 2: ImageTagMirrorSet/itms-generic-0',
    ]);
  });

  it('parses registry hosts as image references name them', () => {
    expect(parseHostPort('registry.example.com')).toEqual({ host: 'registry.example.com', ipv6: false });
    expect(parseHostPort('registry.example.com:8443')).toEqual({
      host: 'registry.example.com',
      port: 8443,
      ipv6: false,
    });
    expect(parseHostPort('10.0.0.5:5000')).toEqual({ host: '10.0.0.5', port: 5000, ipv6: false });
    expect(parseHostPort('[fd00::1]:5000')).toEqual({ host: '[fd00::1]', port: 5000, ipv6: true });
    expect(registryConfigKey('localhost:5000')).toBe('localhost..5000');
    expect(registryConfigKey('Registry-1.Example.com')).toBe('Registry-1.Example.com');
    expect(parseMirrorFlag('quay.io/a=m.example.com:5000/a/b@tag')).toEqual({
      source: 'quay.io/a',
      mirror: 'm.example.com:5000/a/b',
      digest: false,
      tag: true,
    });
  });
});

describe('airgap certs configmaps: bad input is refused before anything is written', () => {
  let dir: string;
  let good: string;
  let idms: string;
  const opts = (o: Partial<TrustConfigMapsOptions>): TrustConfigMapsOptions => ({
    caFiles: [good],
    idmsFiles: [idms],
    ...o,
  });

  beforeAll(async () => {
    dir = await tempDir();
    const lab = await ca('Good CA');
    good = join(dir, 'ca.crt');
    await writeFile(good, lab.certPem);
    idms = join(dir, 'idms.yaml');
    await writeFile(idms, IDMS);
    const server = await issueServerCert({
      ca: lab,
      dnsNames: ['registry.example.com'],
      ipAddresses: [],
      keyType: 'ecdsa-p256',
    });
    await writeFile(join(dir, 'server.crt'), server.certPem);
    await writeFile(join(dir, 'with-key.crt'), lab.certPem + lab.keyPem);
    await writeFile(join(dir, 'notes.txt'), 'registry CA: ask the network team\n');
    await writeFile(join(dir, 'ca.der'), new X509Certificate(lab.certPem).raw);
    await writeFile(
      join(dir, 'expired.crt'),
      (await ca('Old CA', { notBefore: new Date(Date.now() - 400 * 86_400_000), days: 365 })).certPem,
    );
    await writeFile(
      join(dir, 'future.crt'),
      (await ca('Future CA', { notBefore: new Date(Date.now() + 10 * 86_400_000), days: 365 })).certPem,
    );
    await writeFile(join(dir, 'chain.crt'), lab.certPem + server.certPem);
  });

  it.each([
    ['not a PEM', 'notes.txt', CertsError.CERT_INVALID, /holds no PEM certificate/, /BEGIN CERTIFICATE/],
    ['DER', 'ca.der', CertsError.CERT_INVALID, /holds no PEM certificate/, /BEGIN CERTIFICATE/],
    [
      'a server certificate',
      'server.crt',
      CertsError.CA_NOT_CA,
      /CN=registry.example.com is not a CA/,
      /CN=Good CA/,
    ],
    ['an expired CA', 'expired.crt', CertsError.CA_EXPIRED, /the CA CN=Old CA expired on \d{4}-/, /renew/],
    ['a CA not valid yet', 'future.crt', CertsError.CA_NOT_YET_VALID, /not valid before/, /clock/],
  ])('--ca %s', async (_what, file, code, message, hint) => {
    const e = await rejection(renderTrustConfigMaps(opts({ caFiles: [join(dir, file)] })));
    expect(e.code).toBe(code);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(message);
    expect(e.where).toBe(join(dir, file));
    expect(e.hint).toMatch(hint);
  });

  it('uses only the certificate of a file that also holds the CA key, and says so', async () => {
    const r = await renderTrustConfigMaps(opts({ caFiles: [join(dir, 'with-key.crt')] }));
    expect(r.warnings).toContainEqual(expect.stringMatching(/also holds a private key/));
    for (const text of trustConfigMapFiles(r).values()) expect(text).not.toContain('PRIVATE KEY');
  });

  it('names the certificate in a bundle that is not a CA', async () => {
    const e = await rejection(renderTrustConfigMaps(opts({ caFiles: [join(dir, 'chain.crt')] })));
    expect(e.code).toBe(CertsError.CA_NOT_CA);
    expect(e.where).toBe(`${join(dir, 'chain.crt')}, certificate 2 of 2`);
  });

  it('warns about a CA that expires within 30 days', async () => {
    const soon = join(dir, 'soon.crt');
    await writeFile(soon, (await ca('Soon CA', { days: 10 })).certPem);
    const warnings: string[] = [];
    await readCaFile(soon, new Date(), warnings);
    expect(warnings).toEqual([expect.stringMatching(/CN=Soon CA\) expires in (9|10) day\(s\)/)]);
  });

  it.each([
    ['bad_host:5000', /"bad_host" is not a valid host name label/],
    ['-registry.example.com', /is not a valid host name label/],
    ['registry..example.com', /empty label/],
    [`${'a'.repeat(64)}.example.com`, /is not a valid host name label/],
    ['registry.example.com:0', /"0" is not a port/],
    ['registry.example.com:70000', /"70000" is not a port/],
    ['registry.example.com:http', /"http" is not a port/],
    ['999.1.1.1:5000', /"999.1.1.1" is not an IPv4 address/],
    ['fd00::1:5000', /IPv6 address must be in brackets/],
    ['[fd00::1:5000', /closing "]"/],
    ['[not-v6]:5000', /is not an IPv6 address/],
    ['[fd00::1]:5000', /IPv6 address cannot be a key of registry-config/],
    ['registry.example.com:8443=', /CA file after "=" is empty/],
  ])('--registry %s', async (registry, message) => {
    const e = await rejection(renderTrustConfigMaps(opts({ registries: [registry] })));
    expect(e.code).toBe(CertsError.REGISTRY_INVALID);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(message);
  });

  it('refuses a registry given twice', async () => {
    const e = await rejection(
      renderTrustConfigMaps(opts({ registries: ['r.example.com:5000', `r.example.com:5000=${good}`] })),
    );
    expect(e.message).toMatch(/given twice/);
  });

  const mirrorSet = (kind: string, spec: string) =>
    `apiVersion: config.openshift.io/v1\nkind: ${kind}\nmetadata:\n  name: x\nspec:\n${spec}`;
  it.each([
    ['not YAML', 'a: [b\n', CertsError.MIRROR_SET_INVALID, /not valid YAML/],
    [
      'an ITMS given as IDMS',
      ITMS,
      CertsError.MIRROR_SET_KIND,
      /--idms takes ImageDigestMirrorSet .* of kind ImageTagMirrorSet/,
    ],
    [
      'a ConfigMap',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n',
      CertsError.MIRROR_SET_KIND,
      /of kind ConfigMap/,
    ],
    ['an empty file', '', CertsError.MIRROR_SET_KIND, /holds none/],
    [
      'no entries list',
      mirrorSet('ImageDigestMirrorSet', '  imageTagMirrors: []\n'),
      CertsError.MIRROR_SET_INVALID,
      /spec.imageDigestMirrors is missing/,
    ],
    [
      'a source with a tag',
      mirrorSet(
        'ImageDigestMirrorSet',
        '  imageDigestMirrors:\n  - source: quay.io/org/app:v1\n    mirrors: [m.example.com/org/app]\n',
      ),
      CertsError.MIRROR_SET_INVALID,
      /imageDigestMirrors\[0\].source "quay.io\/org\/app:v1": a scope has no tag/,
    ],
    [
      'a mirror with a transport',
      mirrorSet(
        'ImageDigestMirrorSet',
        '  imageDigestMirrors:\n  - source: quay.io/org\n    mirrors: ["docker://m.example.com/org"]\n',
      ),
      CertsError.MIRROR_SET_INVALID,
      /mirrors\[0\] "docker:\/\/m.example.com\/org": write it without a transport/,
    ],
    [
      'a wildcard source',
      mirrorSet(
        'ImageDigestMirrorSet',
        '  imageDigestMirrors:\n  - source: "*.example.com"\n    mirrors: [m.example.com/x]\n',
      ),
      CertsError.MIRROR_SET_INVALID,
      /wildcard sources/,
    ],
  ])('--idms with %s', async (_what, text, code, message) => {
    const file = join(dir, `bad-${code}-${Math.random().toString(36).slice(2)}.yaml`);
    await writeFile(file, text);
    const e = await rejection(renderTrustConfigMaps(opts({ idmsFiles: [file] })));
    expect(e.code).toBe(code);
    expect(e.exitCode).toBe(2);
    expect(e.message).toMatch(message);
    expect(e.where).toContain(file);
  });

  it.each([
    ['no "="', 'quay.io/org', /no "="/],
    ['a bad kind', 'quay.io/org=m.example.com/org@both', /"@both" is not @digest or @tag/],
    ['a bad mirror host', 'quay.io/org=m_x.example.com/org', /the mirror "m_x.example.com\/org"/],
  ])('--mirror with %s', async (_what, value, message) => {
    const e = await rejection(renderTrustConfigMaps(opts({ idmsFiles: [], mirrors: [value] })));
    expect(e.code).toBe(CertsError.MIRROR_FLAG_INVALID);
    expect(e.message).toMatch(message);
  });

  it('needs a mapping, a CA, a valid namespace, and either the directory or the files', async () => {
    expect((await rejection(renderTrustConfigMaps(opts({ idmsFiles: [] })))).code).toBe(
      CertsError.MIRROR_MAPPING_MISSING,
    );
    expect((await rejection(renderTrustConfigMaps(opts({ caFiles: [] })))).code).toBe(CertsError.CA_MISSING);
    const ns = await rejection(renderTrustConfigMaps(opts({ hostedClusterNamespace: 'Clusters' })));
    expect(ns.message).toMatch(/not a namespace name/);
    const both = await rejection(renderTrustConfigMaps(opts({ clusterResources: dir })));
    expect(both.code).toBe(CommonError.FLAG_CONFLICT);
    const none = await rejection(
      renderTrustConfigMaps({ caFiles: [good], clusterResources: join(dir, 'nope') }),
    );
    expect(none.code).toBe(CommonError.FILE_UNREADABLE);
  });

  it('the CLI exits 2 with what, where and a hint, and writes nothing when the last input is bad', async () => {
    const out = join(dir, 'out');
    const r = await airgap([
      'certs',
      'configmaps',
      '--ca',
      good,
      '--ca',
      join(dir, 'expired.crt'),
      '--idms',
      idms,
      '-o',
      out,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`error [CA_EXPIRED]: the CA CN=Old CA expired on`);
    expect(r.stderr).toContain(`(${join(dir, 'expired.crt')})`);
    expect(r.stderr).toContain('hint: ');
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(existsSync(out)).toBe(false);
  });
});

describe('airgap certs configmaps: the CLI', () => {
  let dir: string;
  let caFile: string;
  let idms: string;

  beforeAll(async () => {
    dir = await tempDir();
    caFile = join(dir, 'ca.crt');
    await writeFile(caFile, (await ca('CLI CA')).certPem);
    idms = join(dir, 'idms.yaml');
    await writeFile(idms, IDMS);
  });

  it('--help explains the objects and shows examples', async () => {
    const r = await airgap(['certs', 'configmaps', '--help']);
    expect(r.exitCode).toBe(0);
    for (const s of [
      'registry-config',
      'host..port',
      'user-ca-bundle',
      'custom-registries',
      'EXAMPLES',
      '--cluster-resources',
    ])
      expect(r.stdout).toContain(s);
  });

  it('writes the six files into --output and says what each is; stdout without --output is one YAML stream', async () => {
    const out = join(dir, 'trust');
    const r = await airgap(['certs', 'configmaps', '--ca', caFile, '--idms', idms, '-o', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readdirSync(out).sort()).toEqual([
      'README.md',
      'custom-registries.yaml',
      'image-cluster-patch.yaml',
      'registries.conf',
      'registry-config.yaml',
      'user-ca-bundle.yaml',
    ]);
    expect(r.stdout).toContain(`wrote ${join(out, 'registry-config.yaml')}`);
    expect(r.stdout).toContain('oc patch image.config.openshift.io/cluster --type merge -p');
    const readme = await readFile(join(out, 'README.md'), 'utf8');
    expect(readme).toContain(
      `oc patch image.config.openshift.io/cluster --type merge -p '{"spec":{"additionalTrustedCA":{"name":"registry-config"}}}'`,
    );

    const s = await airgap(['certs', 'configmaps', '--ca', caFile, '--idms', idms]);
    expect(s.exitCode, s.stderr).toBe(0);
    const docs = loadAll(s.stdout);
    expect(docs).toHaveLength(4);
    expect(`${s.stdout}\n`).toBe(
      ['registry-config.yaml', 'image-cluster-patch.yaml', 'user-ca-bundle.yaml', 'custom-registries.yaml']
        .map((f) => `---\n${readFileSync(join(out, f), 'utf8')}`)
        .join(''),
    );

    const j = await airgap(['certs', 'configmaps', '--ca', caFile, '--idms', idms, '--json']);
    expect(j.exitCode, j.stderr).toBe(0);
    const report = JSON.parse(j.stdout);
    expect(report.registries[0].key).toBe('mirror.example.com..8443');
    expect(report.objects.imagePatch.spec.additionalTrustedCA).toEqual({ name: 'registry-config' });
  });

  it('refuses --cluster-resources with --idms as a usage error', async () => {
    const r = await airgap([
      'certs',
      'configmaps',
      '--ca',
      caFile,
      '--idms',
      idms,
      '--cluster-resources',
      dir,
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/cannot also be provided when using --cluster-resources/);
  });
});

describe('airgap certs configmaps: a node with only custom-registries pulls the original references from the mirror', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let built: BuiltImage[];
  let dir: string;

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(src, [
      { repo: 'team/app', tag: 'v1', layers: [{ size: 30_000 }] },
      { repo: 'team/pinned', layers: [{ size: 20_000 }] },
    ]);
    dir = await tempDir();
  });

  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  it('airgap mirror → certs configmaps from its cluster-resources → skopeo with the extracted registries.conf and ca-bundle.crt, source stopped', async () => {
    // A real mirror run writes the IDMS/ITMS into its workspace.
    const auths = {
      ...JSON.parse(await readFile(src.authFile, 'utf8')).auths,
      ...JSON.parse(await readFile(dst.authFile, 'utf8')).auths,
    };
    const authFile = join(dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths }), { mode: 0o600 });
    const isc = await writeIsc(
      dir,
      built.map((b) => refOf(src, b)),
    );
    const report = await runMirror({
      config: isc,
      destination: `docker://${dst.host}/mirror`,
      workspace: `file://${dir}/ws`,
      authFile,
      caFiles: [src.caFile],
      certDir: '/nonexistent',
    });
    expect(report.summary?.failed).toBe(0);

    // The real CLI renders the ConfigMaps from that directory, trusting the registries of the mirrors.
    const out = join(dir, 'trust');
    const r = await airgap([
      'certs',
      'configmaps',
      '--ca',
      dst.caFile,
      '--cluster-resources',
      join(dir, 'ws', 'cluster-resources'),
      '-o',
      out,
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const registryConfig = load(await readFile(join(out, 'registry-config.yaml'), 'utf8')) as ConfigMap;
    expect(Object.keys(registryConfig.data)).toEqual([dst.host.replace(':', '..')]);
    expect(registryConfig.data[dst.host.replace(':', '..')]).toBe(lf(await readFile(dst.caFile, 'utf8')));

    // What assisted-service would put on a discovery host: registries.conf and ca-bundle.crt.
    const custom = load(await readFile(join(out, 'custom-registries.yaml'), 'utf8')) as ConfigMap;
    const node = join(dir, 'node');
    const certDir = join(node, 'certs');
    await mkdir(certDir, { recursive: true });
    const registriesConf = join(node, 'registries.conf');
    await writeFile(registriesConf, custom.data['registries.conf']!);
    await writeFile(join(certDir, 'ca-bundle.crt'), custom.data['ca-bundle.crt']!);

    await src.stop();
    const pinned = built.find((b) => !b.tag)!;
    const tagged = built.find((b) => b.tag)!;
    const viaMirror = { registriesConf, certDir, authFile: dst.authFile };
    expect(await skopeoDigest(`docker://${src.host}/${pinned.repo}@${pinned.digest}`, viaMirror)).toBe(
      pinned.digest,
    );
    expect(await skopeoDigest(`docker://${src.host}/${tagged.repo}:${tagged.tag}`, viaMirror)).toBe(
      tagged.digest,
    );
    // Without the mapping the source is gone; without the CA bundle the mirror is not trusted.
    await expect(
      skopeoDigest(`docker://${src.host}/${pinned.repo}@${pinned.digest}`, {
        certDir,
        authFile: dst.authFile,
      }),
    ).rejects.toThrow();
    const emptyCerts = join(node, 'no-certs');
    await mkdir(emptyCerts);
    await expect(
      skopeoDigest(`docker://${src.host}/${pinned.repo}@${pinned.digest}`, {
        ...viaMirror,
        certDir: emptyCerts,
      }),
    ).rejects.toThrow(/certificate/);
  });
});
