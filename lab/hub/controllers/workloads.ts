/**
 * Deployments, StatefulSets and their Pods as the simulated operators "run" them: created Available
 * with Running pods, so `oc get pods -n <ns>` and `oc rollout status` see what they would on a hub.
 */
import type { HubStore, KubeObject } from '../types.js';
import { L, T, create, get, list, remove, shortHash } from './util.js';

export interface Workload {
  kind: 'Deployment' | 'StatefulSet';
  name: string;
  namespace: string;
  replicas?: number;
  labels?: Record<string, string>;
  image?: string;
  /** Environment of its container. */
  env?: { name: string; value: string }[];
  /** Who runs it (label `airgap.lab/simulated-by`), so cleanup removes only its own. */
  owner: string;
}

/**
 * The pod names of a workload: StatefulSet pods keep theirs; a Deployment's replacement pods get
 * new ones (`generation` counts the replacements), as a ReplicaSet names them.
 */
function podNames(w: Workload, generation = 0): string[] {
  const n = w.replicas ?? 1;
  if (w.kind === 'StatefulSet') return Array.from({ length: n }, (_, i) => `${w.name}-${i}`);
  const rs = shortHash(`${w.namespace}/${w.name}`, 10);
  return Array.from(
    { length: n },
    (_, i) => `${w.name}-${rs}-${shortHash(`${w.name}${i}/${generation}`, 5)}`,
  );
}

/**
 * Create the workload Available with Running pods, if it does not exist yet; for one that exists,
 * replace pods that were deleted (`oc delete pod` restarts an operator), as its controller would.
 */
export function ensureWorkload(store: HubStore, w: Workload, now: string): KubeObject {
  const ref = w.kind === 'Deployment' ? T.deployment : T.statefulSet;
  const existing = get(store, ref, w.name, w.namespace);
  if (existing) {
    if (existing.metadata.labels?.[L.createdBy] === w.owner) replacePods(store, w, now);
    return existing;
  }
  const replicas = w.replicas ?? 1;
  const labels = { app: w.name, ...(w.labels ?? {}) };
  const image = imageOf(w);
  const template = {
    metadata: { labels },
    spec: { containers: [{ name: w.name, image, ...(w.env ? { env: w.env } : {}) }] },
  };
  const spec: Record<string, unknown> =
    w.kind === 'Deployment'
      ? { replicas, selector: { matchLabels: labels }, template }
      : { replicas, selector: { matchLabels: labels }, serviceName: w.name, template };
  const status: Record<string, unknown> =
    w.kind === 'Deployment'
      ? {
          observedGeneration: 1,
          replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
          updatedReplicas: replicas,
          conditions: [
            {
              type: 'Available',
              status: 'True',
              reason: 'MinimumReplicasAvailable',
              message: 'Deployment has minimum availability.',
              lastUpdateTime: now,
              lastTransitionTime: now,
            },
            {
              type: 'Progressing',
              status: 'True',
              reason: 'NewReplicaSetAvailable',
              message: `ReplicaSet "${w.name}-${shortHash(`${w.namespace}/${w.name}`, 10)}" has successfully progressed.`,
              lastUpdateTime: now,
              lastTransitionTime: now,
            },
          ],
        }
      : {
          observedGeneration: 1,
          replicas,
          readyReplicas: replicas,
          availableReplicas: replicas,
          currentReplicas: replicas,
          updatedReplicas: replicas,
        };
  const created = create(store, {
    apiVersion: ref.apiVersion,
    kind: ref.kind,
    metadata: { name: w.name, namespace: w.namespace, labels: { ...labels, [L.createdBy]: w.owner } },
    spec,
    status,
  });
  createPods(store, w, podNames(w), now);
  return created;
}

function imageOf(w: Workload): string {
  return w.image ?? `registry.redhat.io/multicluster-engine/${w.name}-rhel9@sha256:${shortHash(w.name, 64)}`;
}

/** Running pods of `w` under the given names (those that exist are left alone). */
function createPods(store: HubStore, w: Workload, names: string[], now: string): void {
  const labels = { app: w.name, ...(w.labels ?? {}) };
  const image = imageOf(w);
  const nodes = list(store, T.node);
  names.forEach((pod, i) => {
    if (get(store, T.pod, pod, w.namespace)) return;
    create(store, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: pod, namespace: w.namespace, labels: { ...labels, [L.createdBy]: w.owner } },
      spec: {
        containers: [{ name: w.name, image }],
        ...(nodes.length > 0 ? { nodeName: nodes[i % nodes.length].metadata.name } : {}),
      },
      status: {
        phase: 'Running',
        startTime: now,
        conditions: [
          { type: 'Initialized', status: 'True', lastTransitionTime: now },
          { type: 'Ready', status: 'True', lastTransitionTime: now },
          { type: 'ContainersReady', status: 'True', lastTransitionTime: now },
          { type: 'PodScheduled', status: 'True', lastTransitionTime: now },
        ],
        containerStatuses: [
          {
            name: w.name,
            image,
            imageID: image,
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          },
        ],
      },
    });
  });
}

/** Bring a workload's pods back to its replicas after some were deleted. */
function replacePods(store: HubStore, w: Workload, now: string): void {
  const pods = list(store, T.pod, { namespace: w.namespace, labelSelector: `app=${w.name}` });
  const missing = (w.replicas ?? 1) - pods.length;
  if (missing <= 0) return;
  if (w.kind === 'StatefulSet') return createPods(store, w, podNames(w), now);
  const taken = new Set(pods.map((p) => p.metadata.name));
  const names: string[] = [];
  for (let g = 1; names.length < missing; g++)
    for (const name of podNames(w, g)) if (!taken.has(name) && names.length < missing) names.push(name);
  createPods(store, w, names, now);
}

/** Remove a workload and its pods (only the ones this simulator created). */
export function removeWorkload(store: HubStore, w: Pick<Workload, 'kind' | 'name' | 'namespace'>): void {
  const ref = w.kind === 'Deployment' ? T.deployment : T.statefulSet;
  remove(store, ref, w.name, w.namespace);
  for (const pod of list(store, T.pod, { namespace: w.namespace, labelSelector: `app=${w.name}` })) {
    if (pod.metadata.labels?.[L.createdBy]) remove(store, T.pod, pod.metadata.name, w.namespace);
  }
}

/** Is the workload there with all replicas available? */
export function workloadAvailable(
  store: HubStore,
  kind: 'Deployment' | 'StatefulSet',
  name: string,
  ns: string,
): boolean {
  const w = get(store, kind === 'Deployment' ? T.deployment : T.statefulSet, name, ns);
  if (!w) return false;
  const want = typeof w.spec?.replicas === 'number' ? w.spec.replicas : 1;
  const have = w.status?.availableReplicas ?? w.status?.readyReplicas;
  return typeof have === 'number' && have >= want && want > 0;
}
