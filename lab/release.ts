import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import type { Descriptor, ManifestData } from '../src/mirror/manifest.js';
import { MediaType } from '../src/mirror/media-types.js';
import type { OciLayout } from '../src/mirror/layout/store.js';
import type { CoreosStream, ImageReferences, ReleaseMetadata } from '../src/mirror/openshift/payload.js';
import { parseReference } from '../src/mirror/reference.js';
import { buildImages, putImageManifest, randomTarLayer, type BuiltImage, type LayerSpec } from './images.js';

/**
 * Synthetic OpenShift release payloads for tests and the demo, shaped like real ones
 * (ocp-4.12.0 image-references and release-metadata, the coreos-bootimages ConfigMap): tiny
 * component images referenced by digest, and a release image whose last layer carries
 * `release-manifests/`. Everything is written into an OCI layout; push it with the copy engine.
 */
export interface ReleasePayloadOptions {
  /** `4.12.0`: metadata.name of image-references, release-metadata version, part of the tag. */
  version: string;
  /** Component names (image-references tags), or how many to make up. */
  components: string[] | number;
  /** Where components live, as a release names them: `quay.io/openshift-release-dev/ocp-v4.0-art-dev`. */
  registryPrefix: string;
  /** One architecture (default amd64), or several for a multi-arch payload (an index). */
  arch?: string | string[];
  /** CoreOS stream JSON for the coreos-bootimages ConfigMap; without it the ConfigMap is left out. */
  bootImages?: CoreosStream;
  /** Release repository in the layout; default: `ocp-release` next to the component repository. */
  releaseRepo?: string;
  /** `docker` (as real payloads: schema 2, gzip layers, the default) or `oci` (uncompressed tar layers). */
  format?: 'docker' | 'oci';
  previous?: string[];
  next?: string[];
  /** Files to leave out of release-manifests/ (to test incomplete payloads). */
  omit?: ('image-references' | 'release-metadata')[];
  /** Extra files under release-manifests/ (`0000_00_cluster-version-operator_01_namespace.yaml`: text). */
  extraFiles?: Record<string, string>;
  /** Layers of every component (default: a shared 4 KiB base and 1 KiB of its own). */
  componentLayers?: LayerSpec[];
}

export interface BuiltReleaseArch {
  digest: string;
  imageReferences: ImageReferences;
  components: BuiltImage[];
}

export interface BuiltRelease {
  /** The top-level manifest: the image, or the index of a multi-arch payload. */
  digest: string;
  /** Layout entry: `openshift-release-dev/ocp-release:4.12.0-x86_64` (`-multi` for an index). */
  refName: string;
  repo: string;
  tag: string;
  /** image-references of the first architecture. */
  imageReferences: ImageReferences;
  metadata: ReleaseMetadata;
  /** Per architecture (OCI names: amd64, arm64). */
  arches: Record<string, BuiltReleaseArch>;
}

/** Real component names (from 4.12.0), used when only a count is given. */
const NAMES = [
  'cluster-version-operator',
  'machine-config-operator',
  'cli',
  'hyperkube',
  'etcd',
  // The HyperShift operator image: airgap install cluster pins the control-plane-operator to it.
  'hypershift',
  'haproxy-router',
  'cluster-authentication-operator',
  'oauth-server',
  'console',
  'must-gather',
];
const RELEASE_ARCH: Record<string, string> = { amd64: 'x86_64', arm64: 'aarch64' };

function sha(b: Buffer): string {
  return `sha256:${createHash('sha256').update(b).digest('hex')}`;
}

/** An uncompressed tar of `release-manifests/` holding the given files, in order. */
export function manifestsTar(files: Record<string, string | Buffer>): Buffer {
  const blocks: Buffer[] = [];
  const header = (path: string, size: number, type: 'File' | 'Directory') => {
    const h = Buffer.alloc(512);
    const mode = type === 'Directory' ? 0o755 : 0o644;
    new Header({ path, mode, size, mtime: new Date(0), type, uid: 0, gid: 0 }).encode(h, 0);
    blocks.push(h);
  };
  header('release-manifests/', 0, 'Directory');
  for (const [name, content] of Object.entries(files)) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    header(`release-manifests/${name}`, data.length, 'File');
    blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

/** The coreos-bootimages ConfigMap as the installer writes it (4.10 payload shape). */
export function bootImagesConfigMap(stream: CoreosStream): string {
  const json = JSON.stringify(stream, null, 2)
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
  return [
    'apiVersion: v1',
    'data:',
    '  releaseVersion: 0.0.1-snapshot',
    '  stream: |',
    json,
    'kind: ConfigMap',
    'metadata:',
    '  annotations:',
    '    include.release.openshift.io/ibm-cloud-managed: "true"',
    '    include.release.openshift.io/self-managed-high-availability: "true"',
    '    include.release.openshift.io/single-node-developer: "true"',
    '  creationTimestamp: null',
    '  name: coreos-bootimages',
    '  namespace: openshift-machine-config-operator',
    '',
  ].join('\n');
}

function imageStream(version: string, prefix: string, comps: BuiltImage[], names: string[]): ImageReferences {
  const minor = version.split('.').slice(0, 2).join('.');
  return {
    kind: 'ImageStream',
    apiVersion: 'image.openshift.io/v1',
    metadata: {
      name: version,
      creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      annotations: {
        'release.openshift.io/from-image-stream': `ocp/${minor}-art-latest-2023-01-09-095104`,
        'release.openshift.io/from-release': `registry.ci.openshift.org/ocp/release:${version}-0.nightly-2023-01-09-095104`,
      },
    },
    spec: {
      lookupPolicy: { local: false },
      tags: comps.map((c, i) => ({
        name: names[i]!,
        annotations: {
          'io.openshift.build.commit.id': randomBytes(20).toString('hex'),
          'io.openshift.build.commit.ref': '',
          'io.openshift.build.source-location': `https://github.com/openshift/${names[i]}`,
        },
        from: { kind: 'DockerImage', name: `${prefix}@${c.digest}` },
        generation: null,
        importPolicy: {},
        referencePolicy: { type: '' },
      })),
    },
    status: { dockerImageRepository: '' },
  };
}

async function releaseImage(
  layout: OciLayout,
  o: ReleasePayloadOptions,
  arch: string,
  files: Record<string, string>,
): Promise<ManifestData> {
  const docker = (o.format ?? 'docker') === 'docker';
  const layerType = docker ? MediaType.DockerLayerGzip : MediaType.OciLayer;
  const base = randomTarLayer(4096, 'base.bin');
  const layers: Descriptor[] = [];
  const diffIds: string[] = [];
  for (const tar of [base, manifestsTar(files)]) {
    const blob = docker ? gzipSync(tar) : tar;
    layers.push({ mediaType: layerType, digest: await layout.putBytes(blob), size: blob.length });
    diffIds.push(sha(tar));
  }
  const config = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      created: new Date().toISOString(),
      config: {
        Labels: {
          'io.openshift.release': o.version,
          'io.openshift.release.base-image-digest': layers[0]!.digest,
        },
      },
      rootfs: { type: 'layers', diff_ids: diffIds },
    }),
  );
  return putImageManifest(layout, config, layers, docker);
}

