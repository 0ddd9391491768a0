/**
 * The shape of a Kubernetes object as airgap handles it, rendered or read back: the renderers
 * (pure, no client) and the Kube client (src/cluster/kube.ts) share it.
 */

/** Any object, as the API returns it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    creationTimestamp?: string;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    finalizers?: string[];
    [key: string]: unknown;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
  [key: string]: unknown;
}

/** Which object: type, namespace (for namespaced types) and name. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
}

/** `HostedCluster clusters/example` — how errors and progress name an object. */
export function describeRef(ref: Pick<ObjectRef, 'kind' | 'namespace' | 'name'>): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

export function refOf(obj: Pick<KubeObject, 'apiVersion' | 'kind' | 'metadata'>): ObjectRef {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    ...(obj.metadata.namespace ? { namespace: obj.metadata.namespace } : {}),
  };
}
