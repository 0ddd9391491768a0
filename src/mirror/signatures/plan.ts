/**
 * The content's trust chain, added to a plan while it is resolved (the one call resolve.ts makes):
 *
 * 1. Sigstore signatures in cosign's tag scheme, and OCI 1.1 referrers kept under the referrers
 *    tag schema, are found at the source, one tag listing per repository (discover.ts), and join
 *    the plan as entries of their own, next to the images they sign; every image records whether
 *    it is signed. `--remove-signatures` skips this.
 * 2. Each release's GPG signatures are fetched from the signature store and verified against the
 *    keyring (release.ts); only those that verify and name the release's digest are kept in the
 *    plan, so a disk → mirror run writes the signature ConfigMap with nothing from the source side.
 *    The keyring is found before the run fetches anything (inputs.ts); a run without one fetches
 *    no release signature and keeps none (it said so then).
 * 3. With `--secure-policy`, every image is checked against containers-policy.json (policy.ts). An
 *    image the policy refuses stays in the plan, refused, with the reason: the run reports it
 *    failed without copying it, and copies the others.
 *
 * Without `--secure-policy` a missing or bad signature is a warning, never an error; with it, the
 * image fails. Nothing unverified is ever recorded as verified.
 */
import { readFile } from 'node:fs/promises';
import { AirgapError, hasCode, messageOf } from '../../util/errors.js';
import { isNotFound, writeFileAtomic } from '../../util/fs.js';
import { Limiter } from '../../util/limit.js';
import type { ProgressSink } from '../../util/progress.js';
import type { TlsOptions } from '../../net/http.js';
import { MirrorError } from '../errors.js';
import type { MirrorPlan, PlanEntry, PlanReleaseSignatures, PlanSignatures } from '../plan.js';
import { BUILD_SOURCE } from '../plan.js';
import { parseManifest } from '../manifest.js';
import { parseReference } from '../reference.js';
import type { RegistryClient } from '../registry/client.js';
import { readCosignSignatures } from './cosign.js';
import { discoverSignatures, type SignatureCheck, type SignatureChecks } from './discover.js';
import type { Keyring } from './keys.js';
import { defaultPolicyPath, evaluatePolicy, loadPolicy } from './policy.js';
import { policyScopeFor } from './policy-evaluate.js';
import {
  defaultRegistriesDDir,
  loadRegistriesD,
  lookasideSignatureUrl,
  type RegistriesD,
} from './registries-d.js';
import { fetchSignatureSeries } from './store.js';
import { releaseSignatures } from './release.js';
import { policyVerifiers } from './verifiers.js';
import { DEFAULT_SIGNATURE_URL } from './store.js';

export interface SignatureOptions {
  /** --remove-signatures: neither look up nor copy Sigstore signatures. */
  remove?: boolean;
  /** The release signature store (--signature-url; else OCP_SIGNATURE_URL; else oc-mirror's default). */
  storeUrl?: string;
  /**
   * The keys release signatures are verified with (findReleaseKeyring, looked for before the run
   * fetched anything); `none`: looked for and not found, so no release signature is fetched or
   * kept. Absent: the run does not look at release signatures (mirror check, mirror delete).
   */
  releaseKeyring?: Keyring | 'none';
  /** TLS for the signature store (the CA flags registries use). */
  tls?: TlsOptions;
  /** --secure-policy: verify every image against containers-policy.json (default: the user's, else /etc/containers/policy.json). */
  securePolicy?: boolean;
  policyPath?: string;
  /**
   * --registries.d: where `signedBy` images' GPG signatures are read (each namespace's lookaside).
   * Default: the directory containers/image reads, when it exists.
   */
  registriesDDir?: string;
  /** Where the `.sig` payload checks of earlier runs are remembered (in the workspace). */
  checksFile?: string;
}

/** The store a run reads release signatures from: the flag, the environment, or the default. */
function signatureStoreUrl(flag?: string): string {
  return flag ?? process.env.OCP_SIGNATURE_URL ?? DEFAULT_SIGNATURE_URL;
}

/**
 * Add signatures to a resolved plan (its images are final: blocked images are out, one entry per
 * destination). Mutates `plan`: signature entries appended, `signed` set, refused images marked
 * unresolved, `plan.signatures` filled, warnings added.
 */