/**
 * Build a release payload into `layout`: component images (`<component repo>@sha256:…`, tiny, one
 * shared base layer) and the release image tagged `<version>-<arch>` (`-multi` for an index), whose
 * last layer holds `release-manifests/image-references`, `release-metadata` and, given a stream,
 * `0000_50_installer_coreos-bootimages.yaml`. Push the layout's entries to a registry whose
 * host is `registryPrefix`'s for the digest references to resolve there.
 */
export async function buildReleasePayload(
  layout: OciLayout,
  o: ReleasePayloadOptions,
): Promise<BuiltRelease> {
  const prefix = parseReference(o.registryPrefix);
  const componentRepo = prefix.repository;
  const parent = componentRepo.includes('/') ? componentRepo.slice(0, componentRepo.lastIndexOf('/')) : '';
  const repo = o.releaseRepo ?? (parent ? `${parent}/ocp-release` : 'ocp-release');
  const names =
    typeof o.components === 'number'
      ? Array.from({ length: o.components }, (_, i) => NAMES[i] ?? `component-${i + 1}`)
      : o.components;
  const archList = (Array.isArray(o.arch) ? o.arch : [o.arch ?? 'amd64']).map(
    (a) => ({ x86_64: 'amd64', aarch64: 'arm64' })[a] ?? a,
  );
  const metadata: ReleaseMetadata = {
    kind: 'cincinnati-metadata-v0',
    version: o.version,
    previous: o.previous ?? [],
    ...(o.next ? { next: o.next } : {}),
    metadata: { url: 'https://access.redhat.com/errata/RHSA-2022:7399' },
  };
  const arches: Record<string, BuiltReleaseArch> = {};
  const children: Descriptor[] = [];
  let top: ManifestData | undefined;
  for (const arch of archList) {
    const components = await buildImages(
      layout,
      names.map(() => ({
        repo: componentRepo,
        format: o.format ?? 'docker',
        layers: o.componentLayers ?? [{ id: 'release-component-base', size: 4096 }, { size: 1024 }],
      })),
    );
    const imageReferences = imageStream(o.version, `${prefix.registry}/${componentRepo}`, components, names);
    const files: Record<string, string> = {};
    if (o.bootImages) files['0000_50_installer_coreos-bootimages.yaml'] = bootImagesConfigMap(o.bootImages);
    Object.assign(files, o.extraFiles ?? {});
    if (!o.omit?.includes('image-references'))
      files['image-references'] = JSON.stringify(imageReferences, null, 2);
    if (!o.omit?.includes('release-metadata')) files['release-metadata'] = JSON.stringify(metadata, null, 2);
    top = await releaseImage(layout, o, arch, files);
    arches[arch] = { digest: top.digest, imageReferences, components };
    children.push({
      mediaType: top.mediaType,
      digest: top.digest,
      size: top.bytes.length,
      platform: { architecture: arch, os: 'linux' },
    });
  }
  if (archList.length > 1) {
    const mediaType = (o.format ?? 'docker') === 'docker' ? MediaType.DockerManifestList : MediaType.OciIndex;
    const bytes = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType, manifests: children }));
    top = { bytes, digest: await layout.putBytes(bytes), mediaType };
  }
  const tag = `${o.version}-${archList.length > 1 ? 'multi' : (RELEASE_ARCH[archList[0]!] ?? archList[0])}`;
  const refName = `${repo}:${tag}`;
  await layout.setEntry(refName, top!);
  return {
    digest: top!.digest,
    refName,
    repo,
    tag,
    imageReferences: arches[archList[0]!]!.imageReferences,
    metadata,
    arches,
  };
}
