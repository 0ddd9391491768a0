/**
 * A synthetic OpenShift "internet side" for tests, the demo and benchmarks: in one registry, release
 * payloads (components, the KubeVirt container disk named by their coreos-bootimages stream), an
 * operator catalog whose bundles and related images are real images, and a ubi9 base for the
 * graph-data image; plus an update service on loopback whose channel lists those releases.
 * Shaped like the real thing (quay.io/openshift-release-dev/…, redhat/redhat-operator-index:v4.x),
 * only small.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { CopyEngine } from '../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../src/mirror/copy/endpoints.js';
import { OciLayout, type LayoutEntry } from '../src/mirror/layout/store.js';
import type { UpdateGraph } from '../src/mirror/openshift/graph.js';
import type { CoreosStream } from '../src/mirror/openshift/payload.js';
import { RegistryClient } from '../src/mirror/registry/client.js';
import { buildSyntheticCatalog, type SyntheticCatalog } from './catalog.js';
import { buildCatalogImage } from './catalog-image.js';
import { signImage } from './cosign.js';
import type { GpgSigner } from './gpg.js';
import { startGraphServer, type GraphServer } from './graph-server.js';
import { startSignatureStore, type SignatureStore } from './signature-store.js';
import { writeRegistryStorage } from './registry-storage.js';
import { buildImages } from './images.js';
import { buildReleasePayload } from './release.js';

const RELEASE_REPO = 'openshift-release-dev/ocp-release';
const COMPONENT_REPO = 'openshift-release-dev/ocp-v4.0-art-dev';
const CATALOG_REPO = 'redhat/redhat-operator-index';
const UBI_REPO = 'ubi9/ubi';

export interface UpstreamOptions {
  /**
   * The registry to fill (`host:port`), with what it takes to push there. With `storageDir` (a lab
   * registry's own storage) the content is written there instead of pushed: same result, minutes
   * faster for thousands of images (lab/registry-storage.ts).
   */
  registry: { host: string; caFile: string; authFile: string; storageDir?: string };
  /** Scratch directory for the layout and the catalog tree. */
  dir: string;
  /** Release versions of one channel, ascending (`4.18.1`, `4.18.2`, …). */
  versions: string[];
  /** Default `stable-<major.minor>` of the first version. */
  channel?: string;
  /** Components per release payload (default 6). */
  components?: number;
  /** Bytes of the layer each component has of its own (default 1 KiB). */
  componentBytes?: number;
  /** Bytes of the base layers every component shares (default one of 4 KiB). */
  baseBytes?: number[];
  /** Catalog shape (defaults: 3 packages × 2 channels × 3 bundles). */
  packages?: number;
  /** Names for the first packages (default `lab-operator-000`, …). */
  packageNames?: string[];
  channelsPerPackage?: number;
  bundlesPerChannel?: number;
  /** Bytes of the layer each operator image has of its own (default 1 KiB). */
  operatorBytes?: number;
  /** Add a conditional edge (a risk) into the newest release. Default true. */
  risk?: boolean;
  /**
   * Sign every image served with this private key, as `cosign sign --key` does (a
   * `sha256-<hex>.sig` tag next to each). Off by default: the registry then holds no `.sig` tags.
   */
  signing?: { key: string | KeyObject };
  /**
   * Sign every release payload with this GPG signer (`skopeo standalone-sign`, as Red Hat signs
   * releases) into the upstream's signature store. Without it the store holds nothing.
   */
  releaseSigner?: GpgSigner;
}

export interface UpstreamRelease {
  version: string;
  digest: string;
  /** `host/openshift-release-dev/ocp-release@sha256:…`, as the update graph names it. */
  payload: string;
  components: string[];
}

export interface Upstream {
  graph: GraphServer;
  channel: string;
  releases: UpstreamRelease[];
  /** `host/redhat/redhat-operator-index:v4.18`. */
  catalogRef: string;
  catalogDigest: string;
  catalog: SyntheticCatalog;
  /** `host/ubi9/ubi:latest`, the graph-data image base. */
  ubiRef: string;
  /** The KubeVirt container disk every payload names. */
  kubevirtRef: string;
  /** Bytes pushed to the registry. */
  bytes: number;
  /** With `signing`: the key that verifies the signatures (PEM) and the images signed (`host/repo@sha256:…`). */
  signing?: { publicKey: string; signed: string[] };
  /** The release signature store (--signature-url): signatures of the payloads with `releaseSigner`. */
  signatureStore: SignatureStore;
  stop(): Promise<void>;
}

