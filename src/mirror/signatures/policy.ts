/**
 * containers-policy.json(5), read and evaluated for the docker transport as containers/image does,
 * so that `airgap mirror --secure-policy` refuses what podman or CRI-O would refuse with the same
 * file, before the image is mirrored.
 *
 * - The file is strict: unknown fields, duplicate keys, an empty requirement list, a `signedBy`
 *   without exactly one key source are errors (containers/image refuses them too). Everything is
 *   reported at once, each problem with `file:line:column` and the field.
 * - The scope is the most specific one that matches: `host[:port]/ns/repo:tag` (or `@digest`), the
 *   repository, each parent namespace, the host, wildcard domains `*.example.com` (nearest first),
 *   then the docker transport's `""`, then the global `default`. All requirements of that scope
 *   must hold.
 * - Only what can be checked offline is accepted: keyed Sigstore signatures and GPG `signedBy`.
 *   Fulcio, Rekor and PKI requirements are refused as unsupported, never skipped.
 *
 * The cryptography is injected ({@link PolicyVerifiers}) so this module stays pure; the claims a
 * verified signature makes are checked here, with simple-signing.ts and the `signedIdentity` rule.
 */
import { access, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import { childPath, itemPath } from '../../config/positions.js';
import { Problems } from '../../config/problems.js';
import { didYouMean } from '../../config/suggest.js';
import { AirgapError, unreadableReason, usageError } from '../../util/errors.js';
import { isNotFound } from '../../util/fs.js';
import { MirrorError } from '../errors.js';
import { parseReference } from '../reference.js';
import { publicKeyFrom } from './cosign.js';
import { named, type Named } from './policy-evaluate.js';
import { jsonPositions, parseStrictJson } from './policy-json.js';

export {
  evaluatePolicy,
  identityProblemFor,
  policyScopeFor,
  type PolicyEvidence,
  type PolicyVerifiers,
} from './policy-evaluate.js';

/** Where containers/image looks when no policy is named: the user's file if it exists, else this. */
const SYSTEM_POLICY_PATH = '/etc/containers/policy.json';

/** How a signature's claimed identity must relate to the image (containers-policy.json(5) `signedIdentity`). */
export type SignedIdentity =
  | { type: 'matchRepoDigestOrExact' | 'matchRepository' | 'matchExact' }
  | { type: 'exactReference'; dockerReference: string }
  | { type: 'exactRepository'; dockerRepository: string }
  | { type: 'remapIdentity'; prefix: string; signedPrefix: string };

/** A key a requirement trusts: where it came from (a file, or `keyData` at file:line) and its bytes. */
export interface PolicyKey {
  source: string;
  data: Uint8Array;
}

/** Where a requirement is in the file: `transports.docker["quay.io"][0]` and file:line:column. */
interface RequirementPlace {
  path: string;
  where: string;
}
export interface AcceptRequirement extends RequirementPlace {
  type: 'insecureAcceptAnything';
}
export interface RejectRequirement extends RequirementPlace {
  type: 'reject';
}
/** `signedBy` (GPG keyrings) or `sigstoreSigned` (PEM public keys). */
export interface SignatureRequirement extends RequirementPlace {
  type: 'signedBy' | 'sigstoreSigned';
  keys: PolicyKey[];
  signedIdentity: SignedIdentity;
}
export type PolicyRequirement = AcceptRequirement | RejectRequirement | SignatureRequirement;

/** The requirements of one scope; `label` is how messages name it. */
export interface PolicyScope {
  scope: string;
  label: string;
  path: string;
  requirements: PolicyRequirement[];
}

export interface SignaturePolicy {
  /** The file it was read from. */
  path: string;
  default: PolicyScope;
  /** transports.docker, by scope (`""` included when present). */
  docker: Map<string, PolicyScope>;
}

const REQUIREMENT_FIELDS = {
  insecureAcceptAnything: ['type'],
  reject: ['type'],
  signedBy: ['type', 'keyType', 'keyPath', 'keyPaths', 'keyData', 'signedIdentity'],
  sigstoreSigned: [
    'type',
    'keyPath',
    'keyPaths',
    'keyData',
    'keyDatas',
    'fulcio',
    'pki',
    'rekorPublicKeyPath',
    'rekorPublicKeyPaths',
    'rekorPublicKeyData',
    'rekorPublicKeyDatas',
    'signedIdentity',
  ],
} as const;
type RequirementType = keyof typeof REQUIREMENT_FIELDS;
const REQUIREMENT_TYPES = Object.keys(REQUIREMENT_FIELDS) as RequirementType[];

const IDENTITY_FIELDS = {
  matchRepoDigestOrExact: ['type'],
  matchRepository: ['type'],
  matchExact: ['type'],
  exactReference: ['type', 'dockerReference'],
  exactRepository: ['type', 'dockerRepository'],
  remapIdentity: ['type', 'prefix', 'signedPrefix'],
} as const;
const IDENTITY_TYPES = Object.keys(IDENTITY_FIELDS) as (keyof typeof IDENTITY_FIELDS)[];

const MAN = 'containers-policy.json(5)';
const INVALID = MirrorError.SIGNATURE_POLICY_INVALID;
const UNSUPPORTED = MirrorError.SIGNATURE_POLICY_UNSUPPORTED;

/**
 * The policy containers/image would use: `~/.config/containers/policy.json` if it exists, else the
 * system one. A user policy that is there but cannot be looked at is still the user's: reading it
 * then says why, rather than another policy being enforced in its place.
 */
export async function defaultPolicyPath(): Promise<string> {
  const user = join(homedir(), '.config/containers/policy.json');
  try {
    await access(user);
    return user;
  } catch (e) {
    return isNotFound(e) ? SYSTEM_POLICY_PATH : user;
  }
}

/** Read and check a containers-policy.json, and the key files it names. Usage errors (exit 2) for anything wrong. */
export async function loadPolicy(path: string): Promise<SignaturePolicy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(
      MirrorError.SIGNATURE_POLICY_UNREADABLE,
      `cannot read the policy ${path}: ${unreadableReason(e)}`,
      {
        hint: `name a containers-policy.json with --policy, or create ${SYSTEM_POLICY_PATH} (see ${MAN})`,
        cause: e,
      },
    );
  }
  return parsePolicy(text, path);
}

