/**
 * The multicluster engine operator and the infrastructure operator, simulated:
 * - MultiClusterEngine `spec.overrides.components`: `hypershift` + `hypershift-local-hosting` (which
 *   needs `local-cluster`) → the HyperShift operator (Deployment `operator` in `hypershift`);
 *   `assisted-service` + AgentServiceConfig `agent` → Deployment `assisted-service` and StatefulSet
 *   `assisted-image-service` in `multicluster-engine`. Components count as enabled only when listed
 *   `enabled: true` (the simulated MCE starts with them off, so turning them on is observable).
 * - AgentServiceConfig conditions ReconcileCompleted / DeploymentsHealthy, with the real failure when
 *   `mirrorRegistryRef` names a ConfigMap that is missing or lacks `registries.conf`.
 * - The machine-config operator: a change to an ImageDigestMirrorSet, ImageTagMirrorSet or
 *   ImageContentSourcePolicy restarts the kubelet of each hub Node in turn (NotReady for a couple of
 *   steps, then Ready).
 */
import type { KubeObject, StoreEvent } from '../types.js';
import type { Ctx, Reconciler } from './context.js';
import {
  L,
  T,
  addFinalizer,
  arr,
  deepEqual,
  ensureNamespace,
  get,
  list,
  metaConditions,
  patch,
  patchStatus,
  rec,
  removeFinalizer,
  v1Conditions,
  type Cond,
} from './util.js';
import { ensureWorkload, removeWorkload, workloadAvailable } from './workloads.js';

export const MCE_NAMESPACE = 'multicluster-engine';
const HYPERSHIFT_NAMESPACE = 'hypershift';
export const MCE_VERSION = '2.7.0';
const OWNER = 'mce';
const ASC_FINALIZER = 'agentserviceconfig.agent-install.openshift.io/ai-deprovision';

/** Components the simulated MCE always runs (status.components). */
const BASE_COMPONENTS = [
  'cluster-manager',
  'hive-operator',
  'managedcluster-import-controller-v2',
  'ocm-controller',
  'ocm-proxyserver',
  'ocm-webhook',
  'console-mce-console',
];

/** Is a component listed with `enabled: true` in the MCE overrides? */
function componentEnabled(mce: KubeObject | undefined, name: string): boolean {
  const c = arr(rec(rec(mce?.spec).overrides).components).find((x) => rec(x).name === name);
  return rec(c).enabled === true;
}

function hypershiftWanted(mce: KubeObject | undefined): boolean {
  return (
    componentEnabled(mce, 'hypershift') &&
    componentEnabled(mce, 'hypershift-local-hosting') &&
    componentEnabled(mce, 'local-cluster')
  );
}

/** The HyperShift operator runs (HostedClusters and NodePools are reconciled only then). */
export function hypershiftOperatorReady(ctx: Ctx): boolean {
  return workloadAvailable(ctx.store, 'Deployment', 'operator', HYPERSHIFT_NAMESPACE);
}

/** assisted-service runs (InfraEnvs get images and Agents register only then). */
export function assistedServiceReady(ctx: Ctx): boolean {
  return (
    workloadAvailable(ctx.store, 'Deployment', 'assisted-service', MCE_NAMESPACE) &&
    workloadAvailable(ctx.store, 'StatefulSet', 'assisted-image-service', MCE_NAMESPACE)
  );
}

function theMce(ctx: Ctx): KubeObject | undefined {
  const all = list(ctx.store, T.mce);
  return all.find((m) => m.metadata.name === 'multiclusterengine') ?? all[0];
}

function componentStatus(name: string, now: string): Record<string, unknown> {
  return {
    name,
    kind: 'Deployment',
    type: 'Available',
    status: 'True',
    reason: 'MinimumReplicasAvailable',
    message: 'Deployment has minimum availability.',
    lastTransitionTime: now,
  };
}

export class MceController implements Reconciler {
  readonly name = 'mce';
  private readonly seenGeneration = new Map<string, number>();
  private readonly rolloutUntil = new Map<string, number>();
  private mirrorSetsChanged = false;
  private rollout: string[] = [];

  constructor(private readonly ctx: Ctx) {}

  onEvent(ev: StoreEvent): void {
    const k = ev.object.kind;
    if (k !== 'ImageDigestMirrorSet' && k !== 'ImageTagMirrorSet' && k !== 'ImageContentSourcePolicy') return;
    if (ev.type === 'MODIFIED' && deepEqual(ev.old?.spec, ev.object.spec)) return;
    this.mirrorSetsChanged = true;
  }

  reconcile(): void {
    const mce = theMce(this.ctx);
    this.reconcileMce(mce);
    this.reconcileHypershift(mce);
    this.reconcileAssisted(mce);
    this.reconcileNodes();
  }

