import type { Digest } from '../src/mirror/digest.js';
/**
 * A lab signer for Sigstore signatures in cosign's tag scheme, written from cosign's format (no
 * cosign binary on the machine): an ECDSA P-256 key pair as `cosign generate-key-pair` makes, and
 * `cosign sign --key`'s output: a simple-signing payload naming the image's digest and repository,
 * signed with SHA-256 (DER signature, base64 in the layer annotation), stored as the one layer of
 * an OCI image tagged `sha256-<hex>.sig` in the signed image's repository.
 *
 * Images are written into an OCI layout (the way lab builders write images) or pushed to a
 * registry through the copy engine from a scratch layout, as the upstream lab seeds its registry.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CopyEngine } from '../src/mirror/copy/engine.js';
import { LayoutEndpoint, RegistryEndpoint } from '../src/mirror/copy/endpoints.js';
import { OciLayout } from '../src/mirror/layout/store.js';
import type { Descriptor } from '../src/mirror/manifest.js';
import { MediaType } from '../src/mirror/media-types.js';
import { RegistryClient } from '../src/mirror/registry/client.js';
import {
  COSIGN_SIGNATURE_ANNOTATION,
  COSIGN_SIGNATURE_MEDIA_TYPE,
  cosignTag,
} from '../src/mirror/signatures/cosign.js';
import { referrersTag } from '../src/mirror/signatures/discover.js';
import { COSIGN_SIGNATURE_TYPE, type SimpleSigningPayload } from '../src/mirror/signatures/simple-signing.js';
import { putImageManifest } from './images.js';

/** A key pair in PEM: PKCS#8 private key, SPKI public key (what cosign.pub holds). */
export interface SigningKey {
  privateKey: string;
  publicKey: string;
}

/** An ECDSA P-256 key pair, the kind `cosign generate-key-pair` makes (unencrypted here). */
export function generateSigningKey(): SigningKey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'prime256v1',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privateKey, publicKey };
}

export interface SignImageOptions {
  /** The signed image's repository, where the `.sig` goes (`openshift-release-dev/ocp-release`). */
  repo: string;
  /** The signed image's manifest digest: names the tag `sha256-<hex>.sig`. */
  digest: string;
  /** The repository the signer names (`critical.identity.docker-reference`), e.g. `quay.io/org/app`. */
  reference: string;
  privateKey: string | KeyObject;
  /**
   * The digest each signature's payload names, one layer each; default `[digest]`. Give another
   * digest to make a `.sig` that is not a signature of the image it is tagged for.
   */
  claims?: string[];
}

export interface LabSignature {
  /** `sha256-<hex>.sig`. */
  tag: string;
  /** Digest of the `.sig` manifest. */
  manifestDigest: Digest;
  /** One per layer: the payload and its base64 signature. */
  layers: { payload: Buffer; signature: string }[];
}

/** The simple-signing payload cosign signs, byte for byte as it writes it. */
function cosignPayload(reference: string, digest: string): Buffer {
  const doc: Omit<SimpleSigningPayload, 'optional'> & { optional: null } = {
    critical: {
      identity: { 'docker-reference': reference },
      image: { 'docker-manifest-digest': digest },
      type: COSIGN_SIGNATURE_TYPE,
    },
    optional: null,
  };
  return Buffer.from(JSON.stringify(doc));
}

/**
 * One simple-signing layer per claim (default the image's own digest), its payload stored in the
 * layout: what a `.sig` image and a signature referrer both carry.
 */
async function signatureLayers(
  layout: OciLayout,
  o: SignImageOptions,
): Promise<{ descriptors: Descriptor[]; layers: LabSignature['layers'] }> {
  const layers: LabSignature['layers'] = [];
  const descriptors: Descriptor[] = [];
  for (const claim of o.claims ?? [o.digest]) {
    const payload = cosignPayload(o.reference, claim);
    const signature = sign('sha256', payload, o.privateKey).toString('base64');
    descriptors.push({
      mediaType: COSIGN_SIGNATURE_MEDIA_TYPE,
      digest: await layout.putBytes(payload),
      size: payload.length,
      annotations: { [COSIGN_SIGNATURE_ANNOTATION]: signature },
    });
    layers.push({ payload, signature });
  }
  return { descriptors, layers };
}

/** Build the `.sig` image into a layout, as an index.json entry `repo:sha256-<hex>.sig`. */
async function writeSignatureImage(layout: OciLayout, o: SignImageOptions): Promise<LabSignature> {
  const tag = cosignTag(o.digest);
  const { descriptors, layers } = await signatureLayers(layout, o);
  // cosign's config: an empty image with the payloads as its (uncompressed) layers.
  const config = Buffer.from(
    JSON.stringify({
      architecture: '',
      created: '0001-01-01T00:00:00Z',
      history: descriptors.map(() => ({ created: '0001-01-01T00:00:00Z' })),
      os: '',
      rootfs: { type: 'layers', diff_ids: descriptors.map((d) => d.digest) },
      config: {},
    }),
  );
  const m = await putImageManifest(layout, config, descriptors, false);
  await layout.setEntry(`${o.repo}:${tag}`, m);
  return { tag, manifestDigest: m.digest, layers };
}

/**
 * Sign an image: write its `.sig` into a layout (pushed later with everything else), or push it
 * straight into a registry through a scratch layout and the copy engine.
 */