export async function addSignatures(
  plan: MirrorPlan,
  o: SignatureOptions,
  client: (registry: string) => RegistryClient,
  progress: ProgressSink,
): Promise<void> {
  // Release signatures only verified with a key: without one, none is fetched, none kept.
  const keyring = o.releaseKeyring === 'none' ? undefined : o.releaseKeyring;
  const policy = o.securePolicy ? await loadPolicy(o.policyPath ?? (await defaultPolicyPath())) : undefined;
  const registriesD = policy
    ? o.registriesDDir
      ? await loadRegistriesD(o.registriesDDir)
      : await loadRegistriesD(await defaultRegistriesDDir(), { missingOk: true })
    : undefined;
  const signatures: PlanSignatures = {
    removed: o.remove === true,
    sigstore: { signed: 0, unsigned: 0 },
    releases: [],
  };
  plan.signatures = signatures;

  if (!o.remove) {
    progress({ type: 'phase', name: 'signatures', detail: 'looking up Sigstore signatures' });
    const found = await discoverSignatures(plan.images, client, {
      checks: o.checksFile ? await readChecks(o.checksFile) : undefined,
    });
    if (o.checksFile) await writeChecks(o.checksFile, found.checks);
    for (const e of plan.images) {
      if (!isRegistryImage(e)) continue;
      e.signed = found.signed.has(e.digest);
      if (e.signed) signatures.sigstore.signed++;
      else signatures.sigstore.unsigned++;
    }
    plan.warnings.push(...found.warnings);
    plan.images.push(...found.entries);
  }

  if (keyring && plan.releases.length > 0) {
    progress({ type: 'phase', name: 'signatures', detail: 'release signatures' });
    signatures.releases = await signReleases(plan, o, keyring);
    // A problem shared by several releases (the store out of reach) is said once, naming them.
    const byProblem = new Map<string, string[]>();
    for (const r of signatures.releases)
      for (const p of r.problems) byProblem.set(p, [...(byProblem.get(p) ?? []), `${r.version} (${r.arch})`]);
    for (const [p, releases] of byProblem)
      plan.warnings.push(
        releases.length === 1
          ? `release ${releases[0]}: ${p}`
          : `${releases.length} releases (${releases[0]} … ${releases.at(-1)}): ${p}`,
      );
  }

  if (policy) {
    progress({ type: 'phase', name: 'signatures', detail: `checking images against ${policy.path}` });
    plan.warnings.push(...(registriesD?.warnings ?? []));
    signatures.policy = {
      path: policy.path,
      rejected: await enforcePolicy(plan, policy, client, { registriesD: registriesD!, tls: o.tls }),
    };
  }
}

/**
 * The remembered checks; a missing file, or one that is not JSON (torn), means none (they are only
 * a shortcut). A file that cannot be read is an error, with its path.
 */
async function readChecks(file: string): Promise<SignatureChecks | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  let doc: Record<string, SignatureCheck>;
  try {
    doc = JSON.parse(text) as Record<string, SignatureCheck>;
  } catch {
    return undefined; // not JSON (a torn write): the checks are asked again
  }
  const checks: SignatureChecks = new Map();
  for (const [k, v] of Object.entries(doc ?? {})) {
    if (v && Number.isInteger(v.matching) && v.matching >= 0) checks.set(k, v);
  }
  return checks;
}

async function writeChecks(file: string, checks: SignatureChecks): Promise<void> {
  await writeFileAtomic(file, JSON.stringify(Object.fromEntries(checks)));
}

/** A registry-sourced, pinned image that is not itself a signature. */
function isRegistryImage(e: PlanEntry): boolean {
  return e.kind !== 'signature' && e.digest !== '' && !e.source.startsWith(BUILD_SOURCE);
}

/**
 * Fetch and verify each release's GPG signatures, eight releases at a time. The store is asked for
 * the first release alone: when it cannot be reached (no route to the internet's store from a
 * disconnected side, a CA not trusted), that is one problem said for every release, and the store
 * is not asked again; a hundred releases each waiting out their own retries took minutes.
 */
async function signReleases(
  plan: MirrorPlan,
  o: SignatureOptions,
  keyring: Keyring,
): Promise<PlanReleaseSignatures[]> {
  const baseUrl = signatureStoreUrl(o.storeUrl);
  let unreachable: string | undefined;
  const one = async (r: MirrorPlan['releases'][number]): Promise<PlanReleaseSignatures> => {
    const base = { version: r.version, arch: r.arch, digest: r.digest };
    if (unreachable) return { ...base, signatures: [], verifiedBy: [], problems: [unreachable] };
    const ref = parseReference(r.payload);
    try {
      const [got] = await releaseSignatures(
        [{ digest: r.digest, repository: `${ref.registry}/${ref.repository}` }],
        { baseUrl, tls: o.tls, keyring },
      );
      return { ...base, signatures: got!.signatures, verifiedBy: got!.verifiedBy, problems: got!.problems };
    } catch (e) {
      if (!hasCode(e, MirrorError.SIGNATURE_STORE_UNREACHABLE))
        return { ...base, signatures: [], verifiedBy: [], problems: [messageOf(e)] };
      // One problem for every release: said once (the warnings group releases by problem).
      unreachable ??= `the signature store was not read, and not asked again in this run: ${messageOf(e)}`;
      return { ...base, signatures: [], verifiedBy: [], problems: [unreachable] };
    }
  };
  const [first, ...rest] = plan.releases;
  if (!first) return [];
  const limit = new Limiter(8);
  return [await one(first), ...(await Promise.all(rest.map((r) => limit.run(() => one(r)))))];
}