  private reconcileMce(mce: KubeObject | undefined): void {
    if (!mce) return;
    const { ctx } = this;
    const now = ctx.now();
    const uid = mce.metadata.uid ?? mce.metadata.name;
    const gen = mce.metadata.generation ?? 1;
    const seen = this.seenGeneration.get(uid);
    if (seen !== gen) {
      this.seenGeneration.set(uid, gen);
      // A seeded MCE that already reports Available starts settled; any later spec change rolls out.
      const settled = seen === undefined && mce.status?.phase === 'Available';
      this.rolloutUntil.set(uid, settled ? 0 : Date.now() + 2 * ctx.options.stepMs);
    }
    const progressing = Date.now() < (this.rolloutUntil.get(uid) ?? 0);
    const names = [...BASE_COMPONENTS];
    if (hypershiftWanted(mce)) names.push('hypershift-addon-manager', 'hypershift-operator');
    if (componentEnabled(mce, 'assisted-service')) names.push('infrastructure-operator');
    if (componentEnabled(mce, 'local-cluster')) names.push('local-cluster');
    const old = new Map(arr(mce.status?.components).map((c) => [String(rec(c).name), rec(c)]));
    const components = names.map((n) => {
      const c = componentStatus(n, now);
      const prev = old.get(n);
      if (prev && typeof prev.lastTransitionTime === 'string') c.lastTransitionTime = prev.lastTransitionTime;
      return c;
    });
    const conds: Cond[] = progressing
      ? [
          {
            type: 'Progressing',
            status: 'True',
            reason: 'WaitingForResources',
            message: 'Applying component changes',
          },
          {
            type: 'Available',
            status: 'False',
            reason: 'ComponentsUnavailable',
            message: 'Waiting on components to roll out',
          },
        ]
      : [
          {
            type: 'Progressing',
            status: 'True',
            reason: 'DeploySuccessful',
            message: 'All components deployed',
          },
          {
            type: 'Available',
            status: 'True',
            reason: 'ComponentsAvailable',
            message: 'All components are available',
          },
        ];
    const conditions = metaConditions(mce.status?.conditions, conds, undefined, now).map((c) => {
      const { observedGeneration: _drop, ...rest } = c;
      return { ...rest, lastUpdateTime: rest.lastTransitionTime };
    });
    const status = {
      phase: progressing ? 'Progressing' : 'Available',
      currentVersion: MCE_VERSION,
      desiredVersion: MCE_VERSION,
      components,
      conditions,
    };
    patchStatus(ctx.store, mce, status);
  }

  private reconcileHypershift(mce: KubeObject | undefined): void {
    const { ctx } = this;
    const wanted = hypershiftWanted(mce) && mce?.status?.phase === 'Available';
    if (!wanted) {
      ctx.dwell.forget('mce/hypershift');
      if (
        get(ctx.store, T.deployment, 'operator', HYPERSHIFT_NAMESPACE)?.metadata.labels?.[L.createdBy] ===
        OWNER
      ) {
        removeWorkload(ctx.store, { kind: 'Deployment', name: 'operator', namespace: HYPERSHIFT_NAMESPACE });
      }
      return;
    }
    // Deployed once (after a step); afterwards ensureWorkload only replaces deleted pods.
    const deployed = !!get(ctx.store, T.deployment, 'operator', HYPERSHIFT_NAMESPACE);
    if (!deployed && ctx.dwell.steps('mce/hypershift', 'deploying') < 1) return;
    if (!deployed) ensureNamespace(ctx.store, HYPERSHIFT_NAMESPACE);
    ensureWorkload(
      ctx.store,
      {
        kind: 'Deployment',
        name: 'operator',
        namespace: HYPERSHIFT_NAMESPACE,
        replicas: 2,
        labels: {
          name: 'operator',
          app: 'operator',
          'hypershift.openshift.io/operator-component': 'operator',
        },
        image: `registry.redhat.io/multicluster-engine/hypershift-rhel9-operator@sha256:${'4'.repeat(64)}`,
        // Set by MCE: the CAPI agent provider image the operator deploys per hosted cluster.
        env: [
          {
            name: 'IMAGE_AGENT_CAPI_PROVIDER',
            value: `registry.redhat.io/multicluster-engine/cluster-api-provider-agent-rhel9@sha256:${'5'.repeat(64)}`,
          },
        ],
        owner: OWNER,
      },
      ctx.now(),
    );
  }

