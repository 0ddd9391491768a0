/**
 * An example ClusterImagePolicy (config.openshift.io/v1) for sites that sign their own content:
 * scoped to the mirrored release repositories, trusting one Sigstore public key, and matching a
 * signature's identity by repository and digest (`MatchRepoDigestOrExact`), as the `openshift`
 * policy every cluster carries does for quay.io. Without a key, `keyData` is a placeholder the CRD
 * still accepts, so the file applies as written; its header says to replace it first.
 *
 * The CRD checks with CEL what a JSON Schema cannot: the scope format and that `keyData` is base64
 * of a PEM starting `-----BEGIN PUBLIC KEY-----`. Those rules are checked here, so a policy that
 * the API server would refuse is never written.
 */
import { createPublicKey } from 'node:crypto';
import { AirgapError, usageError } from '../../util/errors.js';
import { toYaml } from '../../util/yaml.js';
import { MirrorError } from '../errors.js';

/** What the example is named when no name is given. */
const CLUSTER_IMAGE_POLICY_EXAMPLE_NAME = 'airgap-mirrored-releases';

/**
 * The key `keyData` holds when no key is given: a PEM frame (what the CRD's CEL rules ask for)
 * around a line that says what to put there. It is not a key; nothing verifies against it.
 */
export const PLACEHOLDER_PUBLIC_KEY_PEM =
  '-----BEGIN PUBLIC KEY-----\nREPLACE-ME-with-the-PEM-of-your-cosign.pub\n-----END PUBLIC KEY-----\n';

export interface ClusterImagePolicyExampleOptions {
  /** metadata.name (default {@link CLUSTER_IMAGE_POLICY_EXAMPLE_NAME}). */
  name?: string;
  /**
   * Mirrored release repositories, without tag or digest:
   * `mirror.example.com:8443/openshift/release-images`. Duplicates are dropped.
   */
  scopes: readonly string[];
  /** The Sigstore public key (cosign.pub) as PEM; absent: a placeholder to replace. */
  publicKeyPem?: string;
}

/** A ClusterImagePolicy as the config.openshift.io/v1 CRD takes it (the PublicKey root of trust only). */
export interface ClusterImagePolicyObject {
  apiVersion: 'config.openshift.io/v1';
  kind: 'ClusterImagePolicy';
  metadata: { name: string; annotations: Record<string, string> };
  spec: {
    scopes: string[];
    policy: {
      rootOfTrust: { policyType: 'PublicKey'; publicKey: { keyData: string } };
      signedIdentity: { matchPolicy: 'MatchRepoDigestOrExact' };
    };
  };
}

// The CRD's CEL rules for a scope without a wildcard (config.openshift.io_clusterimagepolicies):
// a registry that is a dotted domain or localhost (with an optional port), then repository path
// components; a tag or digest would make it one image. The example's scopes are repositories.
const DOMAIN = String.raw`(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))+(?::[0-9]+)?|localhost(?::[0-9]+)?)`;
const PATH = String.raw`(?:/[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*)*`;
const SCOPE = new RegExp(`^${DOMAIN}${PATH}$`);
/** `scopes` items are at most this long (CRD maxLength); at most 256 of them. */
const MAX_SCOPE_LENGTH = 512;
const MAX_SCOPES = 256;

