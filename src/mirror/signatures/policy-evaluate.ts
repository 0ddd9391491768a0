/**
 * containers-policy.json(5) evaluated for one image: the scope that applies (the most specific
 * match, as containers/image looks it up), then each of its requirements (all must hold). A
 * signature requirement holds when at least one signature verifies with a trusted key, is of the
 * right kind, names the image's digest, and names an identity its `signedIdentity` rule accepts.
 * Refusals are sentences a person can act on; nothing here throws for a refusal.
 */
import { messageOf } from '../../util/errors.js';
import { parseReference } from '../reference.js';
import type {
  PolicyKey,
  PolicyRequirement,
  PolicyScope,
  SignaturePolicy,
  SignatureRequirement,
  SignedIdentity,
} from './policy.js';
import {
  ATOMIC_SIGNATURE_TYPE,
  COSIGN_SIGNATURE_TYPE,
  claimProblem,
  parseSimpleSigning,
} from './simple-signing.js';

/** The image being decided on: the reference it was asked for by (tag or digest) and its manifest digest. */
export interface PolicyImage {
  reference: string;
  digest: string;
}

/** One Sigstore signature: the simple-signing payload and its base64 signature. */
export interface SigstoreEvidence {
  payload: Uint8Array;
  signature: string;
}

/** The signatures found for the image: Sigstore (cosign `.sig`) and GPG (signature store, lookaside). */
export interface PolicyEvidence {
  sigstore: SigstoreEvidence[];
  gpg: Uint8Array[];
}

/** The cryptography, injected: whether a signature verifies with a key, and what a GPG signature signed. */
export interface PolicyVerifiers {
  sigstore(sig: SigstoreEvidence, publicKeyPem: string): boolean | Promise<boolean>;
  gpg(
    signature: Uint8Array,
    keys: string | Uint8Array,
  ): Promise<{ claimBytes: Uint8Array } | { reason: string }>;
}

export interface PolicyVerdict {
  allowed: boolean;
  /** The requirement that decided (the first that failed), e.g. `transports.docker["quay.io"][0]: sigstoreSigned`. */
  requirement: string;
  /** Why it was refused, one sentence per failed requirement; empty when allowed. */
  reasons: string[];
  /** The scope that applied, as messages name it. */
  scope: string;
}

/**
 * The scopes containers/image tries for a docker reference, most specific first: the reference
 * itself (with its tag or digest), the repository, each parent namespace, the host, then wildcard
 * domains (`*.b.example.com`, `*.example.com`, `*.com`; the port is not part of a wildcard).
 * registries.d(5) looks up its namespaces in the same order.
 */
export function dockerScopes(reference: string): string[] {
  const ref = parseReference(reference);
  let name = `${ref.registry}/${ref.repository}`;
  const out: string[] = [];
  if (ref.tag !== undefined) out.push(`${name}:${ref.tag}`);
  if (ref.digest !== undefined) out.push(`${name}@${ref.digest}`);
  for (;;) {
    out.push(name);
    const slash = name.lastIndexOf('/');
    if (slash < 0) break;
    name = name.slice(0, slash);
  }
  const colon = name.indexOf(':');
  let domain = colon < 0 ? name : name.slice(0, colon);
  for (let dot = domain.indexOf('.'); dot >= 0; dot = domain.indexOf('.')) {
    domain = domain.slice(dot + 1);
    out.push(`*.${domain}`);
  }
  return out;
}

/** The scope whose requirements apply to `reference`. */
export function policyScopeFor(policy: SignaturePolicy, reference: string): PolicyScope {
  for (const s of dockerScopes(reference)) {
    const hit = policy.docker.get(s);
    if (hit) return hit;
  }
  return policy.docker.get('') ?? policy.default;
}

/** Decide on one image: every requirement of its scope must hold. Never throws for a refusal. */
export async function evaluatePolicy(
  policy: SignaturePolicy,
  image: PolicyImage,
  evidence: PolicyEvidence,
  verifiers: PolicyVerifiers,
): Promise<PolicyVerdict> {
  let scope: PolicyScope;
  let intended: Named;
  try {
    scope = policyScopeFor(policy, image.reference);
    intended = intendedReference(image.reference);
  } catch (e) {
    return { allowed: false, requirement: 'the image reference', reasons: [messageOf(e)], scope: '' };
  }
  const failed: { r: PolicyRequirement; reason: string }[] = [];
  for (const r of scope.requirements) {
    const reason = await requirementProblem(r, scope, image, intended, evidence, verifiers);
    if (reason !== undefined) failed.push({ r, reason });
  }
  const first = failed[0];
  return {
    allowed: first === undefined,
    requirement: first
      ? `${first.r.path}: ${first.r.type}`
      : `${scope.path}: ${scope.requirements.map((r) => r.type).join(' + ')}`,
    reasons: failed.map((f) => f.reason),
    scope: scope.label,
  };
}