/** Parse a policy's text (`file` names it in messages); key files are read here. */
export async function parsePolicy(text: string, file: string): Promise<SignaturePolicy> {
  const doc = parseStrictJson(text, file);
  const p = new Problems<string>(file, jsonPositions(text, file));
  const fail = (): never => {
    p.throwIfAny();
    throw new Error('unreachable');
  };
  if (!isObject(doc)) {
    p.add(INVALID, '', 'the policy is not a JSON object', {
      hint: `start from {"default": [{"type": "reject"}]} (${MAN})`,
    });
    return fail();
  }
  unknownFields(p, doc, '', ['default', 'transports'], 'the policy');
  const docker = new Map<string, PolicyScope>();
  let dflt: PolicyScope | undefined;
  if (doc.default === undefined) {
    p.add(INVALID, '', 'the policy has no "default"', {
      hint: 'add "default": [{"type": "reject"}] (or insecureAcceptAnything) for images no scope names',
    });
  } else {
    dflt = await readScope(p, doc.default, 'default', '', 'the default');
  }
  if (doc.transports !== undefined) {
    if (!isObject(doc.transports))
      p.add(INVALID, 'transports', 'transports must be an object of transport names');
    else {
      for (const [name, scopes] of Object.entries(doc.transports)) {
        const path = childPath('transports', name);
        if (!isObject(scopes)) p.add(INVALID, path, `transports.${name} must be an object of scopes`);
        // Only docker images are mirrored; other transports (docker-daemon, oci, …) never apply.
        else if (name === 'docker') await readDockerScopes(p, scopes, path, docker);
      }
    }
  }
  if (p.list.length > 0 || !dflt) return fail();
  return { path: file, default: dflt, docker };
}

async function readDockerScopes(
  p: Problems<string>,
  scopes: Record<string, unknown>,
  path: string,
  out: Map<string, PolicyScope>,
): Promise<void> {
  for (const [scope, raw] of Object.entries(scopes)) {
    const scopePath = childPath(path, scope);
    const problem = scopeProblem(scope);
    if (problem)
      p.add(INVALID, scopePath, `scope "${scope}" ${problem.what}`, { hint: problem.hint, part: 'key' });
    const label = scope === '' ? 'the docker default scope ""' : `scope "${scope}"`;
    const read = await readScope(p, raw, scopePath, scope, label);
    if (read) out.set(scope, read);
  }
}

