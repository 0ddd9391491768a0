import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildImages } from '../../../lab/images.js';
import { bootImagesConfigMap, buildReleasePayload, manifestsTar } from '../../../lab/release.js';
import { CopyEngine } from '../../../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { sha256Digest } from '../../../src/mirror/digest.js';
import { MediaType } from '../../../src/mirror/media-types.js';
import { OciLayout } from '../../../src/mirror/layout/store.js';
import {
  componentsOf,
  parseBootImages,
  readReleasePayload,
  type CoreosStream,
  type ImageReferences,
  type ReleaseMetadata,
} from '../../../src/mirror/openshift/payload.js';
import { RegistryClient } from '../../../src/mirror/registry/client.js';
import { clientFor, tempDir } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const samples = realdata('samples');
const sample = (p: string) => readFile(join(samples, p), 'utf8');

/** Push every entry of a layout (`repo:tag` or `repo@digest`) into a registry under the same names. */
async function pushLayout(layout: OciLayout, reg: TestRegistry): Promise<void> {
  const src = new LayoutEndpoint(layout);
  const client = clientFor(reg);
  const dest = new RegistryEndpoint(client);
  const pairs = (await layout.entries()).map((e) => {
    const at = e.refName.indexOf('@');
    const cut = at >= 0 ? at : e.refName.lastIndexOf(':');
    const repo = e.refName.slice(0, cut);
    const ref = e.refName.slice(cut + 1);
    return {
      source: { endpoint: src, repo, ref },
      dest: { endpoint: dest, repo, ref },
      digest: e.descriptor.digest,
    };
  });
  const summary = await new CopyEngine({ parallel: 8 }).run(pairs);
  await client.close();
  expect(summary.failed, JSON.stringify(summary.images.find((i) => i.error)?.error)).toBe(0);
}

/** A minimal image-references with one digest-pinned component. */
function refsNamed(component: string): ImageReferences {
  return {
    kind: 'ImageStream',
    apiVersion: 'image.openshift.io/v1',
    metadata: { name: '4.1.0' },
    spec: {
      tags: [
        { name: component, from: { kind: 'DockerImage', name: `quay.io/x/y@sha256:${'a'.repeat(64)}` } },
      ],
    },
  };
}

/** A release image built by hand: one gzip layer per file set, bottom first. */
async function layeredImage(
  layout: OciLayout,
  refName: string,
  layers: Record<string, string | Buffer>[],
): Promise<void> {
  const descs = [];
  for (const files of layers) {
    const blob = gzipSync(manifestsTar(files));
    descs.push({
      mediaType: MediaType.DockerLayerGzip,
      digest: await layout.putBytes(blob),
      size: blob.length,
    });
  }
  const config = Buffer.from(
    JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }),
  );
  const manifest = {
    schemaVersion: 2,
    mediaType: MediaType.DockerManifest,
    config: { mediaType: MediaType.DockerConfig, digest: await layout.putBytes(config), size: config.length },
    layers: descs,
  };
  const bytes = Buffer.from(JSON.stringify(manifest));
  await layout.setEntry(refName, { bytes, digest: sha256Digest(bytes), mediaType: MediaType.DockerManifest });
}

/** Re-tag `ref` as `tag` with a manifest whose layer `index` states a size off by `delta` (the blobs are the same). */
async function putSkewed(
  c: RegistryClient,
  repo: string,
  ref: string,
  tag: string,
  index: number,
  delta: number,
) {
  const m = await c.getManifest(repo, ref);
  const doc = JSON.parse(m.bytes.toString()) as { layers: { size: number }[] };
  doc.layers[index]!.size += delta;
  const bytes = Buffer.from(JSON.stringify(doc));
  await c.putManifest(repo, tag, { bytes, digest: sha256Digest(bytes), mediaType: m.mediaType });
}

async function newLayout(): Promise<OciLayout> {
  return OciLayout.open(join(await tempDir('airgap-release-'), 'layout'));
}

