/**
 * The preflight of `airgap install hub` and `airgap install cluster`, before anything is applied:
 * the site file loaded and checked (file:line field errors), the files it names read, and — for a
 * cluster — the release resolved to its digest through the mirror with the site's CA and pull
 * secret, the control-plane-operator image found in the payload and in the mirror (for an install,
 * every component image), the mirrored default catalogs pinned by digest, and an existing
 * cluster's etcd encryption key kept (a new key would make its etcd data unreadable).
 */
import { applySiteOverrides, loadSite } from './site/index.js';
import { readSiteInputs, resolveSite } from './site/inputs.js';
import type { CatalogOverrides, ResolvedSite, Site, SiteInputs, SiteOverrides } from './site/types.js';
import { parseReference } from '../mirror/index.js';
import type { RegistryClient } from '../mirror/index.js';
import { API } from './describe.js';
import type { Kube } from './kube.js';
import { AirgapError } from '../util/errors.js';
import {
  explainMirrorFailure,
  mirrorClient,
  mirrorOutOfReach,
  releaseFromSite,
  resolveRelease,
  type ReleaseResolution,
} from './release.js';

export interface PrepareOptions {
  siteFile: string;
  overrides?: SiteOverrides;
  /** The hub, to keep an existing cluster's etcd key; absent for a pure render. */
  kube?: Kube;
  insecureSkipTlsVerify?: boolean;
}

export interface PreparedSite {
  site: Site;
  inputs: SiteInputs;
}

export interface PreparedCluster extends PreparedSite {
  resolved: ResolvedSite;
  release: ReleaseResolution;
  /** True when the etcd key came from the hub (the cluster exists). */
  keptEtcdKey: boolean;
}

/** Load the site and read its files (no network). */
export async function prepareSite(opts: PrepareOptions): Promise<PreparedSite> {
  const loaded = await loadSite(opts.siteFile);
  const site = opts.overrides ? applySiteOverrides(loaded, opts.overrides) : loaded;
  const inputs = await readSiteInputs(site);
  return { site, inputs };
}

/**
 * Everything `install hub` renders from. The hub objects do not depend on the release, so the
 * release fields stay empty (renderHub does not read them).
 */
export async function prepareHub(opts: PrepareOptions): Promise<PreparedSite & { resolved: ResolvedSite }> {
  const prepared = await prepareSite(opts);
  return {
    ...prepared,
    resolved: resolveSite(prepared.site, prepared.inputs, {
      releaseImage: '',
      releaseVersion: '',
      controlPlaneOperatorImage: '',
    }),
  };
}

/** Everything `install cluster` renders from; see the file comment. */
export async function prepareCluster(opts: PrepareOptions): Promise<PreparedCluster> {
  const { site, inputs } = await prepareSite(opts);
  const tls = {
    caFiles: site.mirror.caFiles,
    ...(opts.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
  };
  let release: ReleaseResolution;
  try {
    release = await resolveRelease({
      release: site.cluster.release.image,
      imageContentSources: inputs.imageContentSources,
      pullSecretFile: site.cluster.pullSecretFile,
      arch: site.cluster.nodePool.arch,
      // An install finds every component in the mirror first: a node that cannot pull one stalls.
      ...(opts.kube ? { checkComponents: true } : {}),
      ...tls,
    });
  } catch (e) {
    // A render (no hub) goes on from the site file when the mirror cannot be read, and says what
    // it could not pin; an install never does.
    if (opts.kube || !mirrorOutOfReach(e)) throw e;
    release = releaseFromSite(
      site.cluster.release.image,
      inputs.imageContentSources,
      `the mirror was not read (${(e as Error).message})`,
    );
  }
  const pins = await pinCatalogImages(inputs.catalogOverrides, site.cluster.pullSecretFile, tls, !opts.kube);
  const catalogOverrides = pins.overrides;
  if (pins.unpinned.length)
    release = { ...release, unpinned: [...(release.unpinned ?? []), ...pins.unpinned] };
  let etcdEncryptionKey: string | undefined;
  if (opts.kube) {
    const secret = await opts.kube.get({
      ...API.secret,
      namespace: site.cluster.namespace,
      name: `${site.cluster.name}-etcd-encryption-key`,
    });
    etcdEncryptionKey = secret?.data?.key ?? undefined;
  }
  const resolved = resolveSite(site, inputs, {
    releaseImage: release.image,
    releaseVersion: release.version,
    controlPlaneOperatorImage: release.controlPlaneOperatorImage,
    catalogOverrides,
    ...(etcdEncryptionKey ? { etcdEncryptionKey } : {}),
  });
  return { site, inputs, resolved, release, keptEtcdKey: !!etcdEncryptionKey };
}

/**
 * HyperShift takes the default catalog images only by digest: a tag from the mirrored
 * CatalogSources is resolved in the mirror. A catalog the mirror does not hold (404) is dropped
 * from the image overrides (the registry overrides still apply). Any other failure (credentials
 * refused, a CA that does not verify the mirror, a fault) is an error naming the catalog image; a
 * render made without a hub (`render`) goes on when the mirror is out of reach, and lists each
 * catalog it left unpinned.
 */
export async function pinCatalogImages(
  overrides: CatalogOverrides,
  pullSecretFile: string,
  tls: { caFiles: string[]; insecureSkipTlsVerify?: boolean },
  render = false,
): Promise<{ overrides: CatalogOverrides; unpinned: string[] }> {
  if (!overrides.images) return { overrides, unpinned: [] };
  const images: NonNullable<CatalogOverrides['images']> = {};
  const unpinned: string[] = [];
  const clients = new Map<string, RegistryClient>();
  try {
    for (const [name, image] of Object.entries(overrides.images)) {
      if (!image) continue;
      const ref = parseReference(image);
      if (ref.digest) {
        images[name as keyof typeof images] = image;
        continue;
      }
      let client = clients.get(ref.registry);
      if (!client) {
        client = mirrorClient(ref.registry, { ...tls, pullSecretFile });
        clients.set(ref.registry, client);
      }
      let found: Awaited<ReturnType<RegistryClient['headManifest']>>;
      try {
        found = await client.headManifest(ref.repository, ref.tag ?? 'latest'); // undefined: not there
      } catch (e) {
        const failure = catalogPinFailure(e, image, ref.registry, tls.caFiles);
        if (!render || !mirrorOutOfReach(failure)) throw failure;
        unpinned.push(failure.message);
        continue;
      }
      if (found) images[name as keyof typeof images] = `${ref.registry}/${ref.repository}@${found.digest}`;
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
  const { images: _given, ...rest } = overrides;
  return { overrides: Object.keys(images).length ? { ...rest, images } : rest, unpinned };
}

/** Why a mirrored catalog image could not be pinned, naming it, with the registry's failure as the cause. */
function catalogPinFailure(e: unknown, image: string, registry: string, caFiles: string[]): AirgapError {
  const x = explainMirrorFailure(e, image, registry, caFiles);
  return new AirgapError(
    x.code,
    `the mirrored catalog ${image} cannot be pinned to a digest (HyperShift takes the default catalogs only by digest): ${x.message}`,
    {
      exitCode: x.exitCode,
      ...(x.where ? { where: x.where } : {}),
      ...(x.hint ? { hint: x.hint } : {}),
      ...(x.details ? { details: x.details } : {}),
      cause: e,
    },
  );
}