/**
 * Scopes that can never match: containers/image accepts them silently, which under a `reject`
 * default would refuse everything and under `insecureAcceptAnything` would check nothing.
 */
function scopeProblem(scope: string): { what: string; hint: string } | undefined {
  if (scope === '') return undefined;
  const write =
    'write scopes as host[:port][/namespace[/repo[:tag|@digest]]], e.g. quay.io/openshift-release-dev';
  if (scope.includes('://')) return { what: 'names a transport or URL, so it never matches', hint: write };
  if (scope.includes('*')) {
    return /^\*\.[A-Za-z0-9.-]+$/.test(scope) && !scope.endsWith('.')
      ? undefined
      : {
          what: 'has a wildcard that never matches',
          hint: 'a wildcard scope is *.domain with nothing after it (e.g. *.example.com); it matches hosts only',
        };
  }
  const host = scope.split('/')[0]!;
  if (!/[.:[]/.test(host) && host !== 'localhost')
    return {
      what: `does not start with a registry host, so it never matches (references are expanded: busybox is docker.io/library/busybox)`,
      hint: write,
    };
  return undefined;
}

async function readScope(
  p: Problems<string>,
  raw: unknown,
  path: string,
  scope: string,
  label: string,
): Promise<PolicyScope | undefined> {
  if (!Array.isArray(raw) || raw.length === 0) {
    p.add(INVALID, path, `${label} must be a non-empty list of requirements`, {
      hint: 'e.g. [{"type": "reject"}]; containers/image refuses an empty list too',
    });
    return undefined;
  }
  const requirements: PolicyRequirement[] = [];
  for (const [i, item] of raw.entries()) {
    const r = await readRequirement(p, item, itemPath(path, i), label);
    if (r) requirements.push(r);
  }
  return requirements.length === raw.length ? { scope, label, path, requirements } : undefined;
}

async function readRequirement(
  p: Problems<string>,
  raw: unknown,
  path: string,
  label: string,
): Promise<PolicyRequirement | undefined> {
  if (!isObject(raw) || typeof raw.type !== 'string') {
    p.add(INVALID, path, `${label}: each requirement is an object with a "type"`, {
      hint: `one of ${REQUIREMENT_TYPES.join(', ')}`,
    });
    return undefined;
  }
  if (!(REQUIREMENT_TYPES as string[]).includes(raw.type)) {
    p.add(INVALID, childPath(path, 'type'), `${label}: unknown requirement type "${raw.type}"`, {
      hint:
        didYouMean(raw.type, REQUIREMENT_TYPES) ?? `the types are ${REQUIREMENT_TYPES.join(', ')} (${MAN})`,
    });
    return undefined;
  }
  const type = raw.type as RequirementType;
  const before = p.list.length;
  const known = REQUIREMENT_FIELDS[type];
  unknownFields(p, raw, path, known, `${label}: ${type}`);
  const where = p.where(path).where;
  if (type === 'insecureAcceptAnything' || type === 'reject') {
    return p.list.length === before ? { type, path, where } : undefined;
  }
  const ctx = { p, path, label: `${label}: ${type}` };
  const keys = type === 'signedBy' ? await gpgKeys(ctx, raw) : await sigstoreKeys(ctx, raw);
  const signedIdentity = readIdentity(ctx, raw.signedIdentity);
  if (!keys || !signedIdentity || p.list.length !== before) return undefined;
  return { type, path, where, keys, signedIdentity };
}

interface FieldContext {
  p: Problems<string>;
  path: string;
  label: string;
}

/** `signedBy`: keyType GPGKeys and exactly one of keyPath, keyPaths, keyData (a keyring, armored or binary). */
async function gpgKeys(ctx: FieldContext, raw: Record<string, unknown>): Promise<PolicyKey[] | undefined> {
  const { p, path, label } = ctx;
  if (raw.keyType !== 'GPGKeys') {
    p.add(
      INVALID,
      childPath(path, 'keyType'),
      `${label}: keyType is ${raw.keyType === undefined ? 'missing' : JSON.stringify(raw.keyType)}`,
      {
        hint: 'set "keyType": "GPGKeys", the only key type containers/image supports',
      },
    );
  }
  return readKeys(ctx, raw, ['keyPath', 'keyPaths', 'keyData'], 'a GPG keyring (gpg --export)');
}

/** `sigstoreSigned`: exactly one of keyPath, keyPaths, keyData, keyDatas (PEM public keys); no Fulcio, PKI or Rekor. */
async function sigstoreKeys(
  ctx: FieldContext,
  raw: Record<string, unknown>,
): Promise<PolicyKey[] | undefined> {
  const { p, path, label } = ctx;
  const keyless = (['fulcio', 'pki'] as const).filter((f) => raw[f] !== undefined);
  for (const f of keyless) {
    p.add(
      UNSUPPORTED,
      childPath(path, f),
      `${label}: ${f === 'fulcio' ? 'keyless (Fulcio)' : 'X.509 PKI'} verification is not supported: airgap verifies Sigstore signatures made with a public key only`,
      {
        hint: 'sign with a key (cosign sign --key) and name its public key in keyPath or keyData, or mirror without --secure-policy',
      },
    );
  }
  for (const f of [
    'rekorPublicKeyPath',
    'rekorPublicKeyPaths',
    'rekorPublicKeyData',
    'rekorPublicKeyDatas',
  ]) {
    if (raw[f] === undefined) continue;
    p.add(
      UNSUPPORTED,
      childPath(path, f),
      `${label}: ${f} requires a Rekor transparency-log entry for each signature, which airgap does not verify`,
      {
        hint: 'remove the rekorPublicKey* field to check the signatures against the key alone, or mirror without --secure-policy',
        part: 'key',
      },
    );
  }
  if (keyless.length > 0) return undefined;
  const keys = await readKeys(
    ctx,
    raw,
    ['keyPath', 'keyPaths', 'keyData', 'keyDatas'],
    'a PEM public key (cosign.pub)',
  );
  for (const k of keys ?? []) {
    try {
      publicKeyFrom(k.data, k.source);
    } catch (e) {
      if (!(e instanceof AirgapError)) throw e;
      p.add(e.code, path, `${label}: ${e.message}`, { hint: e.hint });
    }
  }
  return keys;
}

/** Exactly one of `fields` must be present; files are read (absolute paths only), data decoded from base64. */
async function readKeys(
  ctx: FieldContext,
  raw: Record<string, unknown>,
  fields: string[],
  what: string,
): Promise<PolicyKey[] | undefined> {
  const { p, path, label } = ctx;
  const given = fields.filter((f) => raw[f] !== undefined);
  if (given.length !== 1) {
    p.add(
      INVALID,
      path,
      given.length === 0 ? `${label} names no key` : `${label} gives ${given.join(' and ')}`,
      {
        hint: `give exactly one of ${fields.join(', ')}, naming ${what}`,
      },
    );
    return undefined;
  }
  const field = given[0]!;
  const value = raw[field];
  const plural = field.endsWith('s');
  const list = plural ? value : [value];
  if (!Array.isArray(list) || list.length === 0 || !list.every((v) => typeof v === 'string' && v !== '')) {
    p.add(
      INVALID,
      childPath(path, field),
      `${label}: ${field} must be ${plural ? 'a non-empty list of strings' : 'a non-empty string'}`,
    );
    return undefined;
  }
  const keys: PolicyKey[] = [];
  for (const [i, v] of (list as string[]).entries()) {
    const at = plural ? itemPath(childPath(path, field), i) : childPath(path, field);
    const key = field.startsWith('keyPath') ? await keyFile(p, at, label, v) : keyData(p, at, label, v);
    if (key) keys.push(key);
  }
  return keys.length === list.length ? keys : undefined;
}

async function keyFile(
  p: Problems<string>,
  at: string,
  label: string,
  file: string,
): Promise<PolicyKey | undefined> {
  if (!isAbsolute(file)) {
    p.add(INVALID, at, `${label}: key path "${file}" is relative`, {
      hint: `give the absolute path of the key file: ${MAN} resolves key paths against nothing`,
    });
    return undefined;
  }
  try {
    return { source: file, data: await readFile(file) };
  } catch (e) {
    p.add(
      MirrorError.SIGNATURE_POLICY_UNREADABLE,
      at,
      `${label}: cannot read the key file ${file}: ${unreadableReason(e)}`,
      {
        hint: 'put the public key there, or point the policy at where it is',
      },
    );
    return undefined;
  }
}

function keyData(p: Problems<string>, at: string, label: string, text: string): PolicyKey | undefined {
  const compact = text.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(compact) || compact.length % 4 !== 0) {
    p.add(INVALID, at, `${label}: key data is not base64`, {
      hint: 'give the key base64-encoded: base64 -w0 < key',
    });
    return undefined;
  }
  return { source: `the keyData at ${p.where(at).where}`, data: Buffer.from(compact, 'base64') };
}