export async function signImage(
  push: OciLayout | RegistryClient,
  o: SignImageOptions,
): Promise<LabSignature> {
  if (push instanceof OciLayout) return writeSignatureImage(push, o);
  return viaScratchLayout(
    push,
    o.repo,
    (layout) => writeSignatureImage(layout, o),
    (s) => [s.tag, s.manifestDigest],
  );
}

/** Write something tagged into a scratch layout, then push that tag to a registry with the copy engine. */
async function viaScratchLayout<T>(
  push: RegistryClient,
  repo: string,
  write: (layout: OciLayout) => Promise<T>,
  tagOf: (written: T) => [tag: string, digest: Digest],
): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'airgap-lab-sign-'));
  try {
    const layout = await OciLayout.open(dir);
    const written = await write(layout);
    const [tag, digest] = tagOf(written);
    const summary = await new CopyEngine({ parallel: 4 }).run([
      {
        source: { endpoint: new LayoutEndpoint(layout), repo, ref: tag },
        dest: { endpoint: new RegistryEndpoint(push), repo, ref: tag },
        digest,
      },
    ]);
    const failed = summary.images.find((i) => i.status === 'failed');
    if (failed) throw new Error(`pushing ${failed.destination} failed: ${failed.error?.message}`);
    return written;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** cosign's artifact type for a signature stored as an OCI 1.1 referrer (`--registry-referrers-mode=oci-1-1`). */
export const COSIGN_SIGNATURE_ARTIFACT_TYPE = 'application/vnd.dev.cosign.artifact.sig.v1+json';
/** An SPDX SBOM attached as a referrer (what `oras attach` or a build pipeline adds). */
export const SPDX_ARTIFACT_TYPE = 'application/spdx+json';
/** The OCI empty descriptor's content (`{}`), the config of an artifact manifest. */
const EMPTY_CONFIG = Buffer.from('{}');

export interface ReferrerOptions extends SignImageOptions {
  /** The signed image's manifest media type and size (the `subject` descriptor). */
  subjectMediaType: string;
  subjectSize: number;
  /** Also attach an SBOM artifact. */
  sbom?: boolean;
  /** Give the artifacts this subject instead (a referrers index that is not the image's). */
  subjectDigest?: string;
}

export interface LabReferrers {
  /** The referrers tag: `sha256-<hex>`. */
  tag: string;
  /** Digest of the referrers index. */
  indexDigest: Digest;
  /** Digests of the artifacts it lists (the signature first). */
  artifacts: string[];
}

/**
 * Attach a signature (and optionally an SBOM) as OCI 1.1 referrers the way a client does against a
 * registry without the referrers API: artifact manifests whose `subject` is the image, listed in an
 * image index tagged `sha256-<hex>` (the referrers tag schema of the distribution spec 1.1).
 */
async function writeReferrers(layout: OciLayout, o: ReferrerOptions): Promise<LabReferrers> {
  const emptyDigest = await layout.putBytes(EMPTY_CONFIG);
  const subject = { mediaType: o.subjectMediaType, digest: o.subjectDigest ?? o.digest, size: o.subjectSize };
  const artifact = async (artifactType: string, layers: Descriptor[]) => {
    const bytes = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.OciManifest,
        artifactType,
        config: {
          mediaType: 'application/vnd.oci.empty.v1+json',
          digest: emptyDigest,
          size: 2,
          data: 'e30=',
        },
        layers,
        subject,
        annotations: { 'org.opencontainers.image.created': '2026-11-25T00:00:00Z' },
      }),
    );
    return { artifactType, digest: await layout.putBytes(bytes), size: bytes.length };
  };
  const { descriptors } = await signatureLayers(layout, o);
  const artifacts = [await artifact(COSIGN_SIGNATURE_ARTIFACT_TYPE, descriptors)];
  if (o.sbom) {
    const sbom = Buffer.from(JSON.stringify({ spdxVersion: 'SPDX-2.3', name: o.reference, packages: [] }));
    artifacts.push(
      await artifact(SPDX_ARTIFACT_TYPE, [
        { mediaType: SPDX_ARTIFACT_TYPE, digest: await layout.putBytes(sbom), size: sbom.length },
      ]),
    );
  }
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: MediaType.OciIndex,
      manifests: artifacts.map((a) => ({ mediaType: MediaType.OciManifest, ...a })),
    }),
  );
  const m = { bytes: index, digest: await layout.putBytes(index), mediaType: MediaType.OciIndex };
  const tag = referrersTag(o.digest);
  await layout.setEntry(`${o.repo}:${tag}`, m);
  return { tag, indexDigest: m.digest, artifacts: artifacts.map((a) => a.digest) };
}

/** Attach referrers to an image in a layout, or push them straight into a registry. */
export async function attachReferrers(
  push: OciLayout | RegistryClient,
  o: ReferrerOptions,
): Promise<LabReferrers> {
  if (push instanceof OciLayout) return writeReferrers(push, o);
  return viaScratchLayout(
    push,
    o.repo,
    (layout) => writeReferrers(layout, o),
    (r) => [r.tag, r.indexDigest],
  );
}

/** A `.sig` tagged for `o.digest` whose payload names `other`: what discovery must never copy as o.digest's. */
export function signImageNamingAnotherDigest(
  push: OciLayout | RegistryClient,
  o: Omit<SignImageOptions, 'claims'>,
  other: string,
): Promise<LabSignature> {
  return signImage(push, { ...o, claims: [other] });
}
