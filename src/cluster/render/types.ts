/**
 * What the renderers produce: Kubernetes objects in apply order, each marked sensitive when it holds
 * a secret (so `--render` can leave it out unless `--render-sensitive`, as hcp does), and with the
 * install step it belongs to (the lead waits between steps).
 */
import { toYamlDocuments } from '../../util/yaml.js';

export type { KubeObject } from '../objects.js';
import { describeRef, refOf, type KubeObject } from '../objects.js';

/**
 * The install steps, in order.
 * - Hub: `trust` (registry CA, Image patch), `mirror` (IDMS/ITMS: the nodes restart their kubelet;
 *   wait for them to be Ready), `catalogs`, `mce` (MultiClusterEngine), `mce-config` (objects in
 *   namespaces MCE creates: install flags in local-cluster, custom-registries), `agent` (AgentServiceConfig).
 * - Cluster: `namespaces`, `cluster` (trust bundle, secrets, role, HostedCluster), `nodepool`,
 *   `infraenv` (NMStateConfigs, then the InfraEnv), `hosts` (BMC secrets, BareMetalHosts; after the
 *   InfraEnv's ISO exists).
 */
export type RenderStep =
  | 'trust'
  | 'mirror'
  | 'catalogs'
  | 'mce'
  | 'mce-config'
  | 'agent'
  | 'namespaces'
  | 'cluster'
  | 'nodepool'
  | 'infraenv'
  | 'hosts';

export interface RenderedObject {
  object: KubeObject;
  /** Holds a secret (a Secret): left out of renders unless asked for. */
  sensitive: boolean;
  step: RenderStep;
}

/** A typed object (a ConfigMap of certs/configmaps.ts, …) as a KubeObject. */
export function kube({
  apiVersion,
  kind,
  metadata,
  ...rest
}: {
  apiVersion: string;
  kind: string;
  metadata: KubeObject['metadata'];
}): KubeObject {
  return { apiVersion, kind, metadata, ...rest };
}

/** `Kind namespace/name`, for messages and tests. */
export function describeObject(o: KubeObject): string {
  return describeRef(refOf(o));
}

/**
 * One multi-document YAML stream (`---` before each document), as `hcp create cluster --render`
 * prints it. Sensitive objects (Secrets) are left out unless `sensitive: true`.
 */
export function renderedToYaml(items: readonly RenderedObject[], opts: { sensitive?: boolean } = {}): string {
  return toYamlDocuments(items.filter((i) => opts.sensitive === true || !i.sensitive).map((i) => i.object));
}