async function requirementProblem(
  r: PolicyRequirement,
  scope: PolicyScope,
  image: PolicyImage,
  intended: Named,
  evidence: PolicyEvidence,
  verifiers: PolicyVerifiers,
): Promise<string | undefined> {
  if (r.type === 'insecureAcceptAnything') return undefined;
  if (r.type === 'reject') {
    return scope.path === 'default'
      ? `no transports.docker scope names ${intended.name} and the policy's default rejects it; add a scope for it (or its namespace or host) saying what it needs`
      : `the policy rejects every image in ${scope.label} (${r.where})`;
  }
  const keys = r.keys.map((k) => k.source).join(', ');
  const kind = r.type === 'signedBy' ? 'GPG' : 'Sigstore';
  const sigs = r.type === 'signedBy' ? evidence.gpg : evidence.sigstore;
  if (sigs.length === 0)
    return `${image.reference} (${image.digest}) has no ${kind} signature; ${scope.label} requires one made with ${keys}`;
  const tried: string[] = [];
  for (const sig of sigs) {
    const claimed =
      r.type === 'signedBy'
        ? await gpgClaim(sig as Uint8Array, r.keys, verifiers)
        : await sigstoreClaim(sig as SigstoreEvidence, r.keys, verifiers);
    const problem =
      'reason' in claimed
        ? claimed.reason
        : claimProblemOf(claimed.bytes, r.type, image, intended, r.signedIdentity);
    if (problem === undefined) return undefined;
    tried.push(problem);
  }
  const list = tried.map((t, i) => `#${i + 1} ${t}`).join('; ');
  return `no ${kind} signature of ${image.digest} verifies with ${keys} and names the image; ${sigs.length} signature${sigs.length === 1 ? '' : 's'} tried: ${list}`;
}

async function sigstoreClaim(
  sig: SigstoreEvidence,
  keys: PolicyKey[],
  verifiers: PolicyVerifiers,
): Promise<{ bytes: Uint8Array } | { reason: string }> {
  for (const key of keys) {
    try {
      if (await verifiers.sigstore(sig, Buffer.from(key.data).toString('utf8')))
        return { bytes: sig.payload };
    } catch (e) {
      return { reason: `cannot be checked with ${key.source}: ${messageOf(e)}` };
    }
  }
  return { reason: `was not made with ${keys.length === 1 ? 'that key' : 'any of those keys'}` };
}

async function gpgClaim(
  sig: Uint8Array,
  keys: PolicyKey[],
  verifiers: PolicyVerifiers,
): Promise<{ bytes: Uint8Array } | { reason: string }> {
  const reasons: string[] = [];
  for (const key of keys) {
    // An armored keyring is passed as text, a binary one (gpg --export) as bytes.
    const text = Buffer.from(key.data).toString('utf8');
    const arg = text.includes('-----BEGIN PGP') ? text : key.data;
    try {
      const r = await verifiers.gpg(sig, arg);
      if ('claimBytes' in r) return { bytes: r.claimBytes };
      reasons.push(r.reason);
    } catch (e) {
      reasons.push(messageOf(e));
    }
  }
  return { reason: [...new Set(reasons)].join('; ') };
}

/** What is wrong with a verified signature's claims for this image, or undefined when they hold. */
function claimProblemOf(
  bytes: Uint8Array,
  type: SignatureRequirement['type'],
  image: PolicyImage,
  intended: Named,
  rule: SignedIdentity,
): string | undefined {
  const parsed = parseSimpleSigning(bytes);
  if ('error' in parsed) return `verifies, but ${parsed.error}`;
  const expected = type === 'signedBy' ? ATOMIC_SIGNATURE_TYPE : COSIGN_SIGNATURE_TYPE;
  const problem =
    claimProblem(parsed.claim, { digest: image.digest, type: expected }) ??
    identityProblem(rule, intended, parsed.claim.reference);
  return problem === undefined ? undefined : `verifies, but ${problem}`;
}