  private reconcileAssisted(mce: KubeObject | undefined): void {
    const { ctx } = this;
    const asc = get(ctx.store, T.agentServiceConfig, 'agent');
    for (const other of list(ctx.store, T.agentServiceConfig)) {
      if (other.metadata.name !== 'agent' && other.metadata.deletionTimestamp)
        removeFinalizer(ctx.store, other, ASC_FINALIZER);
    }
    const enabled = componentEnabled(mce, 'assisted-service') && mce?.status?.phase === 'Available';
    if (!enabled || !asc) {
      if (asc?.metadata.deletionTimestamp) this.tearDownAssisted(asc);
      if (!asc) this.tearDownAssisted(undefined);
      return;
    }
    if (asc.metadata.deletionTimestamp) {
      this.tearDownAssisted(asc);
      return;
    }
    const current = addFinalizer(ctx.store, asc, ASC_FINALIZER);
    const now = ctx.now();
    const mirrorError = this.mirrorRegistryError(current);
    if (mirrorError) {
      patchStatus(ctx.store, current, {
        conditions: v1Conditions(
          current.status?.conditions,
          [{ type: 'ReconcileCompleted', status: 'False', reason: 'ConfigFailure', message: mirrorError }],
          now,
        ),
      });
      return;
    }
    const deployed = assistedServiceReady(ctx);
    if (!deployed && ctx.dwell.steps('mce/assisted', 'deploying') >= 2) {
      ensureNamespace(ctx.store, MCE_NAMESPACE);
      ensureWorkload(
        ctx.store,
        { kind: 'Deployment', name: 'assisted-service', namespace: MCE_NAMESPACE, owner: OWNER },
        now,
      );
      ensureWorkload(
        ctx.store,
        { kind: 'StatefulSet', name: 'assisted-image-service', namespace: MCE_NAMESPACE, owner: OWNER },
        now,
      );
    }
    const healthy = assistedServiceReady(ctx);
    patchStatus(ctx.store, current, {
      conditions: v1Conditions(
        current.status?.conditions,
        [
          {
            type: 'ReconcileCompleted',
            status: 'True',
            reason: 'ReconcileSucceeded',
            message: 'AgentServiceConfig reconcile completed without error.',
          },
          healthy
            ? {
                type: 'DeploymentsHealthy',
                status: 'True',
                reason: 'DeploymentSucceeded',
                message: 'All the deployments managed by Infrastructure-operator are healthy.',
              }
            : {
                type: 'DeploymentsHealthy',
                status: 'False',
                reason: 'DeploymentFailure',
                message: 'Deployment assisted-service is not yet available: 0 of 1 replicas ready',
              },
        ],
        now,
      ),
    });
  }

  /** The infrastructure operator's complaint about `spec.mirrorRegistryRef`, if any. */
  private mirrorRegistryError(asc: KubeObject): string | undefined {
    const ref = str(rec(rec(asc.spec).mirrorRegistryRef).name);
    if (!ref) return undefined;
    const cm = get(this.ctx.store, T.configMap, ref, MCE_NAMESPACE);
    const prefix = 'Failed to generate definition for AssistedServiceConfigMap: ';
    if (!cm)
      return `${prefix}configmaps "${ref}" not found (mirror registry configmap must be in namespace ${MCE_NAMESPACE})`;
    if (typeof rec(cm.data)['registries.conf'] !== 'string') {
      return `${prefix}Mirror registry configmap ${ref} missing key registries.conf`;
    }
    return undefined;
  }

  private tearDownAssisted(asc: KubeObject | undefined): void {
    const { ctx } = this;
    ctx.dwell.forget('mce/assisted');
    for (const [kind, name] of [
      ['Deployment', 'assisted-service'],
      ['StatefulSet', 'assisted-image-service'],
    ] as const) {
      const ref = kind === 'Deployment' ? T.deployment : T.statefulSet;
      if (get(ctx.store, ref, name, MCE_NAMESPACE)?.metadata.labels?.[L.createdBy] === OWNER) {
        removeWorkload(ctx.store, { kind, name, namespace: MCE_NAMESPACE });
      }
    }
    if (asc?.metadata.deletionTimestamp) removeFinalizer(ctx.store, asc, ASC_FINALIZER);
  }

  /** MCO: restart each hub node's kubelet in turn after a mirror-set change. */
  private reconcileNodes(): void {
    const { ctx } = this;
    const nodes = list(ctx.store, T.node)
      .map((n) => n.metadata.name)
      .sort();
    if (this.mirrorSetsChanged) {
      this.mirrorSetsChanged = false;
      this.rollout = nodes;
      for (const n of nodes) ctx.dwell.forget(`mco/${n}`);
    }
    const name = this.rollout[0];
    if (name === undefined) return;
    const node = get(ctx.store, T.node, name);
    if (!node) {
      this.rollout.shift();
      return;
    }
    const steps = ctx.dwell.steps(`mco/${name}`, 'restarting');
    const now = ctx.now();
    const ready = steps >= 2;
    setNodeReady(ctx, node, ready, now);
    if (ready) {
      ctx.dwell.forget(`mco/${name}`);
      this.rollout.shift();
    }
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Set a Node's Ready condition (kubelet restart when false) and the MCO state annotation. */
function setNodeReady(ctx: Ctx, node: KubeObject, ready: boolean, now: string): void {
  const state = ready ? 'Done' : 'Working';
  const current = patch(ctx.store, node, {
    metadata: { annotations: { 'machineconfiguration.openshift.io/state': state } },
  });
  const conds = arr(current.status?.conditions).map((c) => rec(c));
  const prev = conds.find((c) => c.type === 'Ready');
  const want = ready ? 'True' : 'False';
  if (prev?.status === want) return;
  const readyCond = ready
    ? { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
    : {
        type: 'Ready',
        status: 'False',
        reason: 'KubeletNotReady',
        message: 'container runtime status check may not have completed yet',
      };
  const next = [
    ...conds.filter((c) => c.type !== 'Ready'),
    { ...readyCond, lastHeartbeatTime: now, lastTransitionTime: now },
  ];
  patchStatus(ctx.store, current, { conditions: next });
}
