/**
 * Sigstore verification as a node does it, for tests, written apart from airgap's own code so that
 * it checks what airgap wrote rather than agreeing with it:
 *
 * - the image is named by its original, by-digest reference (`quay.io/…/ocp-release@sha256:…`);
 * - the mirror that serves it is found through the registries.conf airgap generated (the first
 *   mirror of the most specific `[[registry]]` prefix), as containers/image finds it;
 * - with `use-sigstore-attachments`, containers/image reads the signature from the repository it
 *   pulled from: the `sha256-<hex>.sig` tag next to the image in the mirror, read here with skopeo;
 * - containers-policy.json(5) `sigstoreSigned` with a public key and the default
 *   `matchRepoDigestOrExact`: some layer's signature verifies with the key (SHA-256), its payload
 *   names the image's manifest digest, and its identity is the original repository.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { skopeoCopy, type SkopeoOptions } from './skopeo.js';

interface RegistriesConf {
  registry?: { prefix: string; location: string; mirror?: { location: string }[] }[];
}

/** The mirror repository that serves `repository` (`host/path`) under a registries.conf, or undefined. */
function mirrorOf(registriesConfToml: string, repository: string): string | undefined {
  const conf = parseToml(registriesConfToml) as unknown as RegistriesConf;
  const hits = (conf.registry ?? [])
    .filter((r) => repository === r.prefix || repository.startsWith(`${r.prefix}/`))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  const best = hits[0];
  const mirror = best?.mirror?.[0]?.location;
  return mirror === undefined ? undefined : mirror + repository.slice(best!.prefix.length);
}

/** Why the image does not verify as a node would check it, or undefined when it does. */
export async function nodeSigstoreProblem(
  o: {
    /** The registries.conf text (TOML) the cluster resources hold. */
    registriesConf: string;
    /** `host/repo@sha256:…` as the cluster names it. */
    original: string;
    publicKeyPem: string;
  } & Omit<SkopeoOptions, 'registriesConf'>,
): Promise<string | undefined> {
  const [repository, digest] = o.original.split('@') as [string, string];
  const mirror = mirrorOf(o.registriesConf, repository);
  if (!mirror) return `no mirror of ${repository} in registries.conf`;
  const dir = await mkdtemp(join(tmpdir(), 'sigstore-node-'));
  try {
    try {
      // The mirror is read directly: the registries.conf text is this function's, not skopeo's file.
      const { authFile, certDir, tlsVerify } = o;
      await skopeoCopy(`docker://${mirror}:sha256-${digest.slice(7)}.sig`, `oci:${dir}:sig`, {
        authFile,
        certDir,
        tlsVerify,
      });
    } catch (e) {
      return `no signature at ${mirror}:sha256-${digest.slice(7)}.sig (${(e as Error).message.split('\n')[0]})`;
    }
    const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    const blob = (d: string) => readFile(join(dir, 'blobs', 'sha256', d.slice(7)));
    const manifest = JSON.parse((await blob(index.manifests[0]!.digest)).toString('utf8')) as {
      layers: { digest: string; annotations?: Record<string, string> }[];
    };
    const key = createPublicKey(o.publicKeyPem);
    const problems: string[] = [];
    for (const layer of manifest.layers) {
      const payload = await blob(layer.digest);
      if (`sha256:${createHash('sha256').update(payload).digest('hex')}` !== layer.digest) {
        problems.push('a layer does not match its digest');
        continue;
      }
      const sig = layer.annotations?.['dev.cosignproject.cosign/signature'];
      if (!sig || !verify('sha256', payload, key, Buffer.from(sig, 'base64'))) {
        problems.push('a signature does not verify with the key');
        continue;
      }
      const claim = JSON.parse(payload.toString('utf8')) as {
        critical: { identity: { 'docker-reference': string }; image: { 'docker-manifest-digest': string } };
      };
      if (claim.critical.image['docker-manifest-digest'] !== digest) {
        problems.push(`a signature names ${claim.critical.image['docker-manifest-digest']}`);
        continue;
      }
      const signedRepo = claim.critical.identity['docker-reference'].replace(/(@.*|:[^/:]*)$/, '');
      if (signedRepo !== repository) {
        problems.push(`a signature names ${signedRepo}`);
        continue;
      }
      return undefined;
    }
    return problems.join('; ') || 'the signature has no layer';
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