/**
 * Check every image against the policy; a refused image is marked so (the run reports it failed
 * without copying it) and its signature entries are dropped. Returns how many were refused.
 */
async function enforcePolicy(
  plan: MirrorPlan,
  policy: Awaited<ReturnType<typeof loadPolicy>>,
  client: (registry: string) => RegistryClient,
  lookaside: { registriesD: RegistriesD; tls?: TlsOptions },
): Promise<number> {
  const sigsOf = new Map<string, PlanEntry[]>();
  for (const e of plan.images) {
    if (e.kind !== 'signature' || !e.signs) continue;
    const key = `${e.destRepo}@${e.signs}`;
    sigsOf.set(key, [...(sigsOf.get(key) ?? []), e]);
  }
  const gpgOf = new Map<string, string[]>();
  for (const r of plan.signatures?.releases ?? []) gpgOf.set(r.digest, r.signatures);
  const limit = new Limiter(8);
  const refused = new Set<string>();
  await Promise.all(
    plan.images.filter(isRegistryImage).map((e) =>
      limit.run(async () => {
        const sigs = sigsOf.get(`${e.destRepo}@${e.digest}`) ?? [];
        const gpg = (gpgOf.get(e.digest) ?? []).map((b) => Buffer.from(b, 'base64'));
        const fromLookaside = await lookasideEvidence(policy, e, lookaside);
        const verdict = await evaluatePolicy(
          policy,
          { reference: e.origin, digest: e.digest },
          {
            sigstore: (await Promise.all(sigs.map((sig) => sigstoreEvidence(client, sig)))).flat(),
            gpg: [...gpg, ...fromLookaside.signatures],
          },
          policyVerifiers,
        );
        if (verdict.allowed) return;
        refused.add(`${e.destRepo}@${e.digest}`);
        const reasons = [...verdict.reasons, ...fromLookaside.problems];
        e.refused = {
          code: MirrorError.SIGNATURE_POLICY_REJECTED,
          message: `${e.origin} is refused by ${policy.path} (${verdict.requirement}): ${reasons.join('; ')}`,
          hint: 'mirror only what the policy accepts: sign the image, trust its key in the policy, or leave out --secure-policy',
        };
      }),
    ),
  );
  plan.images = plan.images.filter(
    (e) => !(e.kind === 'signature' && refused.has(`${e.destRepo}@${e.signs}`)),
  );
  return refused.size;
}

/**
 * The GPG signatures of an image from its registries.d lookaside, read only when the policy asks
 * `signedBy` of it (its digest under the origin's repository path, as containers/image names them).
 * A lookaside that cannot be read is a reason the image is refused, never a stop.
 */
async function lookasideEvidence(
  policy: Awaited<ReturnType<typeof loadPolicy>>,
  e: PlanEntry,
  o: { registriesD: RegistriesD; tls?: TlsOptions },
): Promise<{ signatures: Buffer[]; problems: string[] }> {
  const none = { signatures: [], problems: [] };
  if (!policyScopeFor(policy, e.origin).requirements.some((r) => r.type === 'signedBy')) return none;
  const store = o.registriesD.lookasideFor(e.origin);
  if (!store) return none;
  try {
    const signatures = await fetchSignatureSeries(
      (n) => lookasideSignatureUrl(store.url, e.origin, e.digest, n),
      { tls: o.tls },
      {
        what: `the signatures of ${e.origin} from the lookaside ${store.url} (${store.scope}, ${store.where})`,
        hint: 'check the lookaside URL in registries.d (--registries.d), or mirror it to this side',
        store: store.url,
      },
    );
    return { signatures, problems: [] };
  } catch (err) {
    if (!(err instanceof AirgapError)) throw err;
    return { signatures: [], problems: [err.message] };
  }
}

/** The Sigstore signatures a `.sig` entry or a referrers index holds, read from its source. */
async function sigstoreEvidence(
  client: (registry: string) => RegistryClient,
  sig: PlanEntry,
): Promise<{ payload: Uint8Array; signature: string }[]> {
  const ref = parseReference(sig.source);
  const c = client(ref.registry);
  const read = (bytes: Uint8Array) =>
    readCosignSignatures(bytes, (digest, size) => c.getBlobBytes(ref.repository, digest, size));
  try {
    const m = await c.getManifest(ref.repository, sig.digest);
    const parsed = parseManifest(m.bytes, m.mediaType, sig.source);
    const manifests =
      parsed.kind === 'index'
        ? await Promise.all(
            parsed.manifests.map(async (d) => (await c.getManifest(ref.repository, d.digest)).bytes),
          )
        : [m.bytes];
    const sigs = (await Promise.all(manifests.map(read))).flat();
    return sigs.map((s) => ({ payload: s.payload, signature: s.signature }));
  } catch (e) {
    if (e instanceof AirgapError) return [];
    throw e;
  }
}