/** Why `scope` is not a repository the CRD accepts as a scope, or undefined when it is one. */
function scopeProblem(scope: string): string | undefined {
  if (scope.length > MAX_SCOPE_LENGTH) return `is longer than ${MAX_SCOPE_LENGTH} characters`;
  if (/^\[/.test(scope))
    return 'names its registry by an IPv6 address, which a ClusterImagePolicy scope cannot hold';
  if (!SCOPE.test(scope))
    return 'is not a repository with a fully qualified registry name (host.domain[:port]/path, or localhost[:port]/path), without tag or digest';
  return undefined;
}

/**
 * The PEM of a public key in the SPKI form the CRD asks for (`-----BEGIN PUBLIC KEY-----`, one
 * final newline). Any public key PEM node reads is accepted (an RSA `RSA PUBLIC KEY` is rewritten);
 * a private key is refused without reading it: only its public half belongs in a cluster.
 */
function spkiPem(pem: string): string {
  if (/PRIVATE KEY/.test(pem))
    throw usageError(
      MirrorError.SIGSTORE_KEY_INVALID,
      'the key given for the ClusterImagePolicy is a private key',
      {
        hint: 'give the public key (cosign.pub, or: cosign public-key --key cosign.key)',
      },
    );
  try {
    return createPublicKey(pem).export({ type: 'spki', format: 'pem' }).toString();
  } catch (e) {
    throw usageError(
      MirrorError.SIGSTORE_KEY_INVALID,
      `the key given for the ClusterImagePolicy is not a PEM public key: ${(e as Error).message}`,
      {
        hint: 'give the Sigstore public key as PEM (-----BEGIN PUBLIC KEY-----), as cosign.pub holds it',
        cause: e,
      },
    );
  }
}

/**
 * The example ClusterImagePolicy for `opts.scopes`; see the file comment. Throws
 * CLUSTER_RESOURCE_INPUT for no scope or a scope the CRD refuses, SIGSTORE_KEY_INVALID for a key
 * that is not a public key.
 */
export function clusterImagePolicyExample(opts: ClusterImagePolicyExampleOptions): ClusterImagePolicyObject {
  const scopes = [...new Set(opts.scopes)];
  if (scopes.length === 0)
    throw new AirgapError(
      MirrorError.CLUSTER_RESOURCE_INPUT,
      'a ClusterImagePolicy needs at least one scope',
      {
        hint: 'name the mirrored release repositories it covers',
      },
    );
  if (scopes.length > MAX_SCOPES)
    throw new AirgapError(
      MirrorError.CLUSTER_RESOURCE_INPUT,
      `a ClusterImagePolicy holds at most ${MAX_SCOPES} scopes, not ${scopes.length}`,
      { hint: 'scope it to a common repository namespace instead' },
    );
  for (const scope of scopes) {
    const problem = scopeProblem(scope);
    if (problem)
      throw new AirgapError(
        MirrorError.CLUSTER_RESOURCE_INPUT,
        `the ClusterImagePolicy scope ${scope} ${problem}`,
        {
          where: scope,
          hint: 'name the mirror registry by a DNS name (mirror.example.com:8443), as the nodes pull from it',
        },
      );
  }
  const placeholder = opts.publicKeyPem === undefined;
  const pem = placeholder ? PLACEHOLDER_PUBLIC_KEY_PEM : spkiPem(opts.publicKeyPem!);
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'ClusterImagePolicy',
    metadata: {
      name: opts.name ?? CLUSTER_IMAGE_POLICY_EXAMPLE_NAME,
      annotations: {
        'kubernetes.io/description': placeholder
          ? 'Example: require signatures by your own Sigstore key for the mirrored release repositories. keyData is a placeholder: replace it with the base64 of your cosign.pub before applying.'
          : 'Require signatures by the site key for the mirrored release repositories.',
      },
    },
    spec: {
      scopes,
      policy: {
        rootOfTrust: {
          policyType: 'PublicKey',
          publicKey: { keyData: Buffer.from(pem, 'utf8').toString('base64') },
        },
        signedIdentity: { matchPolicy: 'MatchRepoDigestOrExact' },
      },
    },
  };
}

/**
 * `clusterimagepolicy-example.yaml`: the example as YAML under a header comment that says what it
 * is for and, when the key is the placeholder, to replace it before applying.
 */
export function clusterImagePolicyExampleYaml(opts: ClusterImagePolicyExampleOptions): string {
  const policy = clusterImagePolicyExample(opts);
  const header = [
    '# An example ClusterImagePolicy for sites that sign the mirrored release images with their own',
    '# Sigstore key (cosign sign --key cosign.key <image>@<digest>): nodes then refuse release images',
    '# from these repositories that carry no signature by that key.',
    ...(opts.publicKeyPem === undefined
      ? [
          '# REPLACE spec.policy.rootOfTrust.publicKey.keyData BEFORE APPLYING: it is a placeholder, not a key.',
          '# Put the base64 of your public key there: base64 -w0 cosign.pub',
        ]
      : []),
    '# Apply with: oc apply -f clusterimagepolicy-example.yaml',
  ];
  return `${header.join('\n')}\n${toYaml(policy)}`;
}