function readIdentity(ctx: FieldContext, raw: unknown): SignedIdentity | undefined {
  const { p, label } = ctx;
  const path = childPath(ctx.path, 'signedIdentity');
  if (raw === undefined) return { type: 'matchRepoDigestOrExact' };
  const type = isObject(raw) ? raw.type : undefined;
  if (!isObject(raw) || typeof type !== 'string' || !(IDENTITY_TYPES as string[]).includes(type)) {
    p.add(
      INVALID,
      typeof type === 'string' ? childPath(path, 'type') : path,
      `${label}: unknown signedIdentity ${JSON.stringify(type ?? raw)}`,
      {
        hint:
          (typeof type === 'string' && didYouMean(type, IDENTITY_TYPES)) ||
          `the types are ${IDENTITY_TYPES.join(', ')}`,
      },
    );
    return undefined;
  }
  const t = type as keyof typeof IDENTITY_FIELDS;
  unknownFields(p, raw, path, IDENTITY_FIELDS[t], `${label}: signedIdentity ${t}`);
  const ref = (field: string, check: (n: Named) => string | undefined): string | undefined => {
    const v = raw[field];
    const n = typeof v === 'string' ? named(v) : undefined;
    const problem = n ? check(n) : 'is not an image reference';
    if (problem === undefined) return v as string;
    p.add(
      INVALID,
      childPath(path, field),
      `${label}: signedIdentity ${field} ${JSON.stringify(v)} ${problem}`,
    );
    return undefined;
  };
  if (t === 'exactReference') {
    const dockerReference = ref('dockerReference', (n) => (n.nameOnly ? 'has no tag or digest' : undefined));
    return dockerReference === undefined ? undefined : { type: t, dockerReference };
  }
  if (t === 'exactRepository') {
    const dockerRepository = ref('dockerRepository', () => undefined);
    return dockerRepository === undefined ? undefined : { type: t, dockerRepository };
  }
  if (t === 'remapIdentity') {
    const prefix = remapPrefix(p, path, label, raw, 'prefix');
    const signedPrefix = remapPrefix(p, path, label, raw, 'signedPrefix');
    return prefix === undefined || signedPrefix === undefined ? undefined : { type: t, prefix, signedPrefix };
  }
  return { type: t };
}

