import { DigestVerifier } from './digest.js';
import type { Descriptor } from './manifest.js';
import type { RegistryClient } from './registry/client.js';

/**
 * A layer blob read from a registry, hashed as it streams: `verify(what)` (after the whole blob
 * was read) throws when its bytes are not its digest. A registry that sends more than the
 * descriptor's size is stopped at once (MIRROR_SIZE_MISMATCH), not read on. Open the tar inside
 * with tar-read.ts's openTar.
 */
export async function registryLayer(
  client: RegistryClient,
  repo: string,
  layer: Descriptor,
): Promise<{ bytes: AsyncGenerator<Buffer>; verify(what: string): void }> {
  const verifier = new DigestVerifier(layer.digest, layer.size);
  const { body } = await client.openBlob(repo, layer.digest);
  const bytes = (async function* () {
    for await (const c of body) {
      verifier.update(c);
      if (verifier.bytes > layer.size) verifier.verify(`layer ${client.registry}/${repo}@${layer.digest}`);
      yield c;
    }
  })();
  return { bytes, verify: (what) => verifier.verify(what) };
}
