import { usageError } from '../util/errors.js';
import { MirrorError } from './errors.js';
import { isDigest, type Digest } from './digest.js';

/**
 * Image references exactly as containers/image (distribution/reference) parses them:
 * `[host[:port]/]path[:tag][@digest]`, with docker.io normalization (`busybox` →
 * `docker.io/library/busybox`), bracketed IPv6 hosts (`[::1]:5000/repo`), and lowercase paths.
 */
export interface ImageReference {
  /** Registry host as used on the wire: `quay.io`, `127.0.0.1:5000`, `[::1]:5000`, `docker.io`. */
  registry: string;
  /** Repository path inside the registry: `library/busybox`, `openshift/release`. */
  repository: string;
  tag?: string;
  digest?: Digest;
}

const DEFAULT_REGISTRY = 'docker.io';
const LEGACY_DEFAULT_REGISTRY = 'index.docker.io';

const pathComponent = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const PATH_RE = new RegExp(`^${pathComponent}(?:/${pathComponent})*$`);
const TAG_RE = /^[\w][\w.-]{0,127}$/;
/** A bare 64-hex name is refused, as distribution/reference does (it would be read as an image ID). */
const IDENTIFIER_RE = /^[a-f0-9]{64}$/;
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const HOST_RE = new RegExp(
  `^(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?$`,
);
const MAX_NAME = 255;

function bad(input: string, why: string): never {
  throw usageError(MirrorError.REF_INVALID, `invalid image reference "${input}": ${why}`, {
    hint: 'write it as [host[:port]/]path[:tag][@sha256:<64 hex>], e.g. quay.io/org/app:v1 or [fd00::1]:5000/app@sha256:…',
  });
}

/** Check a digest string: sha256, sha384 or sha512 with exactly that many lowercase hex characters. */
function isValidDigest(d: string): d is Digest {
  return isDigest(d);
}

/** A repository path as distribution's reference grammar allows it (no `..`, no empty component). */
export function isValidRepository(r: string): boolean {
  return r.length <= MAX_NAME && PATH_RE.test(r);
}

export function isValidTag(t: string): boolean {
  return TAG_RE.test(t);
}

