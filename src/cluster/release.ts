/**
 * The mirror side of the cluster preflight, over the registry client: the release is resolved to
 * its digest in the mirror (a tag is looked up; a source reference is mapped through the image
 * content sources first), its payload read for the version and the `hypershift` component (the
 * control-plane-operator image HyperShift needs pinned in a disconnected site), and that component
 * checked present in the mirror; for 4.21 and later, the release's Sigstore signature must be in the
 * mirror too (nodes verify it). The TLS check trusts only the site's CA files (and the system
 * roots), so a CA that does not verify the mirror is found here, before anything is applied.
 */
import { componentsOf, readReleasePayload, MirrorError } from '../mirror/index.js';
import { parseReference, type ImageReference } from '../mirror/index.js';
import { RegistryClient } from '../mirror/index.js';
import { AirgapError, CommonError, hasCode, isAirgapError, usageError } from '../util/errors.js';
import { Limiter } from '../util/limit.js';

import type { ImageContentSource } from './site/types.js';
import { ClusterError } from './errors.js';

export interface ReleaseResolution {
  /** `mirror/openshift/release-images@sha256:…`: what the HostedCluster and NodePool name. */
  image: string;
  digest: string;
  /** The release version from the payload metadata (`4.17.3`). */
  version: string;
  /** The payload's `hypershift` component, in the mirror, by digest. */
  controlPlaneOperatorImage: string;
  /** The reference as given, when it was a tag that had to be resolved. */
  resolvedFrom?: string;
  /** What could not be pinned (the mirror was out of reach while rendering), one line each. */
  unpinned?: string[];
}

/** Failures that mean the mirror could not be read at all (not that it holds something wrong). */
const OUT_OF_REACH: readonly string[] = [
  ClusterError.MIRROR_UNREACHABLE,
  ClusterError.MIRROR_CA_MISMATCH,
  ClusterError.PULL_SECRET_REFUSED,
  MirrorError.REGISTRY_UNREACHABLE,
  MirrorError.REGISTRY_NETWORK,
  MirrorError.REGISTRY_STALLED,
  MirrorError.REGISTRY_NOT_ANSWERING,
  MirrorError.REGISTRY_ERROR,
];

/** True when `e` says the mirror could not be read, so a render may go on from the site file alone. */
export function mirrorOutOfReach(e: unknown): boolean {
  return isAirgapError(e) && OUT_OF_REACH.includes(e.code);
}

/**
 * The release as the site file gives it, for a render made without the mirror: the image as
 * written (mapped into the mirror), the version its `<version>-<arch>` tag carries, and no
 * control-plane-operator override (HyperShift then takes the one of the release). What this
 * leaves unpinned is listed, to be said; an install always resolves the release in the mirror.
 */
export function releaseFromSite(
  release: string,
  imageContentSources: ImageContentSource[],
  why: string,
): ReleaseResolution {
  const { image } = mapToMirror(release, imageContentSources);
  const ref = parseReference(image);
  const version =
    /^(\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+?)?)-(x86_64|aarch64|ppc64le|s390x|multi)$/.exec(ref.tag ?? '')?.[1] ??
    '';
  const unpinned = [
    `rendered from the site file alone: ${why}`,
    ...(ref.digest ? [] : [`the release ${image} is named by its tag, not pinned to a digest`]),
    ...(version ? [] : [`the release version could not be read from ${image} (no <version>-<arch> tag)`]),
    'the control plane operator image is not set: HyperShift takes it from the release',
  ];
  return { image, digest: ref.digest ?? '', version, controlPlaneOperatorImage: '', unpinned };
}

/** How the site reaches its mirror: the CA files that must verify it and the pull secret that logs in. */
export interface MirrorAccess {
  caFiles: string[];
  pullSecretFile: string;
  insecureSkipTlsVerify?: boolean;
  /** Registry attempts per request (default 3: preflight should fail fast). */
  attempts?: number;
}

export interface ResolveReleaseOptions extends MirrorAccess {
  /** The release as the site names it: a tag or digest in the mirror, or an upstream reference. */
  release: string;
  imageContentSources: ImageContentSource[];
  /** Payload architecture (OCI name, default amd64). */
  arch?: string;
  /**
   * Check that every payload component is in the mirror (one HEAD each, by digest), not only the
   * hypershift image: an update that cannot pull one stalls half-way.
   */
  checkComponents?: boolean;
}

/** Components checked at once. */
const COMPONENT_CHECKS = 16;

/**
 * A registry client for the site's mirror: only the site's CA files and pull secret, never the
 * bastion's own auth files or certificate directories.
 */
export function mirrorClient(registry: string, a: MirrorAccess): RegistryClient {
  return new RegistryClient(registry, {
    caFiles: a.caFiles,
    certDirs: [],
    ...(a.insecureSkipTlsVerify ? { insecureSkipVerify: true } : {}),
    credentials: { authFile: a.pullSecretFile, env: {}, home: '/nonexistent' },
    retry: { attempts: a.attempts ?? 3, baseDelayMs: 200 },
  });
}

