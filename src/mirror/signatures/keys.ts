/**
 * The keys release signatures are verified with. airgap ships the Red Hat release key the cluster
 * version operator trusts, so a bastion needs nothing else to check what it mirrors; another
 * keyring (OKD, a site's own signer) is given with --release-keyring.
 */
import { readFile } from 'node:fs/promises';
import type * as OpenPGP from 'openpgp';
import { unreadableReason, usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/**
 * Red Hat, Inc. (release key 2) <security@redhat.com>, fingerprint
 * 567E347AD0044ADE55BA8A5F199E2F91FD431D51: the key OpenShift's cluster version operator verifies
 * release signatures with. Source: github.com/openshift/cluster-update-keys,
 * keys/verifier-public-key-redhat-release at 3b5c59cc6461663751bc510b4f9f1954ed8c9b50.
 */
export const REDHAT_RELEASE_KEY_2 = `pub   4096R/FD431D51 2009-10-22
      Key fingerprint = 567E 347A D004 4ADE 55BA  8A5F 199E 2F91 FD43 1D51
uid                  Red Hat, Inc. (release key 2) <security@redhat.com>

-----BEGIN PGP PUBLIC KEY BLOCK-----
Version: GnuPG v2.0.22 (GNU/Linux)

mQINBErgSTsBEACh2A4b0O9t+vzC9VrVtL1AKvUWi9OPCjkvR7Xd8DtJxeeMZ5eF
0HtzIG58qDRybwUe89FZprB1ffuUKzdE+HcL3FbNWSSOXVjZIersdXyH3NvnLLLF
0DNRB2ix3bXG9Rh/RXpFsNxDp2CEMdUvbYCzE79K1EnUTVh1L0Of023FtPSZXX0c
u7Pb5DI5lX5YeoXO6RoodrIGYJsVBQWnrWw4xNTconUfNPk0EGZtEnzvH2zyPoJh
XGF+Ncu9XwbalnYde10OCvSWAZ5zTCpoLMTvQjWpbCdWXJzCm6G+/hx9upke546H
5IjtYm4dTIVTnc3wvDiODgBKRzOl9rEOCIgOuGtDxRxcQkjrC+xvg5Vkqn7vBUyW
9pHedOU+PoF3DGOM+dqv+eNKBvh9YF9ugFAQBkcG7viZgvGEMGGUpzNgN7XnS1gj
/DPo9mZESOYnKceve2tIC87p2hqjrxOHuI7fkZYeNIcAoa83rBltFXaBDYhWAKS1
PcXS1/7JzP0ky7d0L6Xbu/If5kqWQpKwUInXtySRkuraVfuK3Bpa+X1XecWi24JY
HVtlNX025xx1ewVzGNCTlWn1skQN2OOoQTV4C8/qFpTW6DTWYurd4+fE0OJFJZQF
buhfXYwmRlVOgN5i77NTIJZJQfYFj38c/Iv5vZBPokO6mffrOTv3MHWVgQARAQAB
tDNSZWQgSGF0LCBJbmMuIChyZWxlYXNlIGtleSAyKSA8c2VjdXJpdHlAcmVkaGF0
LmNvbT6JAjYEEwEIACACGwMGCwkIBwMCBBUCCAMEFgIDAQIeAQIXgAUCSuBJPAAK
CRAZni+R/UMdUfIkD/9m3HWv07uJG26R3KBexTo2FFu3rmZs+m2nfW8R3dBX+k0o
AOFpgJCsNgKwU81LOPrkMN19G0+Yn/ZTCDD7cIQ7dhYuDyEX97xh4une/EhnnRuh
ASzR+1xYbj/HcYZIL9kbslgpebMn+AhxbUTQF/mziug3hLidR9Bzvygq0Q09E11c
OZL4BU6J2HqxL+9m2F+tnLdfhL7MsAq9nbmWAOpkbGefc5SXBSq0sWfwoes3X3yD
Q8B5Xqr9AxABU7oUB+wRqvY69ZCxi/BhuuJCUxY89ZmwXfkVxeHl1tYfROUwOnJO
GYSbI/o41KBK4DkIiDcT7QqvqvCyudnxZdBjL2QU6OrIJvWmKs319qSF9m3mXRSt
ZzWtB89Pj5LZ6cdtuHvW9GO4qSoBLmAfB313pGkbgi1DE6tqCLHlA0yQ8zv99OWV
cMDGmS7tVTZqfX1xQJ0N3bNORQNtikJC3G+zBCJzIeZleeDlMDQcww00yWU1oE7/
To2UmykMGc7o9iggFWR2g0PIcKsA/SXdRKWPqCHG2uKHBvdRTQGupdXQ1sbV+AHw
ycyA/9H/mp/NUSNM2cqnBDcZ6GhlHt59zWtEveiuU5fpTbp4GVcFXbW8jStj8j8z
1HI3cywZO8+YNPzqyx0JWsidXGkfzkPHyS4jTG84lfu2JG8m/nqLnRSeKpl20Q==
=79bX
-----END PGP PUBLIC KEY BLOCK-----
`;

export const REDHAT_RELEASE_KEY_2_FINGERPRINT = '567E347AD0044ADE55BA8A5F199E2F91FD431D51';

/** Public keys to verify release signatures with, and where they came from. */
let loaded: Promise<typeof OpenPGP> | undefined;

/**
 * OpenPGP.js, loaded on first use: it is large, and most runs verify no GPG signature (a Sigstore
 * signature is checked with node's crypto), so they never pay for loading it.
 */
export function openpgpLib(): Promise<typeof OpenPGP> {
  return (loaded ??= import('openpgp'));
}

export interface Keyring {
  keys: OpenPGP.PublicKey[];
  /** Upper-case hex fingerprints of the primary keys. */
  fingerprints: string[];
  /** `the Red Hat release key (shipped)`, or the files given. */
  source: string;
}

/** The shipped Red Hat key, or the keys in the given files (armored or binary, one or many each). */
export async function loadKeyring(files?: string[]): Promise<Keyring> {
  if (!files || files.length === 0) {
    const keys = await (await openpgpLib()).readKeys({ armoredKeys: REDHAT_RELEASE_KEY_2 });
    return keyringOf(keys, 'the Red Hat release key (shipped with airgap)');
  }
  const keys: OpenPGP.Key[] = [];
  for (const file of files) keys.push(...(await readKeyFile(file)));
  return keyringOf(keys, files.join(', '));
}

/** A keyring from keys given as armored text or binary bytes (a containers-policy.json keyData or keyPath). */
export async function keyringFromKeys(keys: string | Uint8Array, source = 'the policy'): Promise<Keyring> {
  return keyringOf(await parseKeys(keys), source);
}

async function readKeyFile(file: string): Promise<OpenPGP.Key[]> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw usageError(
      MirrorError.SIGNATURE_KEYRING_INVALID,
      `cannot read the release keyring ${file}: ${unreadableReason(e)}`,
      {
        hint: 'give --release-keyring the path of an OpenPGP public key file (gpg --export [--armor] <key>)',
      },
    );
  }
  try {
    return await parseKeys(bytes);
  } catch (e) {
    throw usageError(
      MirrorError.SIGNATURE_KEYRING_INVALID,
      `${file} holds no OpenPGP public key: ${(e as Error).message}`,
      {
        hint: 'export the key with gpg --export --armor <key id> > keyring.asc and give that file',
      },
    );
  }
}

/** Armored (with any text around the block, as key files often have) or binary OpenPGP keys. */
async function parseKeys(data: string | Uint8Array): Promise<OpenPGP.Key[]> {
  const openpgp = await openpgpLib();
  const text = typeof data === 'string' ? data : Buffer.from(data).toString('latin1');
  if (text.includes('-----BEGIN PGP PUBLIC KEY BLOCK-----'))
    return openpgp.readKeys({
      armoredKeys: typeof data === 'string' ? data : Buffer.from(data).toString('utf8'),
    });
  return openpgp.readKeys({ binaryKeys: typeof data === 'string' ? Buffer.from(data, 'latin1') : data });
}

/** The public half of each key (a secret key given by mistake verifies as its public key), each once. */
function keyringOf(keys: OpenPGP.Key[], source: string): Keyring {
  const unique = new Map<string, OpenPGP.PublicKey>();
  for (const k of keys) unique.set(k.getFingerprint().toUpperCase(), k.toPublic());
  return { keys: [...unique.values()], fingerprints: [...unique.keys()], source };
}