/** Parse a reference the way `podman pull`/`skopeo` do (without the transport prefix). */
export function parseReference(input: string): ImageReference {
  const s = input.trim();
  if (s === '') bad(input, 'it is empty');
  if (IDENTIFIER_RE.test(s)) bad(input, 'a repository name cannot be a 64-character hexadecimal string');
  let rest = s;
  let digest: Digest | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    const d = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!isValidDigest(d)) bad(input, `"${d}" is not a valid digest`);
    digest = d;
  }
  // A tag is after the last ':' that follows the last '/' (so host:port is not a tag).
  let tag: string | undefined;
  const lastSlash = rest.lastIndexOf('/');
  const lastColon = rest.lastIndexOf(':');
  if (lastColon > lastSlash && !rest.slice(lastSlash + 1).startsWith('[')) {
    tag = rest.slice(lastColon + 1);
    rest = rest.slice(0, lastColon);
    if (!isValidTag(tag)) bad(input, `"${tag}" is not a valid tag`);
  }
  let registry = DEFAULT_REGISTRY;
  let repository = rest;
  const firstSlash = rest.indexOf('/');
  if (firstSlash >= 0) {
    const first = rest.slice(0, firstSlash);
    if (/[.:[]/.test(first) || first === 'localhost' || first !== first.toLowerCase()) {
      registry = first;
      repository = rest.slice(firstSlash + 1);
    }
  }
  if (!HOST_RE.test(registry)) bad(input, `"${registry}" is not a valid registry host`);
  if (registry.startsWith('[')) {
    const inner = registry.slice(1, registry.indexOf(']'));
    if (!inner.includes(':')) bad(input, `"${registry}" has brackets but no IPv6 address`);
  }
  if (registry === LEGACY_DEFAULT_REGISTRY) registry = DEFAULT_REGISTRY;
  if (repository === '') bad(input, 'the repository path is empty');
  if (repository !== repository.toLowerCase()) bad(input, 'repository names must be lowercase');
  if (!PATH_RE.test(repository)) bad(input, `"${repository}" is not a valid repository path`);
  if (registry === DEFAULT_REGISTRY && !repository.includes('/')) repository = `library/${repository}`;
  if (registry.length + 1 + repository.length > MAX_NAME)
    bad(input, `the name is longer than ${MAX_NAME} characters`);
  if (!tag && !digest) tag = 'latest';
  return { registry, repository, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

/** `registry/repository[:tag][@digest]`, fully qualified. */
export function formatReference(r: ImageReference): string {
  return `${r.registry}/${r.repository}${r.tag ? `:${r.tag}` : ''}${r.digest ? `@${r.digest}` : ''}`;
}

/** The repository as a person names it: `registry/repository`. */
export function repositoryName(r: Pick<ImageReference, 'registry' | 'repository'>): string {
  return `${r.registry}/${r.repository}`;
}

/** Where a list we act on may reach: a registry and the repository prefix below it ('' for all of it). */
export interface ReferenceScope {
  registry: string;
  prefix: string;
}

/** Whether `repository` lies below `prefix` (the prefix itself is a namespace, not an image). */
function isWithinPrefix(repository: string, prefix: string): boolean {
  const p = prefix.replace(/^\/+|\/+$/g, '');
  return p === '' || repository.startsWith(`${p}/`);
}

/**
 * A `docker://registry/repository@digest` from a list we act on (a delete list), made canonical
 * before it is compared: parsed as containers/image parses it (so a dot segment, a percent-encoded
 * separator or an upper-case letter is no repository), pinned by digest, then checked to lie in
 * `scope` (the same registry, below the prefix). REF_OUTSIDE_SCOPE or REF_INVALID names `where`.
 * The one check for every such item: where the list is read and again just before acting.
 */
export function referenceInScope(raw: unknown, scope: ReferenceScope, where: string): ImageReference {
  const shown = JSON.stringify(typeof raw === 'string' && raw.length > 160 ? `${raw.slice(0, 160)}…` : raw);
  const refuse = (why: string, code: string = MirrorError.REF_INVALID): never => {
    throw usageError(code, `${where} ${shown} ${why}`, {
      hint: `each item names one manifest below the destination: docker://${scope.registry}/${scope.prefix ? `${scope.prefix}/` : ''}<repository>@sha256:<64 hex>; regenerate the list with --generate`,
    });
  };
  if (typeof raw !== 'string' || !raw.startsWith('docker://'))
    return refuse('is not docker://<registry>/<repository>@sha256:…');
  let ref: ImageReference;
  try {
    ref = parseReference(raw.slice('docker://'.length));
  } catch (e) {
    return refuse(
      `is not a canonical reference: ${(e as Error).message.replace(/^invalid image reference "[^"]*": /, '')}`,
    );
  }
  if (!ref.digest || ref.tag) return refuse('is not pinned by digest alone (repository@sha256:…)');
  if (formatReference(ref) !== raw.slice('docker://'.length))
    return refuse(`is not canonical: it means ${formatReference(ref)}`);
  if (ref.registry.toLowerCase() !== scope.registry.toLowerCase())
    return refuse(
      `is at ${ref.registry}, not at the destination ${scope.registry}`,
      MirrorError.REF_OUTSIDE_SCOPE,
    );
  if (!isWithinPrefix(ref.repository, scope.prefix))
    return refuse(`is outside the destination prefix ${scope.prefix}/`, MirrorError.REF_OUTSIDE_SCOPE);
  return ref;
}

/** Where a transfer reads or writes: a registry, an OCI layout directory, or an archive directory. */
export type TransportReference =
  | { transport: 'docker'; reference: ImageReference }
  | { transport: 'docker-prefix'; registry: string; prefix: string }
  | { transport: 'oci'; path: string; refName?: string }
  | { transport: 'file'; path: string };

/**
 * Parse a source or destination with its transport, as oc-mirror and skopeo write them:
 * `docker://host[:port][/prefix]` (a destination registry with an optional path prefix),
 * `docker://host/repo:tag` (an image), `oci:/path[:ref]`, `file://dir`. A bare reference is docker.
 */
export function parseTransport(input: string, kind: 'image' | 'destination'): TransportReference {
  if (input.startsWith('file://')) {
    const path = input.slice('file://'.length);
    if (path === '') throw usageError(MirrorError.LOCATION_INVALID, `"${input}" names no directory`);
    return { transport: 'file', path };
  }
  if (input.startsWith('oci:')) {
    let rest = input.slice(4);
    if (rest.startsWith('//')) rest = rest.slice(2);
    const colon = rest.lastIndexOf(':');
    if (colon > 0 && !rest.slice(colon).includes('/')) {
      return { transport: 'oci', path: rest.slice(0, colon), refName: rest.slice(colon + 1) };
    }
    if (rest === '') throw usageError(MirrorError.LOCATION_INVALID, `"${input}" names no directory`);
    return { transport: 'oci', path: rest };
  }
  const body = input.startsWith('docker://') ? input.slice('docker://'.length) : input;
  if (kind === 'destination') {
    const trimmed = body.replace(/\/+$/, '');
    const slash = trimmed.indexOf('/');
    const registry = slash < 0 ? trimmed : trimmed.slice(0, slash);
    const prefix = slash < 0 ? '' : trimmed.slice(slash + 1);
    if (!HOST_RE.test(registry) || !/[.:[]|^localhost$/.test(registry)) {
      throw usageError(MirrorError.LOCATION_INVALID, `"${input}" does not start with a registry host`, {
        hint: 'give the destination as docker://host[:port][/prefix], e.g. docker://mirror.example.com:8443/ocp',
      });
    }
    if (prefix !== '' && !PATH_RE.test(prefix)) {
      throw usageError(MirrorError.LOCATION_INVALID, `"${prefix}" is not a valid repository path prefix`, {
        hint: 'use lowercase path components separated by /',
      });
    }
    return { transport: 'docker-prefix', registry, prefix };
  }
  return { transport: 'docker', reference: parseReference(body) };
}