/** `repo/path` of an image without tag or digest. */
function repoOf(r: ImageReference): string {
  return `${r.registry}/${r.repository}`;
}

/**
 * The mirror location of `image` through the content sources: the longest source that is a prefix
 * of the image's repository (on a path boundary) maps it to that source's first mirror. An image
 * already in a mirror, or not covered, is returned unchanged with `mapped: false`.
 */
export function mapToMirror(
  image: string,
  sources: ImageContentSource[],
): { image: string; mapped: boolean } {
  const ref = parseReference(image);
  const repo = repoOf(ref);
  const match = sources
    .filter((s) => s.mirrors.length > 0 && (repo === s.source || repo.startsWith(`${s.source}/`)))
    .sort((a, b) => b.source.length - a.source.length)[0];
  if (!match) return { image, mapped: false };
  const rest = repo.slice(match.source.length);
  const suffix = ref.digest ? `@${ref.digest}` : `:${ref.tag ?? 'latest'}`;
  return { image: `${match.mirrors[0]}${rest}${suffix}`, mapped: true };
}

/** Resolve the release through the mirror; see the file comment. Exit 2 for what the site must fix. */
export async function resolveRelease(opts: ResolveReleaseOptions): Promise<ReleaseResolution> {
  const { image: inMirror } = mapToMirror(opts.release, opts.imageContentSources);
  const ref = parseReference(inMirror);
  const client = mirrorClient(ref.registry, opts);
  const shown = ref.digest ? `${repoOf(ref)}@${ref.digest}` : `${repoOf(ref)}:${ref.tag ?? 'latest'}`;
  try {
    let payload;
    try {
      payload = await readReleasePayload(client, ref.repository, ref.digest ?? ref.tag ?? 'latest', {
        arch: opts.arch ?? 'amd64',
      });
    } catch (e) {
      throw explainMirrorFailure(e, shown, ref.registry, opts.caFiles);
    }
    if (ref.digest && payload.digest !== ref.digest)
      throw new AirgapError(CommonError.RELEASE_DIGEST_MISMATCH, `${shown} resolved to ${payload.digest}`, {
        hint: 'the mirror serves different content for this digest; mirror the release again',
      });
    const hypershift = componentsOf(payload.imageReferences).find((c) => c.name === 'hypershift');
    if (!hypershift)
      throw usageError(
        ClusterError.RELEASE_NO_HYPERSHIFT,
        `release ${payload.metadata.version} (${shown}) has no hypershift component`,
        {
          hint: 'hosted control planes need a release that ships the hypershift image (OpenShift 4.14 or later)',
        },
      );
    const cpo = mapToMirror(hypershift.image, opts.imageContentSources);
    const cpoRef = parseReference(cpo.image);
    if (cpoRef.registry !== ref.registry && !cpo.mapped)
      throw usageError(
        ClusterError.MIRROR_SOURCES_INCOMPLETE,
        `no image content source covers ${repoOf(parseReference(hypershift.image))}, where release ${payload.metadata.version} keeps its components`,
        {
          hint: 'give the cluster-resources directory airgap mirror wrote (its IDMS maps the component repository), or add that source to imageContentSources',
        },
      );
    const cpoClient = cpoRef.registry === ref.registry ? client : undefined;
    if (cpoClient && cpoRef.digest) {
      const present = await cpoClient.headManifest(cpoRef.repository, cpoRef.digest).catch((e: unknown) => {
        throw explainMirrorFailure(e, cpo.image, ref.registry, opts.caFiles);
      });
      if (!present)
        throw usageError(
          ClusterError.RELEASE_INCOMPLETE_IN_MIRROR,
          `the release's hypershift image ${cpo.image} is not in the mirror`,
          {
            hint: 'mirror the whole release again (airgap mirror); the hosted control plane cannot start without it',
          },
        );
    }
    if (opts.checkComponents)
      await requireComponents(client, ref.registry, payload.metadata.version, payload.imageReferences, opts);
    await requireReleaseSignature(client, ref, payload.digest, payload.metadata.version, opts.caFiles);
    return {
      image: `${repoOf(ref)}@${payload.digest}`,
      digest: payload.digest,
      version: payload.metadata.version,
      controlPlaneOperatorImage: cpo.image,
      ...(ref.digest ? {} : { resolvedFrom: shown }),
    };
  } finally {
    await client.close();
  }
}

/**
 * Every component of the payload in the mirror, by digest (those the content sources map to this
 * registry); RELEASE_INCOMPLETE_IN_MIRROR names what is missing.
 */