withRealdata.describe('real release payload samples', () => {
  it('image-references of 4.12.0 yields 183 digest-pinned components', async () => {
    const refs = JSON.parse(
      await sample('release-payload/ocp-4.12.0-image-references.json'),
    ) as ImageReferences;
    const comps = componentsOf(refs);
    expect(comps).toHaveLength(183);
    expect(new Set(comps.map((c) => c.name)).size).toBe(183);
    for (const c of comps)
      expect(c.image).toMatch(/^quay\.io\/openshift-release-dev\/ocp-v4\.0-art-dev@sha256:[a-f0-9]{64}$/);
    expect(comps.find((c) => c.name === 'cluster-version-operator')).toBeDefined();
  });

  it('refuses a component referenced by tag', async () => {
    const refs = JSON.parse(
      await sample('release-payload/ocp-4.12.0-image-references.json'),
    ) as ImageReferences;
    refs.spec.tags[7]!.from.name = 'quay.io/openshift-release-dev/ocp-v4.0-art-dev:latest';
    expect(() => componentsOf(refs)).toThrow(
      expect.objectContaining({
        code: MirrorError.PAYLOAD_INVALID,
        message: expect.stringContaining(refs.spec.tags[7]!.name),
      }),
    );
  });

  it('release-metadata of 4.12.0 parses', async () => {
    const md = JSON.parse(
      await sample('release-payload/ocp-4.12.0-release-metadata.json'),
    ) as ReleaseMetadata;
    expect(md.kind).toBe('cincinnati-metadata-v0');
    expect(md.version).toBe('4.12.0');
    expect(md.previous).toContain('4.11.23');
    expect(md.metadata?.url).toMatch(/^https:\/\/access\.redhat\.com\/errata\//);
  });

  it('the 4.10 coreos-bootimages ConfigMap parses to its stream', async () => {
    const boot = parseBootImages(
      Buffer.from(await sample('coreos/4.10-installer-coreos-bootimages.configmap.yaml')),
    );
    expect(boot.streamJson.stream).toBe('rhcos-4.10');
    expect(Object.keys(boot.streamJson.architectures)).toContain('x86_64');
    expect((boot.configMap.metadata as { name: string }).name).toBe('coreos-bootimages');
  });
});

describe('release payloads through a real registry', () => {
  let reg: TestRegistry;
  let client: RegistryClient;
  let rhel9: CoreosStream;

  beforeAll(async () => {
    reg = await startRegistry();
    client = clientFor(reg);
    // The real stream, for the tests that carry it (they need the realdata).
    if (withRealdata.present())
      rhel9 = JSON.parse(await sample('coreos/installer-coreos-rhel-9.stream.json')) as CoreosStream;
  });

  afterAll(async () => {
    await client?.close();
    await reg?.stop();
  });

  withRealdata.it(
    'reads back what the builder wrote: image-references, metadata and the CoreOS stream',
    async () => {
      const layout = await newLayout();
      const built = await buildReleasePayload(layout, {
        version: '4.16.3',
        components: ['cluster-version-operator', 'machine-config-operator', 'cli', 'hyperkube'],
        registryPrefix: `${reg.host}/openshift-release-dev/ocp-v4.0-art-dev`,
        bootImages: rhel9,
        previous: ['4.15.20', '4.16.2'],
        extraFiles: { '0000_00_cluster-version-operator_00_namespace.yaml': 'kind: Namespace\n' },
      });
      expect(built.refName).toBe('openshift-release-dev/ocp-release:4.16.3-x86_64');
      await pushLayout(layout, reg);

      const p = await readReleasePayload(client, built.repo, built.tag);
      expect(p.digest).toBe(built.digest);
      expect(p.imageDigest).toBe(built.digest);
      expect(p.imageReferences).toEqual(built.imageReferences);
      expect(p.metadata).toEqual(built.metadata);
      expect(p.metadata.previous).toEqual(['4.15.20', '4.16.2']);
      expect(p.bootImages?.streamJson).toEqual(rhel9);
      expect(p.manifestFiles).toContain('release-manifests/image-references');

      // Components reference real images in the registry, by digest.
      const comps = componentsOf(p.imageReferences);
      expect(comps.map((c) => c.name)).toEqual([
        'cluster-version-operator',
        'machine-config-operator',
        'cli',
        'hyperkube',
      ]);
      for (const c of comps) {
        const digest = c.image.slice(c.image.indexOf('@') + 1);
        expect(c.image.startsWith(`${reg.host}/openshift-release-dev/ocp-v4.0-art-dev@`)).toBe(true);
        expect((await client.getManifest('openshift-release-dev/ocp-v4.0-art-dev', digest)).digest).toBe(
          digest,
        );
      }
    },
  );

  it('reads uncompressed OCI layers and a payload without boot images', async () => {
    const layout = await newLayout();
    const built = await buildReleasePayload(layout, {
      version: '4.12.0',
      components: 3,
      registryPrefix: `${reg.host}/ocp/art-dev`,
      format: 'oci',
    });
    await pushLayout(layout, reg);
    const p = await readReleasePayload(client, built.repo, built.digest);
    expect(p.imageReferences).toEqual(built.imageReferences);
    expect(p.imageReferences.spec.tags.map((t) => t.name)).toEqual([
      'cluster-version-operator',
      'machine-config-operator',
      'cli',
    ]);
    expect(p.bootImages).toBeUndefined();
    // Without boot images every layer is read to its end, and so verified.
    expect(p.manifestFiles).toEqual([
      'release-manifests/image-references',
      'release-manifests/release-metadata',
    ]);
  });

  withRealdata.it('follows a multi-arch index to the requested architecture', async () => {
    const layout = await newLayout();
    const built = await buildReleasePayload(layout, {
      version: '4.17.0',
      components: 2,
      registryPrefix: `${reg.host}/multi/art-dev`,
      arch: ['amd64', 'arm64'],
      bootImages: rhel9,
    });
    expect(built.tag).toBe('4.17.0-multi');
    await pushLayout(layout, reg);
    const arm = await readReleasePayload(client, built.repo, built.tag, { arch: 'arm64' });
    expect(arm.digest).toBe(built.digest);
    expect(arm.imageDigest).toBe(built.arches.arm64!.digest);
    expect(arm.imageReferences).toEqual(built.arches.arm64!.imageReferences);
    expect(arm.imageReferences).not.toEqual(built.arches.amd64!.imageReferences);
    const amd = await readReleasePayload(client, built.repo, built.tag);
    expect(amd.imageDigest).toBe(built.arches.amd64!.digest);
    const x86 = await readReleasePayload(client, built.repo, built.tag, { arch: 'x86_64' });
    expect(x86.imageDigest).toBe(built.arches.amd64!.digest);
    await expect(readReleasePayload(client, built.repo, built.tag, { arch: 's390x' })).rejects.toMatchObject({
      code: MirrorError.PAYLOAD_ARCH_MISSING,
      message: expect.stringContaining('linux/amd64, linux/arm64'),
    });
  });

  it('an image without release-manifests is not a release image', async () => {
    const layout = await newLayout();
    await buildImages(layout, [
      { repo: 'tools/plain', tag: 'v1', format: 'docker', layers: [{ size: 8192 }] },
    ]);
    await pushLayout(layout, reg);
    const err = await readReleasePayload(client, 'tools/plain', 'v1').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: MirrorError.PAYLOAD_INVALID });
    expect((err as Error).message).toContain('release-manifests/image-references');
    expect((err as Error).message).toContain(`${reg.host}/tools/plain:v1`);
    expect((err as Error).message).toContain('not an OpenShift release image');
  });

  it('a payload missing release-metadata names that file', async () => {
    const layout = await newLayout();
    const built = await buildReleasePayload(layout, {
      version: '4.14.1',
      components: 1,
      registryPrefix: `${reg.host}/broken/art-dev`,
      omit: ['release-metadata'],
    });
    await pushLayout(layout, reg);
    await expect(readReleasePayload(client, built.repo, built.tag)).rejects.toMatchObject({
      code: MirrorError.PAYLOAD_INVALID,
      message: expect.stringMatching(/has release-manifests\/ but no release-manifests\/release-metadata/),
    });
  });

  it('a layer read to its end is verified against its descriptor', async () => {
    const layout = await newLayout();
    const built = await buildReleasePayload(layout, {
      version: '4.13.0',
      components: 1,
      registryPrefix: `${reg.host}/verify/art-dev`,
      format: 'oci',
    });
    await pushLayout(layout, reg);
    // Claim one byte fewer than the manifests layer has: the size check must catch it while streaming.
    await putSkewed(client, built.repo, built.tag, 'bad', 1, -1);
    await expect(readReleasePayload(client, built.repo, 'bad')).rejects.toMatchObject({
      code: MirrorError.MIRROR_SIZE_MISMATCH,
    });
  });
  withRealdata.it(
    'reads layers top down: the last layer wins and its whiteouts hide lower files',
    async () => {
      const layout = await newLayout();
      const md = (version: string) =>
        JSON.stringify({ kind: 'cincinnati-metadata-v0', version, previous: [] });
      const cm = bootImagesConfigMap(rhel9);
      await layeredImage(layout, 'layers/release:overlay', [
        {
          '0000_50_installer_coreos-bootimages.yaml': cm,
          'image-references': JSON.stringify(refsNamed('lower')),
          'release-metadata': md('4.1.0'),
        },
        {
          '.wh.0000_50_installer_coreos-bootimages.yaml': '',
          'image-references': JSON.stringify(refsNamed('upper')),
          'release-metadata': md('4.1.1'),
        },
      ]);
      await pushLayout(layout, reg);
      const p = await readReleasePayload(client, 'layers/release', 'overlay');
      expect(componentsOf(p.imageReferences).map((c) => c.name)).toEqual(['upper']);
      expect(p.metadata.version).toBe('4.1.1');
      expect(p.bootImages).toBeUndefined();
    },
  );

  withRealdata.it(
    'stops reading a layer once the three files are found (the rest is never fetched nor verified)',
    async () => {
      const layout = await newLayout();
      const files = {
        '0000_50_installer_coreos-bootimages.yaml': bootImagesConfigMap(rhel9),
        'image-references': JSON.stringify(refsNamed('only')),
        'release-metadata': JSON.stringify({
          kind: 'cincinnati-metadata-v0',
          version: '4.1.0',
          previous: [],
        }),
        'zz-padding.bin': randomBytes(4 * 1024 * 1024),
      };
      await layeredImage(layout, 'early/release:stop', [files]);
      const { '0000_50_installer_coreos-bootimages.yaml': _cm, ...noBoot } = files;
      await layeredImage(layout, 'early/release:full', [noBoot]);
      await pushLayout(layout, reg);
      // The descriptors claim one byte too many: reading a layer to its end fails the size check.
      await putSkewed(client, 'early/release', 'stop', 'stop-skewed', 0, 1);
      await putSkewed(client, 'early/release', 'full', 'full-skewed', 0, 1);
      const p = await readReleasePayload(client, 'early/release', 'stop-skewed');
      expect(p.bootImages?.streamJson).toEqual(rhel9);
      // It succeeded, so the 4 MiB after the three files was never read to the end (where the size check sits).
      // Without boot images the same layer is read to its end and the lie is caught.
      await expect(readReleasePayload(client, 'early/release', 'full-skewed')).rejects.toMatchObject({
        code: MirrorError.MIRROR_SIZE_MISMATCH,
      });
    },
  );
});
