/**
 * The release signature ConfigMap, as oc-mirror v2 writes it (`signature-configmap.yaml` and
 * `.json` in cluster-resources/): the cluster version operator reads every ConfigMap in
 * `openshift-config-managed` labelled `release.openshift.io/verification-signatures`, and takes each
 * `binaryData` value whose key starts with `sha256-<hex>` as one signature of that release digest
 * (openshift/library-go pkg/verify/verify.go). Written here, and read back for `airgap install hub`.
 */
import { isYamlLimitError, parseYaml } from '../../config/yaml-load.js';
import { usageError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';

/** oc-mirror v2's names (internal/pkg/clusterresources/const.go). */
const SIGNATURE_CONFIGMAP_NAME = 'mirrored-release-signatures';
const SIGNATURE_CONFIGMAP_NAMESPACE = 'openshift-config-managed';
const SIGNATURE_CONFIGMAP_LABEL = 'release.openshift.io/verification-signatures';

export interface SignatureConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  binaryData: Record<string, string>;
}

/** The signatures of one release digest, base64 each (what the ConfigMap holds). */
export interface ReleaseSignatureSet {
  /** `sha256:<hex>`. */
  digest: string;
  signatures: string[];
}

/**
 * The ConfigMap for these releases' signatures. Keys are `sha256-<hex>-<n>` with n counting from 1
 * per release digest, as library-go's GetSignaturesAsConfigmap numbers them; oc-mirror v2 keeps one
 * signature per release and counts n across releases. The cluster version operator reads both alike
 * (any key with the digest's prefix), and numbering per digest keeps a release's keys the same
 * whatever else is mirrored with it.
 */
export function signatureConfigMap(releases: ReleaseSignatureSet[]): SignatureConfigMap {
  const binaryData: Record<string, string> = {};
  for (const r of releases) {
    r.signatures.forEach((sig, i) => {
      binaryData[`${r.digest.replace(':', '-')}-${i + 1}`] = sig;
    });
  }
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: SIGNATURE_CONFIGMAP_NAME,
      namespace: SIGNATURE_CONFIGMAP_NAMESPACE,
      labels: { [SIGNATURE_CONFIGMAP_LABEL]: '' },
    },
    binaryData,
  };
}

/** A `binaryData` key: `sha256-<hex>-<n>`. */
const SIGNATURE_KEY = /^sha256-([0-9a-f]{64})-([1-9][0-9]*)$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Read a signature ConfigMap back (YAML or JSON, as airgap or oc-mirror wrote it): the signatures of
 * each release digest, in key order (n) within a digest. Anything the cluster version operator would
 * not read (another namespace, no label, a key that is not `sha256-<hex>-<n>`, a value that is not
 * base64) is a usage error naming `where` and every problem found.
 */
export function parseSignatureConfigMap(text: string, where: string): ReleaseSignatureSet[] {
  const hint =
    'write it again with airgap mirror (cluster-resources/signature-configmap.yaml), or give the ConfigMap oc-mirror wrote';
  let doc: unknown;
  try {
    doc = parseYaml(text, { source: where, exitCode: 2, filename: where });
  } catch (e) {
    if (isYamlLimitError(e)) throw e;
    throw usageError(
      MirrorError.SIGNATURE_CONFIGMAP_INVALID,
      `${where} is not YAML or JSON: ${(e as Error).message.split('\n')[0]}`,
      { where, hint },
    );
  }
  const problems: string[] = [];
  const found = new Map<string, { n: number; signature: string }[]>();
  if (!isObject(doc)) problems.push('it is not one object');
  else {
    if (doc.apiVersion !== 'v1' || doc.kind !== 'ConfigMap')
      problems.push(`it is ${String(doc.apiVersion)} ${String(doc.kind)}, not a v1 ConfigMap`);
    const meta = isObject(doc.metadata) ? doc.metadata : {};
    if (meta.namespace !== SIGNATURE_CONFIGMAP_NAMESPACE)
      problems.push(
        `metadata.namespace is ${meta.namespace === undefined ? 'missing' : JSON.stringify(meta.namespace)}, not ${SIGNATURE_CONFIGMAP_NAMESPACE} (the only namespace the cluster version operator reads signatures from)`,
      );
    if (!isObject(meta.labels) || !(SIGNATURE_CONFIGMAP_LABEL in meta.labels))
      problems.push(
        `metadata.labels has no ${SIGNATURE_CONFIGMAP_LABEL} (the label the cluster version operator selects by)`,
      );
    const data = isObject(doc.binaryData) ? doc.binaryData : {};
    if (Object.keys(data).length === 0) problems.push('binaryData holds no signatures');
    for (const [key, value] of Object.entries(data)) {
      const m = SIGNATURE_KEY.exec(key);
      if (!m) problems.push(`binaryData key ${JSON.stringify(key)} is not sha256-<hex>-<n>`);
      const b64 = typeof value === 'string' ? value.replace(/\s+/g, '') : '';
      if (b64 === '' || !BASE64.test(b64)) problems.push(`binaryData.${key} is not base64`);
      else if (m) {
        const digest = `sha256:${m[1]}`;
        found.set(digest, [...(found.get(digest) ?? []), { n: Number(m[2]), signature: b64 }]);
      }
    }
  }
  if (problems.length > 0)
    throw usageError(
      MirrorError.SIGNATURE_CONFIGMAP_INVALID,
      `${where} is not a release signature ConfigMap: ${problems.join('; ')}`,
      { where, hint },
    );
  return [...found].map(([digest, sigs]) => ({
    digest,
    signatures: sigs.sort((a, b) => a.n - b.n).map((s) => s.signature),
  }));
}
