/**
 * The names a site gives Kubernetes objects (the hosted cluster, its namespace, its hosts) and the
 * release it installs, checked as the API server and the release lookup will check them. Each
 * check says why a value is refused, so the site loader and the command-line overrides word their
 * problems the same way.
 */
import { parseReference } from '../../mirror/index.js';

/** An RFC 1123 label: a namespace, a HostedCluster name, an infra ID. */
export const DNS1123_LABEL = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/** Why `name` is not a HostedCluster name, or undefined. */
export function clusterNameProblem(name: string): string | undefined {
  if (!DNS1123_LABEL.test(name) || name.length > 63)
    return `"${name}" is not an RFC 1123 label (lowercase letters, digits and inner hyphens, at most 63 characters)`;
  if (name === 'clusters') return '"clusters" cannot be a hosted cluster name (it is the default namespace)';
  return undefined;
}

/** Why `ns` is not a namespace name, or undefined. */
export function namespaceProblem(ns: string): string | undefined {
  return DNS1123_LABEL.test(ns) && ns.length <= 63
    ? undefined
    : `"${ns}" is not a namespace name (lowercase letters, digits and inner hyphens, at most 63 characters)`;
}

/** Whether `name` can name a BareMetalHost and its node: a lowercase RFC 1123 name. */
export function isHostResourceName(name: string): boolean {
  return DNS1123_SUBDOMAIN.test(name) && name.length <= 240;
}

/** Why `ref` is not a release reference by tag or digest, or undefined. */
export function releaseProblem(ref: string): string | undefined {
  try {
    parseReference(ref);
  } catch (e) {
    return (e as Error).message;
  }
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  if (!ref.includes('@') && !last.includes(':')) return `"${ref}" has neither a tag nor a digest`;
  if (!/[.:[]|^localhost$/.test(ref.split('/')[0]!))
    return `"${ref}" does not name a registry (write the mirror's host first)`;
  return undefined;
}