async function requireComponents(
  client: RegistryClient,
  registry: string,
  version: string,
  refs: Parameters<typeof componentsOf>[0],
  opts: ResolveReleaseOptions,
): Promise<void> {
  const limit = new Limiter(COMPONENT_CHECKS);
  const components = componentsOf(refs)
    .map((c) => ({ name: c.name, ref: parseReference(mapToMirror(c.image, opts.imageContentSources).image) }))
    .filter((c) => c.ref.registry === registry && c.ref.digest);
  const missing = (
    await Promise.all(
      components.map((c) =>
        limit.run(async () => {
          const there = await client.headManifest(c.ref.repository, c.ref.digest!).catch((e: unknown) => {
            throw explainMirrorFailure(e, `${repoOf(c.ref)}@${c.ref.digest}`, registry, opts.caFiles);
          });
          return there ? undefined : `${c.name} (${repoOf(c.ref)}@${c.ref.digest})`;
        }),
      ),
    )
  ).filter((m): m is string => m !== undefined);
  if (missing.length)
    throw usageError(
      ClusterError.RELEASE_INCOMPLETE_IN_MIRROR,
      `release ${version} is incomplete in the mirror: ${missing.length} of ${components.length} component images are missing: ${missing.slice(0, 5).join(', ')}${missing.length > 5 ? `, and ${missing.length - 5} more` : ''}`,
      {
        hint: 'run the mirror again (airgap mirror with the same ImageSetConfiguration resumes and fills the gaps; airgap mirror check lists what is missing): a node that cannot pull a component stops the update half-way',
      },
    );
}

/** The first release whose nodes verify the release image's Sigstore signature. */
const SIGNED_RELEASES_FROM = [4, 21] as const;

/** Whether release `version` (`4.21.0`, `4.21.0-ec.2`) verifies its release signature on every node. */
export function verifiesReleaseSignature(version: string): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return (
    major > SIGNED_RELEASES_FROM[0] || (major === SIGNED_RELEASES_FROM[0] && minor >= SIGNED_RELEASES_FROM[1])
  );
}

/** The cosign tag of an image's Sigstore signature: `sha256-<hex>.sig` for `sha256:<hex>`. */
export function signatureTag(digest: string): string {
  return `${digest.replace(':', '-')}.sig`;
}

/**
 * From 4.21 every node verifies the release image against the `openshift` ClusterImagePolicy, and
 * reads the signature next to the image in the mirror (the `sha256-<hex>.sig` tag): without it the
 * nodes refuse the release and the cluster never comes up. Earlier releases are not checked.
 */
async function requireReleaseSignature(
  client: RegistryClient,
  ref: ImageReference,
  digest: string,
  version: string,
  caFiles: string[],
): Promise<void> {
  if (!verifiesReleaseSignature(version)) return;
  const tag = signatureTag(digest);
  const where = `${repoOf(ref)}:${tag}`;
  const found = await client.headManifest(ref.repository, tag).catch((e: unknown) => {
    throw explainMirrorFailure(e, where, ref.registry, caFiles);
  });
  if (found) return;
  throw usageError(
    ClusterError.RELEASE_SIGNATURE_NOT_IN_MIRROR,
    `release ${version} has no Sigstore signature in the mirror: no tag ${tag} in ${repoOf(ref)}. ` +
      `From OpenShift ${SIGNED_RELEASES_FROM.join('.')} every node verifies the release image's signature ` +
      '(the openshift ClusterImagePolicy) and refuses a release without one',
    {
      where,
      hint: 'mirror the release again with this version of airgap or later (airgap mirror copies the sha256-<hex>.sig signatures with the images), without --remove-signatures',
      details: { repository: repoOf(ref), tag, version },
    },
  );
}

/** A registry failure during preflight, said in terms of the site file. */
export function explainMirrorFailure(
  e: unknown,
  image: string,
  registry: string,
  caFiles: string[],
): AirgapError {
  if (!(e instanceof AirgapError))
    return new AirgapError(ClusterError.MIRROR_UNREACHABLE, `${image}: ${String(e)}`);
  if (e.code === MirrorError.REGISTRY_NOT_FOUND)
    return usageError(ClusterError.RELEASE_NOT_IN_MIRROR, `the release ${image} is not in the mirror`, {
      hint: 'check release.image in the site file against what airgap mirror pushed (the tag is <version>-<arch> under openshift/release-images)',
      cause: e,
    });
  if (e.code === MirrorError.REGISTRY_TLS || /certificate|self[- ]signed|UNABLE_TO_VERIFY/i.test(e.message))
    return usageError(
      ClusterError.MIRROR_CA_MISMATCH,
      `the CA file(s) do not verify the mirror ${registry}: ${e.message}`,
      {
        where: caFiles.join(', ') || 'mirror.caFiles',
        hint: 'give the CA that signed the mirror registry certificate (airgap certs show <cert> tells the issuer)',
        cause: e,
      },
    );
  if (
    hasCode(
      e,
      MirrorError.REGISTRY_UNAUTHORIZED,
      MirrorError.REGISTRY_DENIED,
      MirrorError.REGISTRY_AUTH_FAILED,
    )
  )
    return usageError(
      ClusterError.PULL_SECRET_REFUSED,
      `the mirror ${registry} refused the pull secret's credentials for ${image}`,
      {
        hint: 'check the mirror entry of the pull secret (airgap certs pull-secret writes one)',
        cause: e,
      },
    );
  return e;
}
