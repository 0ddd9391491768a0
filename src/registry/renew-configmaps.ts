/**
 * The hub's trust ConfigMaps for the bastion registry, re-emitted by `registry renew`: only the two
 * that carry the registry's CA and need no mirror mapping, `openshift-config/registry-config` (the
 * registry's `host..port` key) and `<hosted cluster namespace>/user-ca-bundle` (`ca-bundle.crt`);
 * and `multicluster-engine/custom-registries` when the hub has it (its `ca-bundle.crt` changed, its
 * `registries.conf` kept as the hub holds it). With a hub (--kubeconfig), each object is first read
 * and only this registry's part changed: other registries' keys and other CAs in the bundles stay.
 * Written as YAML files under --output, then applied (server-side apply) when a hub is given.
 */
import { join } from 'node:path';
import { buildTrustObjects, registryConfigKey } from '../certs/index.js';
import { applyHubObjects, readHubObject } from '../cluster/index.js';
import { writeFilesAtomic } from '../util/fs.js';
import { toYaml } from '../util/yaml.js';
import { pemBlocks } from './probe.js';

export interface TrustConfigMapsInput {
  /** `host:port` of the registry (the registry-config key). */
  address: string;
  /** Every CA clients must trust for it, the one that signs the served certificate first. */
  cas: string[];
  hostedClusterNamespace: string;
  /** Directory for the YAML files. */
  output: string;
  kubeconfig?: string;
}

export interface EmittedConfigMaps {
  /** The files written. */
  files: string[];
  /** `ConfigMap ns/name created|configured|unchanged`, when applied to a hub. */
  applied: string[];
}

/** A type, not an interface: it must fit the Kubernetes client's object (which has an index signature). */
type ConfigMapObject = {
  apiVersion: 'v1';
  kind: 'ConfigMap';
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  data: Record<string, string>;
};

/** `ours` first, then the certificates of `live` that are not among them. */
function mergeBundle(ours: string[], live: string | undefined): string {
  const have = new Set(ours.map((p) => p.trim()));
  const rest = pemBlocks(live ?? '').filter((p) => !have.has(p.trim()));
  return [...ours, ...rest].join('');
}

/** The live ConfigMap's data, or undefined when the hub has no such object (404). */
async function liveData(kubeconfig: string, o: ConfigMapObject): Promise<Record<string, string> | undefined> {
  const live = await readHubObject(
    { kubeconfig },
    { apiVersion: 'v1', kind: 'ConfigMap', namespace: o.metadata.namespace, name: o.metadata.name },
  );
  return live ? (live.data ?? {}) : undefined;
}

/** The objects to write and apply: this registry's part set, the hub's other parts kept. */
async function trustObjects(
  i: TrustConfigMapsInput,
): Promise<{ objects: ConfigMapObject[]; apply: ConfigMapObject[] }> {
  const key = registryConfigKey(i.address, `the registry ${i.address}`);
  const bundle = i.cas.join('');
  const built = buildTrustObjects({
    registryConfigData: { [key]: bundle },
    caBundle: bundle,
    mappings: [],
    hostedClusterNamespace: i.hostedClusterNamespace,
  });
  const registryConfig: ConfigMapObject = { ...built.registryConfig };
  const userCaBundle: ConfigMapObject = { ...built.userCaBundle };
  if (!i.kubeconfig) return { objects: [registryConfig, userCaBundle], apply: [] };
  const rc = await liveData(i.kubeconfig, registryConfig);
  const rcOut = { ...registryConfig, data: { ...rc, [key]: bundle } };
  const ub = await liveData(i.kubeconfig, userCaBundle);
  const ubOut = {
    ...userCaBundle,
    data: { ...ub, 'ca-bundle.crt': mergeBundle(i.cas, ub?.['ca-bundle.crt']) },
  };
  const custom: ConfigMapObject = { ...built.customRegistries };
  const cr = await liveData(i.kubeconfig, custom);
  // Without the hub's own registries.conf it cannot be written whole: left out when the hub has none.
  const crOut = cr
    ? { ...custom, data: { ...cr, 'ca-bundle.crt': mergeBundle(i.cas, cr['ca-bundle.crt']) } }
    : undefined;
  // user-ca-bundle lives in the hosted clusters' namespace: applied only where the hub has it already.
  return {
    objects: [rcOut, ubOut, ...(crOut ? [crOut] : [])],
    apply: [rcOut, ...(ub ? [ubOut] : []), ...(crOut ? [crOut] : [])],
  };
}

/** Write the trust ConfigMaps under `output` and, with a kubeconfig, apply them to the hub. */
export async function emitTrustConfigMaps(i: TrustConfigMapsInput): Promise<EmittedConfigMaps> {
  const { objects, apply } = await trustObjects(i);
  const files = objects.map((o) => ({ path: join(i.output, `${o.metadata.name}.yaml`), data: toYaml(o) }));
  await writeFilesAtomic(files, { force: true });
  const applied: string[] = [];
  if (i.kubeconfig) {
    const results = await applyHubObjects({ kubeconfig: i.kubeconfig }, apply);
    for (const r of results)
      applied.push(`${r.object} ${r.created ? 'created' : r.changed ? 'configured' : 'unchanged'}`);
  }
  return { files: files.map((f) => f.path), applied };
}

/** The objects' names, for --dry-run. */
export function trustConfigMapNames(namespace: string, withHub: boolean): string[] {
  return [
    'openshift-config/registry-config',
    `${namespace}/user-ca-bundle`,
    ...(withHub ? ['multicluster-engine/custom-registries (when the hub has it)'] : []),
  ];
}
