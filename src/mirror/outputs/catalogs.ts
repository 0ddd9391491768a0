import { AirgapError, usageError } from '../../util/errors.js';
import { formatReference, type ImageReference } from '../reference.js';
import { annotations, type CatalogSourceTemplate, type OutputOptions } from './types.js';
import { MirrorError } from '../errors.js';

/** oc-mirror v2 keeps this many characters of a tag (or hex characters of a digest) in catalog names. */
const SUFFIX_LENGTH = 12;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const RFC1123_NAME = /^[a-zA-Z0-9][-a-zA-Z0-9]*[a-zA-Z0-9]$/;

/** Map one character to the RFC 1035 alphabet: lowercase letters and digits stay, `-` stays, anything else becomes `-`. */
function toRfc1035(ch: string): string {
  const c = ch.toLowerCase();
  return /^[a-z0-9-]$/.test(c) ? c : '-';
}

/**
 * The suffix of a catalog's resource names: the first 12 characters of the tag mapped to RFC 1035
 * characters, or the first 12 hex characters of the digest for a digest-only reference, or `0`.
 */
export function catalogSuffix(ref: ImageReference): string {
  let suffix: string;
  if (!ref.tag && ref.digest) {
    suffix = ref.digest.slice(ref.digest.indexOf(':') + 1).slice(0, SUFFIX_LENGTH);
  } else {
    suffix = [...(ref.tag ?? '').slice(0, SUFFIX_LENGTH)].map(toRfc1035).join('');
  }
  return suffix === '' ? '0' : suffix;
}

/**
 * `<prefix>-<last path component>-<suffix>` with dots turned into `-`, as oc-mirror v2 names
 * CatalogSources (`cs`) and ClusterCatalogs (`cc`). Fails if the result is not a valid object name.
 */
export function catalogResourceName(prefix: 'cs' | 'cc', ref: ImageReference): string {
  const last = ref.repository.split('/').pop() ?? ref.repository;
  const name = `${prefix}-${last}-${catalogSuffix(ref)}`.replaceAll('.', '-');
  const valid = name.length <= 63 && (DNS1035_LABEL.test(name) || RFC1123_NAME.test(name));
  if (!valid) {
    throw new AirgapError(
      MirrorError.CLUSTER_RESOURCE_NAME,
      `cannot name the ${prefix === 'cs' ? 'CatalogSource' : 'ClusterCatalog'} of ${formatReference(ref)}: "${name}" is not a valid Kubernetes name`,
      {
        hint: 'names are at most 63 lowercase letters, digits and -; give the catalog a targetRepo or targetTag that fits',
      },
    );
  }
  return name;
}

/** A CatalogSource (OLM v0) as oc-mirror v2 writes it. */
export interface CatalogSourceObject {
  apiVersion: 'operators.coreos.com/v1alpha1';
  kind: 'CatalogSource';
  metadata: { annotations: Record<string, string>; name: string; namespace: string; [k: string]: unknown };
  spec: { image: string; sourceType: 'grpc'; [k: string]: unknown };
  [k: string]: unknown;
}

/** A ClusterCatalog (OLM v1) as oc-mirror v2 writes it. */
export interface ClusterCatalogObject {
  apiVersion: 'olm.operatorframework.io/v1';
  kind: 'ClusterCatalog';
  metadata: { annotations: Record<string, string>; name: string };
  spec: { source: { image: { ref: string }; type: 'Image' } };
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function badTemplate(t: CatalogSourceTemplate, why: string): never {
  throw usageError(MirrorError.CATALOG_TEMPLATE_INVALID, `targetCatalogSourceTemplate ${why}`, {
    ...(t.where ? { where: t.where } : {}),
    hint: 'use a CatalogSource of apiVersion operators.coreos.com/v1alpha1 with sourceType grpc and no configMap',
  });
}

/** Start from a template: check it as oc-mirror v2 does, then set name, namespace, sourceType and image. */
function fromTemplate(t: CatalogSourceTemplate, name: string, image: string, ann: Record<string, string>) {
  const o = t.object;
  if (!isMapping(o)) badTemplate(t, 'is not a YAML mapping');
  if (o.apiVersion !== 'operators.coreos.com/v1alpha1') {
    badTemplate(t, `has apiVersion ${JSON.stringify(o.apiVersion)}, not operators.coreos.com/v1alpha1`);
  }
  if (o.kind !== 'CatalogSource') badTemplate(t, `has kind ${JSON.stringify(o.kind)}, not CatalogSource`);
  if (o.metadata !== undefined && !isMapping(o.metadata))
    badTemplate(t, 'has a metadata that is not a mapping');
  if (o.spec !== undefined && !isMapping(o.spec)) badTemplate(t, 'has a spec that is not a mapping');
  const spec = structuredClone((o.spec ?? {}) as Record<string, unknown>);
  if (spec.sourceType !== undefined && spec.sourceType !== '' && spec.sourceType !== 'grpc') {
    badTemplate(t, `has sourceType ${JSON.stringify(spec.sourceType)}; only grpc is accepted`);
  }
  if (spec.configMap !== undefined && spec.configMap !== '') badTemplate(t, 'must not name a configMap');
  const metadata = structuredClone((o.metadata ?? {}) as Record<string, unknown>);
  delete metadata.creationTimestamp;
  const templateAnn = isMapping(metadata.annotations) ? (metadata.annotations as Record<string, string>) : {};
  const { status: _status, ...rest } = structuredClone(o);
  return {
    ...rest,
    metadata: {
      ...metadata,
      annotations: { ...templateAnn, ...ann },
      name,
      namespace: 'openshift-marketplace',
    },
    spec: { ...spec, image, sourceType: 'grpc' },
  } as CatalogSourceObject;
}

/**
 * The CatalogSource for a mirrored catalog: `cs-<repo>-<suffix>` in `openshift-marketplace`,
 * `sourceType: grpc`, the mirrored reference as `spec.image`; from a template when one is given.
 */
export function buildCatalogSource(
  destination: ImageReference,
  opts: OutputOptions = {},
  template?: CatalogSourceTemplate,
): CatalogSourceObject {
  const name = catalogResourceName('cs', destination);
  const image = formatReference(destination);
  if (template) return fromTemplate(template, name, image, annotations(opts));
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'CatalogSource',
    metadata: { annotations: annotations(opts), name, namespace: 'openshift-marketplace' },
    spec: { image, sourceType: 'grpc' },
  };
}

/** The ClusterCatalog for a mirrored catalog: `cc-<repo>-<suffix>`, cluster-scoped, image source. */
export function buildClusterCatalog(
  destination: ImageReference,
  opts: OutputOptions = {},
): ClusterCatalogObject {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { annotations: annotations(opts), name: catalogResourceName('cc', destination) },
    spec: { source: { image: { ref: formatReference(destination) }, type: 'Image' } },
  };
}