// ---------------------------------------------------------------------------------------------
// signedIdentity

/** A parsed reference as identities compare them; `nameOnly` when it has neither tag nor digest. */
export interface Named {
  name: string;
  tag?: string;
  digest?: string;
  nameOnly: boolean;
  text: string;
}

export function named(s: string): Named | undefined {
  try {
    const r = parseReference(s);
    const body = s.trim().split('@')[0]!;
    const tag = body.lastIndexOf(':') > body.lastIndexOf('/') ? r.tag : undefined;
    const name = `${r.registry}/${r.repository}`;
    const text = `${name}${tag === undefined ? '' : `:${tag}`}${r.digest === undefined ? '' : `@${r.digest}`}`;
    return { name, tag, digest: r.digest, nameOnly: tag === undefined && r.digest === undefined, text };
  } catch {
    // parseReference refuses it: not a name (undefined says so to the caller).
    return undefined;
  }
}

/**
 * The reference the image is pulled by, as containers/image sees it: a name alone means `:latest`;
 * with both a tag and a digest the digest is what is pulled (and what was pinned), so it counts.
 */
function intendedReference(reference: string): Named {
  const n = named(reference);
  if (!n) return parseReference(reference) as never; // throws the reference error
  if (n.nameOnly) return { ...n, tag: 'latest', nameOnly: false, text: `${n.name}:latest` };
  if (n.tag !== undefined && n.digest !== undefined)
    return { ...n, tag: undefined, text: `${n.name}@${n.digest}` };
  return n;
}

/** Why `signed` (the payload's docker-reference) does not satisfy `rule` for the intended image. */
export function identityProblemFor(
  rule: SignedIdentity,
  reference: string,
  signed: string,
): string | undefined {
  return identityProblem(rule, intendedReference(reference), signed);
}

function identityProblem(rule: SignedIdentity, intended: Named, signedText: string): string | undefined {
  const signed = named(signedText);
  if (!signed) return `the signature names "${signedText}", which is not an image reference`;
  const says = `the signature names ${signed.text}`;
  switch (rule.type) {
    case 'matchRepository':
      return signed.name === intended.name
        ? undefined
        : `${says}, not an image of ${intended.name} (matchRepository)`;
    case 'exactRepository': {
      const want = named(rule.dockerRepository)!.name;
      return signed.name === want ? undefined : `${says}, not an image of ${want} (exactRepository)`;
    }
    case 'matchExact':
      return signed.text === intended.text ? undefined : `${says}, not exactly ${intended.text} (matchExact)`;
    case 'exactReference': {
      const want = named(rule.dockerReference)!.text;
      return !signed.nameOnly && signed.text === want
        ? undefined
        : `${says}, not exactly ${want} (exactReference)`;
    }
    case 'matchRepoDigestOrExact':
      return repoDigestOrExact(intended, signed, 'matchRepoDigestOrExact');
    case 'remapIdentity': {
      const remapped = remap(intended, rule.prefix, rule.signedPrefix);
      if (!remapped)
        return `${intended.text} remapped by ${rule.prefix} → ${rule.signedPrefix} is not a valid reference`;
      return repoDigestOrExact(remapped, signed, `remapIdentity, as ${remapped.text}`);
    }
  }
}

/** containers/image's matchRepoDigestOrExact: by tag, the same reference; by digest, the same repository. */
function repoDigestOrExact(intended: Named, signed: Named, rule: string): string | undefined {
  const says = `the signature names ${signed.text}`;
  if (signed.nameOnly)
    return `${says} with no tag or digest, which ${rule} never accepts (cosign signs repositories this way: set "signedIdentity": {"type": "matchRepository"})`;
  if (intended.tag !== undefined)
    return signed.text === intended.text ? undefined : `${says}, not ${intended.text} (${rule})`;
  return signed.name === intended.name ? undefined : `${says}, not an image of ${intended.name} (${rule})`;
}

/** remapIdentity: `prefix` replaced by `signedPrefix` when it matches whole components of the reference. */
function remap(intended: Named, prefix: string, signedPrefix: string): Named | undefined {
  const text = intended.text;
  const matches =
    text === prefix || (text.startsWith(prefix) && [':', '/', '@'].includes(text.charAt(prefix.length)));
  if (!matches) return intended;
  return named(signedPrefix + text.slice(prefix.length));
}
