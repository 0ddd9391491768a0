/**
 * The release signature ConfigMap, as oc-mirror v2 writes it (`signature-configmap.yaml` and
 * `.json` in cluster-resources/): the cluster version operator reads every ConfigMap in
 * `openshift-config-managed` labelled `release.openshift.io/verification-signatures`, each key
 * `sha256-<hex>-<n>` one signature of that release digest.
 */
export const SIGNATURE_CONFIGMAP_NAME = 'mirrored-release-signatures';
export const SIGNATURE_CONFIGMAP_NAMESPACE = 'openshift-config-managed';
export const SIGNATURE_CONFIGMAP_LABEL = 'release.openshift.io/verification-signatures';

export interface SignatureConfigMap {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  binaryData: Record<string, string>;
}

/** The ConfigMap for these releases' signatures (base64 each), numbered from 1 per release. */
export function signatureConfigMap(releases: { digest: string; signatures: string[] }[]): SignatureConfigMap {
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