function refOf(e: LayoutEntry): { repo: string; ref: string } {
  const at = e.refName.lastIndexOf('@');
  if (at > 0) return { repo: e.refName.slice(0, at), ref: e.refName.slice(at + 1) };
  const colon = e.refName.lastIndexOf(':');
  return { repo: e.refName.slice(0, colon), ref: e.refName.slice(colon + 1) };
}

/** Push every entry of `layout` into the registry with the copy engine; returns the bytes moved. */
async function pushLayout(registry: UpstreamOptions['registry'], layout: OciLayout): Promise<number> {
  const host = registry.host;
  const client = new RegistryClient(host, {
    caFiles: [registry.caFile],
    certDirs: [],
    credentials: { authFile: registry.authFile },
  });
  const src = new LayoutEndpoint(layout);
  const dst = new RegistryEndpoint(client);
  try {
    const summary = await new CopyEngine({ parallel: 8 }).run(
      (await layout.entries()).map((e) => {
        const { repo, ref } = refOf(e);
        return {
          source: { endpoint: src, repo, ref },
          dest: { endpoint: dst, repo, ref },
          digest: e.descriptor.digest,
        };
      }),
    );
    const failed = summary.images.find((i) => i.status === 'failed');
    if (failed) throw new Error(`seeding ${host} failed: ${failed.destination}: ${failed.error?.message}`);
    return summary.bytes;
  } finally {
    await client.close();
  }
}

/** A CoreOS stream shaped like installer-coreos-rhel-9.stream.json, naming `kubevirt` as the container disk. */
function labCoreosStream(kubevirt: string, release = '9.6.20250101-0'): CoreosStream {
  const base = 'https://rhcos.mirror.openshift.com/art/storage/prod/streams/rhel-9.6/builds';
  return {
    stream: 'rhcos-4.18',
    metadata: { 'last-modified': '2025-01-01T00:00:00Z', generator: 'airgap lab' },
    architectures: {
      x86_64: {
        artifacts: {
          metal: {
            release,
            formats: {
              iso: {
                disk: {
                  location: `${base}/${release}/x86_64/rhcos-${release}-live-iso.x86_64.iso`,
                  sha256: '0'.repeat(64),
                },
              },
            },
          },
        },
        images: {
          kubevirt: {
            release,
            image: `${kubevirt.slice(0, kubevirt.indexOf('@'))}:rhel-9.6-coreos-kubevirt`,
            'digest-ref': kubevirt,
          },
        },
      },
    },
  };
}