/** A remapIdentity prefix: `host[:port]` or `host[:port]/namespace[/repo]`, no tag or digest. */
function remapPrefix(
  p: Problems<string>,
  path: string,
  label: string,
  raw: Record<string, unknown>,
  field: string,
) {
  const v = raw[field];
  if (typeof v === 'string') {
    const host = v.split('/')[0]!;
    try {
      const r = parseReference(`${v}/x`);
      if (r.registry === host && !v.includes('@') && `${r.registry}/${r.repository}` === `${v}/x`) return v;
    } catch {
      // reported below
    }
  }
  p.add(
    INVALID,
    childPath(path, field),
    `${label}: remapIdentity ${field} ${JSON.stringify(v)} is not host[:port] or host[:port]/namespace`,
    {
      hint: 'e.g. "prefix": "mirror.example.com:8443/ocp", "signedPrefix": "quay.io/openshift-release-dev"',
    },
  );
  return undefined;
}

function unknownFields(
  p: Problems<string>,
  raw: Record<string, unknown>,
  path: string,
  known: readonly string[],
  what: string,
): void {
  for (const key of Object.keys(raw)) {
    if (known.includes(key)) continue;
    p.add(INVALID, childPath(path, key), `${what} has no field "${key}"`, {
      hint: didYouMean(key, known) ?? `its fields are ${known.join(', ')}`,
      part: 'key',
    });
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