/** Build the content, push it to the registry, and start the update service. */
export async function buildUpstream(o: UpstreamOptions): Promise<Upstream> {
  const host = o.registry.host;
  const first = o.versions[0]!;
  const minor = first.split('.').slice(0, 2).join('.');
  const channel = o.channel ?? `stable-${minor}`;
  await rm(o.dir, { recursive: true, force: true });
  await mkdir(o.dir, { recursive: true });
  const layout = await OciLayout.open(join(o.dir, 'layout'));

  // The KubeVirt container disk lives with the components, by digest.
  const [kv] = await buildImages(layout, [
    { repo: COMPONENT_REPO, format: 'docker', layers: [{ id: 'rhcos-kubevirt', size: 8192 }] },
  ]);
  const kubevirtRef = `${host}/${COMPONENT_REPO}@${kv!.digest}`;

  const releases: UpstreamRelease[] = [];
  for (const [i, version] of o.versions.entries()) {
    const built = await buildReleasePayload(layout, {
      version,
      components: o.components ?? 6,
      registryPrefix: `${host}/${COMPONENT_REPO}`,
      releaseRepo: RELEASE_REPO,
      bootImages: labCoreosStream(kubevirtRef),
      componentLayers: [
        ...(o.baseBytes ?? [4096]).map((size, b) => ({ id: `release-component-base-${b}`, size })),
        { size: o.componentBytes ?? 1024 },
      ],
      previous: o.versions.slice(0, i),
    });
    releases.push({
      version,
      digest: built.digest,
      payload: `${host}/${RELEASE_REPO}@${built.digest}`,
      components: built.imageReferences.spec.tags.map((t) => t.from.name),
    });
  }

  // The catalog names real images: record what it asks for, build those, then write it for real.
  const shape = {
    packages: o.packages ?? 3,
    channelsPerPackage: o.channelsPerPackage ?? 2,
    bundlesPerChannel: o.bundlesPerChannel ?? 3,
    registry: host,
    ...(o.packageNames ? { packageNames: o.packageNames } : {}),
  };
  const wanted = new Map<string, { repo: string }>();
  const key = (kind: string, pkg: string, name: string) =>
    kind === 'shared' ? 'shared' : `${kind}/${pkg}/${name}`;
  await buildSyntheticCatalog({
    ...shape,
    dir: join(o.dir, 'catalog-probe'),
    imageRef: (kind, pkg, name) => {
      wanted.set(key(kind, pkg, name), {
        repo: kind === 'shared' ? 'openshift4/ose-kube-rbac-proxy' : `lab/${pkg}-${kind}`,
      });
      return 'example.com/placeholder:latest';
    },
  });
  const refs = new Map<string, string>();
  const specs = [...wanted].map(([, w]) => ({
    repo: w.repo,
    format: 'docker' as const,
    layers: [{ id: 'operator-base', size: 16384 }, { size: o.operatorBytes ?? 1024 }],
  }));
  const images = await buildImages(layout, specs);
  [...wanted.keys()].forEach((k, i) => refs.set(k, `${host}/${images[i]!.repo}@${images[i]!.digest}`));
  const catalog = await buildSyntheticCatalog({
    ...shape,
    dir: join(o.dir, 'catalog'),
    imageRef: (kind, pkg, name) => refs.get(key(kind, pkg, name))!,
  });
  const tag = `v${minor}`;
  const cat = await buildCatalogImage(layout, {
    fbcDir: catalog.dir,
    repo: CATALOG_REPO,
    tag,
    format: 'docker',
  });

  await buildImages(layout, [
    { repo: UBI_REPO, tag: 'latest', format: 'docker', layers: [{ id: 'ubi9', size: 32768 }] },
  ]);

  // Sign every image (each index.json entry), then push everything in the layout.
  const signed: string[] = [];
  if (o.signing) {
    for (const e of await layout.entries()) {
      const { repo } = refOf(e);
      const digest = e.descriptor.digest;
      await signImage(layout, { repo, digest, reference: `${host}/${repo}`, privateKey: o.signing.key });
      signed.push(`${host}/${repo}@${digest}`);
    }
  }
  const bytes = o.registry.storageDir
    ? await writeRegistryStorage(
        o.registry.storageDir,
        layout,
        (await layout.entries()).map((e) => ({ ...refOf(e), digest: e.descriptor.digest })),
      )
    : await pushLayout(o.registry, layout);

  const nodes = releases.map((r) => ({
    version: r.version,
    payload: r.payload,
    metadata: {
      'io.openshift.upgrades.graph.release.channels': `candidate-${minor},fast-${minor},${channel}`,
      'release.openshift.io/architecture': 'amd64',
      url: `https://access.redhat.com/errata/RHSA-2025:${1000 + releases.indexOf(r)}`,
    },
  }));
  const edges: [number, number][] = [];
  for (let i = 0; i + 1 < nodes.length; i++) edges.push([i, i + 1]);
  const risky = (o.risk ?? true) && nodes.length >= 2;
  if (risky) edges.pop(); // the newest hop is conditional, not a plain edge
  const graph: UpdateGraph = {
    version: 1,
    nodes,
    edges,
    conditionalEdges: risky
      ? [
          {
            edges: [{ from: nodes[nodes.length - 2]!.version, to: nodes[nodes.length - 1]!.version }],
            risks: [
              {
                url: 'https://issues.redhat.com/browse/OCPBUGS-00000',
                name: 'LabRisk',
                message: 'A made-up known issue for clusters with the lab feature enabled.',
                matchingRules: [{ type: 'Always' }],
              },
            ],
          },
        ]
      : [],
  };
  const server = await startGraphServer({ graphs: { [`${channel}/amd64`]: graph } });
  const store = await startSignatureStore();
  if (o.releaseSigner) {
    for (const r of releases) {
      const manifest = await layout.readBytes(r.digest);
      const tag = `${r.version}-x86_64`;
      store.put(r.digest, await o.releaseSigner.sign(manifest, `${host}/${RELEASE_REPO}:${tag}`));
    }
  }
  return {
    graph: server,
    channel,
    releases,
    catalogRef: `${host}/${CATALOG_REPO}:${tag}`,
    catalogDigest: cat.digest,
    catalog,
    ubiRef: `${host}/${UBI_REPO}:latest`,
    kubevirtRef,
    bytes,
    ...(o.signing
      ? {
          signing: {
            publicKey: createPublicKey(o.signing.key).export({ type: 'spki', format: 'pem' }).toString(),
            signed,
          },
        }
      : {}),
    signatureStore: store,
    stop: async () => {
      await Promise.all([server.stop(), store.stop()]);
    },
  };
}
