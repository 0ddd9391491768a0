/**
 * The HyperShift operator for Agent-platform HostedClusters, time-compressed:
 * - finalizer `hypershift.openshift.io/finalizer`; validation of the pull secret, the release image
 *   (must be a digest) and the configuration, reported as the real conditions with observedGeneration;
 * - the hosted control plane namespace `<ns>-<name>` (label `hypershift.openshift.io/hosted-control-plane`),
 *   the pull secret / SSH key copies in it, its control plane Deployments and Pods;
 * - `current` mode: Role `capi-provider-role-<cpNs>` + RoleBinding `cluster-api-agent-<cpNs>` in the
 *   agent namespace (in `legacy` mode the user must create Role `capi-provider-role` there);
 * - one guest API server per HostedCluster (its admin kubeconfig Secret `<name>-admin-kubeconfig`
 *   points at it), kubeadmin password Secret, ignition and control plane endpoints;
 * - status.version: desired + history Partial → Completed once the NodePools have all their replicas
 *   (Ready Nodes, whatever version they run: the NodePools are updated after the control plane); the
 *   hosted CVO's conditions (cvo.ts), and with fault `controlPlaneUpdateStuck` an update never completes;
 * - delete: NodePools first, then what it created, the guest API, and finally the finalizer.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { kubeconfigYaml } from '../kubeconfig.js';
import type { KubeObject } from '../types.js';
import { releaseVersion, type Ctx, type GuestApi, type Reconciler } from './context.js';
import { clusterVersionConditions, syncGuestClusterVersion, type CvoView } from './cvo.js';
import { hypershiftOperatorReady } from './mce.js';
import { kubeVersionFor } from './seed.js';
import {
  L,
  T,
  addFinalizer,
  arr,
  b64,
  condition,
  create,
  ensure,
  ensureNamespace,
  get,
  hcpNamespace,
  isNotFound,
  list,
  metaConditions,
  patch,
  rec,
  remove,
  removeFinalizer,
  secretValue,
  setStatus,
  shortHash,
  str,
  type Cond,
} from './util.js';
import { ensureWorkload, removeWorkload } from './workloads.js';

const HC_FINALIZER = 'hypershift.openshift.io/finalizer';
const OWNER = 'hypershift';
/** The hub's apps domain (routes of the hosted control planes). */
const HUB_APPS_DOMAIN = 'apps.hub.example.com';

/** Hosted control plane components the simulated operator runs (Deployments unless noted). */
const CONTROL_PLANE: { name: string; kind?: 'StatefulSet'; ha?: number }[] = [
  { name: 'etcd', kind: 'StatefulSet', ha: 3 },
  { name: 'kube-apiserver', ha: 3 },
  { name: 'kube-controller-manager' },
  { name: 'kube-scheduler' },
  { name: 'openshift-apiserver' },
  { name: 'openshift-controller-manager' },
  { name: 'oauth-openshift' },
  { name: 'cluster-version-operator' },
  { name: 'control-plane-operator' },
  { name: 'hosted-cluster-config-operator' },
  { name: 'ignition-server' },
  { name: 'ignition-server-proxy' },
  { name: 'konnectivity-agent' },
  { name: 'cluster-api' },
  { name: 'capi-provider' },
];

/** NodePools of a HostedCluster. */
function nodePoolsOf(ctx: Ctx, hc: KubeObject): KubeObject[] {
  return list(ctx.store, T.nodePool, { namespace: hc.metadata.namespace }).filter(
    (np) => rec(np.spec).clusterName === hc.metadata.name,
  );
}

export function desiredReplicas(np: KubeObject): number {
  const spec = rec(np.spec);
  if (typeof spec.replicas === 'number') return spec.replicas;
  const auto = rec(spec.autoScaling);
  return typeof auto.min === 'number' ? auto.min : 0;
}

export function agentNamespaceOf(hc: KubeObject): string | undefined {
  return str(rec(rec(rec(hc.spec).platform).agent).agentNamespace) || undefined;
}

function isPaused(hc: KubeObject): string | undefined {
  const p = str(rec(hc.spec).pausedUntil);
  if (!p) return undefined;
  if (/^true$/i.test(p)) return p;
  if (/^false$/i.test(p)) return undefined;
  const t = Date.parse(p);
  return Number.isFinite(t) && t > Date.now() ? p : undefined;
}

/** Where the ignition server is reachable, per the `Ignition` service publishing strategy. */
function ignitionEndpoint(hc: KubeObject): string {
  const svc = arr(rec(hc.spec).services)
    .map(rec)
    .find((s) => s.service === 'Ignition');
  const strategy = rec(svc?.servicePublishingStrategy);
  if (strategy.type === 'NodePort') {
    const address = str(rec(strategy.nodePort).address) ?? 'localhost';
    const port = 30000 + (parseInt(shortHash(hc.metadata.uid ?? hc.metadata.name, 4), 16) % 2767);
    return `${address.includes(':') ? `[${address}]` : address}:${port}`;
  }
  const host = str(rec(strategy.route).hostname);
  return host ?? `ignition-server-${hcpNamespace(hc)}.${HUB_APPS_DOMAIN}`;
}

export class HostedClusterController implements Reconciler {
  readonly name = 'hypershift';

  constructor(private readonly ctx: Ctx) {}

  reconcile(): void {
    const { ctx } = this;
    const hcs = list(ctx.store, T.hostedCluster);
    const live = new Set(hcs.map((hc) => hc.metadata.uid ?? ''));
    for (const [uid, entry] of ctx.guests) {
      if (!live.has(uid) && !entry.starting) this.closeGuest(uid);
    }
    if (!hypershiftOperatorReady(ctx)) return;
    for (const hc of hcs) {
      try {
        this.reconcileOne(hc);
      } catch (err) {
        ctx.error(`HostedCluster ${hc.metadata.namespace}/${hc.metadata.name}`, err);
      }
    }
  }

  private reconcileOne(hc: KubeObject): void {
    const { ctx } = this;
    if (hc.metadata.deletionTimestamp) {
      this.finalize(hc);
      return;
    }
    hc = addFinalizer(ctx.store, hc, HC_FINALIZER);
    const now = ctx.now();
    const gen = hc.metadata.generation ?? 1;
    const spec = rec(hc.spec);
    const image = str(rec(spec.release).image) ?? '';
    const conds = new Map<string, Cond>();
    const set = (c: Cond): void => void conds.set(c.type, c);

    // Validation, as the operator reports it before it does anything else.
    const platform = rec(spec.platform);
    const agentNs = agentNamespaceOf(hc);
    set(
      platform.type !== 'Agent'
        ? {
            type: 'ValidConfiguration',
            status: 'False',
            reason: 'InvalidConfiguration',
            message: `platform type ${String(platform.type)} is not supported by this management cluster (only Agent)`,
          }
        : !agentNs
          ? {
              type: 'ValidConfiguration',
              status: 'False',
              reason: 'InvalidConfiguration',
              message: 'spec.platform.agent.agentNamespace must be set',
            }
          : {
              type: 'ValidConfiguration',
              status: 'True',
              reason: 'AsExpected',
              message: 'Configuration passes validation',
            },
    );
    const hasClusterVersion = get(ctx.store, T.clusterVersion, 'version') !== undefined;
    set(
      ctx.options.faults.clusterVersionRequired && !hasClusterVersion
        ? {
            type: 'SupportedHostedCluster',
            status: 'False',
            reason: 'UnsupportedHostedCluster',
            message:
              'failed to get management cluster version: clusterversions.config.openshift.io "version" not found',
          }
        : {
            type: 'SupportedHostedCluster',
            status: 'True',
            reason: 'AsExpected',
            message: 'HostedCluster is supported by operator configuration',
          },
    );
    set(this.releaseImageCondition(hc, image));
    const paused = isPaused(hc);
    set(
      paused
        ? {
            type: 'ReconciliationActive',
            status: 'False',
            reason: 'ReconciliationPaused',
            message: `Reconciliation paused until: ${paused}`,
          }
        : {
            type: 'ReconciliationActive',
            status: 'True',
            reason: 'AsExpected',
            message: 'Reconciliation active on resource',
          },
    );
    const blocked = [
      'ValidConfiguration',
      'SupportedHostedCluster',
      'ValidReleaseImage',
      'ReconciliationActive',
    ]
      .map((t) => conds.get(t))
      .find((c) => c?.status === 'False');

    const guest = ctx.guests.get(hc.metadata.uid ?? '')?.api;
    const cpNs = hcpNamespace(hc);
    let reconcileError: string | undefined;
    if (!blocked) {
      reconcileError = this.reconcileResources(hc, cpNs, agentNs ?? '');
    }
    set(
      reconcileError
        ? {
            type: 'ReconciliationSucceeded',
            status: 'False',
            reason: 'ReconciliationError',
            message: reconcileError,
          }
        : {
            type: 'ReconciliationSucceeded',
            status: 'True',
            reason: 'ReconciliationSucceeded',
            message: 'Reconciliation completed successfully',
          },
    );

    const status = rec(hc.status);
    const version = releaseVersion(ctx, image);
    const statusPatch: Record<string, unknown> = {};
    let history = arr(rec(status.version).history).map(rec);
    let cpUp = false;
    let upgrading = false;
    let cvoView: CvoView | undefined;
    if (!blocked && !reconcileError) {
      // The release rollout: a new history entry whenever spec.release.image changes.
      if (history[0]?.image !== image) {
        history = [
          { state: 'Partial', image, version, startedTime: now, completionTime: null, verified: false },
          ...history,
        ].slice(0, 10);
      }
      const steps = ctx.dwell.steps(`hc/${hc.metadata.uid}`, `cp-${image}`);
      if (steps >= 1) this.ensureControlPlane(hc, cpNs);
      if (steps >= 2 && !guest) this.startGuest(hc);
      // An upgrade (new image) keeps the control plane available while it rolls out.
      const wasUp = condition(hc, 'Available')?.status === 'True';
      cpUp = guest !== undefined && (steps >= 2 || wasUp);
      if (cpUp && guest) {
        this.publishAccess(hc, guest);
        const nps = nodePoolsOf(ctx, hc);
        const want = nps.reduce((n, np) => n + desiredReplicas(np), 0);
        const allReady =
          want > 0 &&
          nps.every(
            (np) => typeof np.status?.replicas === 'number' && np.status.replicas === desiredReplicas(np),
          );
        // An update (not the first install) may be stuck on a degraded cluster operator (fault).
        const stuck = !!ctx.options.faults.controlPlaneUpdateStuck && history.length > 1;
        if (history[0].state !== 'Completed' && allReady && steps >= 3 && !stuck) {
          history[0] = { ...history[0], state: 'Completed', completionTime: now };
        }
        const completed = history[0].state === 'Completed';
        upgrading = history.length > 1 && !completed;
        const previous = str(history.slice(1).find((h) => h.state === 'Completed')?.version);
        cvoView = { image, version, previous: upgrading ? previous : undefined, completed, stuck };
        syncGuestClusterVersion(guest, cvoView, now);
        statusPatch.kubeconfig = { name: `${hc.metadata.name}-admin-kubeconfig` };
        statusPatch.kubeadminPassword = { name: `${hc.metadata.name}-kubeadmin-password` };
        const url = new URL(guest.url);
        statusPatch.controlPlaneEndpoint = {
          host: url.hostname.replace(/^\[|\]$/g, ''),
          port: Number(url.port || 443),
        };
        statusPatch.ignitionEndpoint = ignitionEndpoint(hc);
        statusPatch.oauthCallbackURLTemplate = `https://oauth-${cpNs}.${HUB_APPS_DOMAIN}:443/oauth2callback/[identity-provider-name]`;
        statusPatch.controlPlaneVersion = {
          desired: { image, version },
          history: [
            {
              state: 'Completed',
              image,
              version,
              startedTime: str(history[0].startedTime) ?? now,
              completionTime: now,
            },
          ],
          observedGeneration: gen,
        };
        const prevCp = rec(status.controlPlaneVersion);
        if (rec(prevCp.desired).image === image && arr(prevCp.history).length > 0) {
          statusPatch.controlPlaneVersion = { ...prevCp, observedGeneration: gen };
        }
      }
      statusPatch.version = {
        desired: { image, version },
        history,
        observedGeneration: gen,
        availableUpdates: null,
      };
      statusPatch.payloadArch = 'AMD64';
    }

    // Availability and progress, derived as the operator derives them.
    set(
      cpUp
        ? {
            type: 'Available',
            status: 'True',
            reason: 'AsExpected',
            message: 'The hosted control plane is available',
          }
        : {
            type: 'Available',
            status: 'False',
            reason: 'WaitingForAvailable',
            message: blocked ? blocked.message : 'Waiting for hosted control plane to be healthy',
          },
    );
    set(
      blocked || reconcileError
        ? {
            type: 'Progressing',
            status: 'False',
            reason: 'Blocked',
            message: blocked
              ? `${blocked.type} condition is false: ${blocked.message}`
              : (reconcileError ?? ''),
          }
        : cpUp && !upgrading
          ? {
              type: 'Progressing',
              status: 'False',
              reason: 'AsExpected',
              message: 'HostedCluster is at expected version',
            }
          : {
              type: 'Progressing',
              status: 'True',
              reason: 'Progressing',
              message: 'HostedCluster is deploying, upgrading, or reconfiguring',
            },
    );
    set(
      cpUp
        ? {
            type: 'Degraded',
            status: 'False',
            reason: 'AsExpected',
            message: 'The hosted cluster is not degraded',
          }
        : {
            type: 'Degraded',
            status: 'Unknown',
            reason: 'StatusUnknown',
            message: 'The hosted control plane is not found',
          },
    );
    if (cpUp) {
      set({
        type: 'IgnitionEndpointAvailable',
        status: 'True',
        reason: 'AsExpected',
        message: 'Ignition server deployment is available',
      });
      set({
        type: 'ClusterVersionReleaseAccepted',
        status: 'True',
        reason: 'PayloadLoaded',
        message: `Payload loaded version="${version}" image="${image}" architecture="amd64"`,
      });
      if (cvoView) for (const c of clusterVersionConditions(cvoView)) set(c);
    }
    statusPatch.conditions = metaConditions(status.conditions, [...conds.values()], gen, now);
    setStatus(ctx.store, hc, statusPatch);
  }

  private releaseImageCondition(hc: KubeObject, image: string): Cond {
    const { ctx } = this;
    const pullSecretName = str(rec(rec(hc.spec).pullSecret).name);
    const ns = hc.metadata.namespace ?? '';
    if (!pullSecretName) {
      return {
        type: 'ValidReleaseImage',
        status: 'False',
        reason: 'SecretNotFound',
        message: 'spec.pullSecret.name is not set',
      };
    }
    const secret = get(ctx.store, T.secret, pullSecretName, ns);
    if (!secret) {
      return {
        type: 'ValidReleaseImage',
        status: 'False',
        reason: 'SecretNotFound',
        message: `failed to get pull secret ${ns}/${pullSecretName}: secrets "${pullSecretName}" not found`,
      };
    }
    if (secretValue(secret, '.dockerconfigjson') === undefined) {
      return {
        type: 'ValidReleaseImage',
        status: 'False',
        reason: 'SecretNotFound',
        message: `pull secret ${ns}/${pullSecretName} has no .dockerconfigjson key`,
      };
    }
    if (!image) {
      return {
        type: 'ValidReleaseImage',
        status: 'False',
        reason: 'InvalidImage',
        message: 'spec.release.image is empty',
      };
    }
    if (!/@sha256:[0-9a-f]{64}$/.test(image)) {
      return {
        type: 'ValidReleaseImage',
        status: 'False',
        reason: 'InvalidImage',
        message: `release image ${image} is not referenced by digest: a disconnected management cluster can only resolve mirrored releases by digest (…@sha256:<digest>)`,
      };
    }
    return {
      type: 'ValidReleaseImage',
      status: 'True',
      reason: 'AsExpected',
      message: 'Release image is valid',
    };
  }

  /** HCP namespace, secret copies and agent RBAC; returns the reconcile error, if any. */
  private reconcileResources(hc: KubeObject, cpNs: string, agentNs: string): string | undefined {
    const { ctx } = this;
    const ns = hc.metadata.namespace ?? '';
    const hcRef = `${ns}/${hc.metadata.name}`;
    const existingNs = get(ctx.store, T.namespace, cpNs);
    if (!existingNs) {
      ensureNamespace(
        ctx.store,
        cpNs,
        {
          [L.hcpNamespace]: 'true',
          'pod-security.kubernetes.io/enforce': 'privileged',
          'pod-security.kubernetes.io/audit': 'privileged',
          'pod-security.kubernetes.io/warn': 'privileged',
        },
        { [L.createdBy]: OWNER, 'hypershift.openshift.io/cluster': hcRef },
      );
    } else if (
      existingNs.metadata.labels?.[L.hcpNamespace] !== 'true' &&
      !existingNs.metadata.deletionTimestamp
    ) {
      patch(ctx.store, existingNs, { metadata: { labels: { [L.hcpNamespace]: 'true' } } });
    }
    if (existingNs?.metadata.deletionTimestamp) return `namespace ${cpNs} is being deleted`;

    const copies: [string | undefined, string][] = [
      [str(rec(rec(hc.spec).pullSecret).name), 'pull-secret'],
      [str(rec(rec(hc.spec).sshKey).name), 'ssh-key'],
    ];
    for (const [from, to] of copies) {
      if (!from) continue;
      const src = get(ctx.store, T.secret, from, ns);
      if (!src) continue;
      const existing = get(ctx.store, T.secret, to, cpNs);
      if (!existing) {
        create(ctx.store, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: to,
            namespace: cpNs,
            labels: { [L.createdBy]: OWNER },
            annotations: { 'hypershift.openshift.io/cluster': hcRef },
          },
          type: src.type,
          data: rec(src.data),
        });
      } else if (existing.metadata.labels?.[L.createdBy] === OWNER) {
        patch(ctx.store, existing, { data: rec(src.data) });
      }
    }

    if (ctx.options.hypershift === 'current') {
      if (!get(ctx.store, T.namespace, agentNs)) {
        return `failed to reconcile the CAPI provider role: namespaces "${agentNs}" not found`;
      }
      const labels = { 'hypershift.openshift.io/capi-provider-agent-rbac': 'true', [L.createdBy]: OWNER };
      const annotations = { 'hypershift.openshift.io/cluster': hcRef };
      ensure(ctx.store, {
        apiVersion: T.role.apiVersion,
        kind: T.role.kind,
        metadata: { name: `capi-provider-role-${cpNs}`, namespace: agentNs, labels, annotations },
        rules: [
          {
            apiGroups: ['agent-install.openshift.io'],
            resources: ['agents'],
            verbs: ['get', 'list', 'watch', 'update', 'patch'],
          },
        ],
      });
      ensure(ctx.store, {
        apiVersion: T.roleBinding.apiVersion,
        kind: T.roleBinding.kind,
        metadata: { name: `cluster-api-agent-${cpNs}`, namespace: agentNs, labels, annotations },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `capi-provider-role-${cpNs}` },
        subjects: [{ kind: 'ServiceAccount', name: 'capi-provider', namespace: cpNs }],
      });
    }
    return undefined;
  }

  private ensureControlPlane(hc: KubeObject, cpNs: string): void {
    const { ctx } = this;
    const ha = rec(hc.spec).controllerAvailabilityPolicy === 'HighlyAvailable';
    const now = ctx.now();
    for (const c of CONTROL_PLANE) {
      ensureWorkload(
        ctx.store,
        {
          kind: c.kind ?? 'Deployment',
          name: c.name,
          namespace: cpNs,
          replicas: ha && c.ha ? c.ha : 1,
          labels: { 'hypershift.openshift.io/hosted-control-plane': cpNs },
          image: `registry.example.com/openshift/release@sha256:${shortHash(c.name, 64)}`,
          owner: OWNER,
        },
        now,
      );
    }
  }

  private startGuest(hc: KubeObject): void {
    const { ctx } = this;
    const uid = hc.metadata.uid ?? '';
    const hcRef = `${hc.metadata.namespace}/${hc.metadata.name}`;
    let entry = ctx.guests.get(uid);
    if (!entry) {
      entry = { hc: hcRef, uid };
      ctx.guests.set(uid, entry);
    }
    if (entry.api || entry.starting) return;
    if (entry.failedAt !== undefined && Date.now() - entry.failedAt < 5 * ctx.options.stepMs) return;
    entry.starting = true;
    const e = entry;
    ctx.track(
      ctx
        .startGuest()
        .then(async (api) => {
          const stillThere = ctx.store
            .list(T.hostedCluster.apiVersion, T.hostedCluster.kind)
            .some((h) => h.metadata.uid === uid && !h.metadata.deletionTimestamp);
          if (ctx.stopped() || !stillThere) {
            await api.close();
            return;
          }
          initGuestStore(api);
          e.api = api;
          ctx.kick();
        })
        .catch((err: unknown) => {
          e.failedAt = Date.now();
          ctx.error(`guest API for HostedCluster ${hcRef}`, err);
        })
        .finally(() => {
          e.starting = false;
        }),
    );
  }

  private closeGuest(uid: string): void {
    const { ctx } = this;
    const entry = ctx.guests.get(uid);
    ctx.guests.delete(uid);
    if (entry?.api) {
      const api = entry.api;
      ctx.track(api.close().catch((err: unknown) => ctx.error(`closing guest API of ${entry.hc}`, err)));
    }
  }

  /** Secrets the user reads to reach the hosted cluster. */
  private publishAccess(hc: KubeObject, guest: GuestApi): void {
    const { ctx } = this;
    const ns = hc.metadata.namespace ?? '';
    const name = hc.metadata.name;
    const kubeconfig = kubeconfigYaml({ server: guest.url, caPem: guest.caPem, token: guest.token, name });
    const labels = { [L.createdBy]: OWNER };
    const annotations = { 'hypershift.openshift.io/cluster': `${ns}/${name}` };
    for (const [secretName, secretNs] of [
      [`${name}-admin-kubeconfig`, ns],
      ['admin-kubeconfig', hcpNamespace(hc)],
    ] as const) {
      const existing = get(ctx.store, T.secret, secretName, secretNs);
      const data = { kubeconfig: b64(kubeconfig) };
      if (!existing) {
        create(ctx.store, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: secretName, namespace: secretNs, labels, annotations },
          type: 'Opaque',
          data,
        });
      } else {
        patch(ctx.store, existing, { data });
      }
    }
    ensure(ctx.store, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-kubeadmin-password`, namespace: ns, labels, annotations },
      type: 'Opaque',
      data: { password: b64(kubeadminPassword()) },
    });
  }

  private finalize(hc: KubeObject): void {
    const { ctx } = this;
    if (!(hc.metadata.finalizers ?? []).includes(HC_FINALIZER)) return;
    const ns = hc.metadata.namespace ?? '';
    const name = hc.metadata.name;
    const cpNs = hcpNamespace(hc);
    // NodePools go first (the operator deletes them; their own finalizer unbinds the Agents).
    const nps = nodePoolsOf(ctx, hc);
    for (const np of nps) {
      if (!np.metadata.deletionTimestamp) remove(ctx.store, T.nodePool, np.metadata.name, ns);
    }
    if (nps.length > 0) return;
    // Agents still bound to this cluster are released.
    const agentNs = agentNamespaceOf(hc);
    if (agentNs) {
      for (const agent of list(ctx.store, T.agent, { namespace: agentNs })) {
        const cd = rec(rec(agent.spec).clusterDeploymentName);
        if (cd.name === name && cd.namespace === cpNs) {
          patch(ctx.store, agent, { spec: { clusterDeploymentName: null } });
        }
      }
      const roles =
        ctx.options.hypershift === 'current'
          ? [`capi-provider-role-${cpNs}`, 'capi-provider-role']
          : [`capi-provider-role-${cpNs}`];
      for (const role of roles) remove(ctx.store, T.role, role, agentNs);
      remove(ctx.store, T.roleBinding, `cluster-api-agent-${cpNs}`, agentNs);
    }
    // What the operator created in the control plane namespace.
    for (const c of CONTROL_PLANE)
      removeWorkload(ctx.store, { kind: c.kind ?? 'Deployment', name: c.name, namespace: cpNs });
    for (const secret of ['pull-secret', 'ssh-key', 'admin-kubeconfig']) {
      if (get(ctx.store, T.secret, secret, cpNs)?.metadata.labels?.[L.createdBy] === OWNER)
        remove(ctx.store, T.secret, secret, cpNs);
    }
    const cpNamespace = get(ctx.store, T.namespace, cpNs);
    if (cpNamespace?.metadata.annotations?.[L.createdBy] === OWNER && this.namespaceEmpty(cpNs)) {
      remove(ctx.store, T.namespace, cpNs);
    }
    for (const secret of [`${name}-admin-kubeconfig`, `${name}-kubeadmin-password`])
      remove(ctx.store, T.secret, secret, ns);
    this.closeGuest(hc.metadata.uid ?? '');
    ctx.dwell.forget(`hc/${hc.metadata.uid}`);
    try {
      removeFinalizer(ctx.store, hc, HC_FINALIZER);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private namespaceEmpty(ns: string): boolean {
    return this.ctx.store
      .types()
      .filter((t) => t.namespaced)
      .every((t) => this.ctx.store.list(t.apiVersion, t.kind, { namespace: ns }).length === 0);
  }
}

/** The guest cluster's first objects: its namespaces and ClusterVersion. */
function initGuestStore(api: GuestApi): void {
  for (const ns of ['default', 'kube-system', 'openshift-config', 'openshift-ingress']) {
    if (!get(api.store, T.namespace, ns)) ensureNamespace(api.store, ns);
  }
  if (
    api.store.typeFor(T.clusterVersion.apiVersion, T.clusterVersion.kind) &&
    !get(api.store, T.clusterVersion, 'version')
  ) {
    create(api.store, {
      apiVersion: T.clusterVersion.apiVersion,
      kind: T.clusterVersion.kind,
      metadata: { name: 'version' },
      spec: { clusterID: randomUUID() },
      status: {
        history: [],
        conditions: [],
        observedGeneration: 1,
        availableUpdates: null,
        desired: {},
        versionHash: '',
      },
    });
  }
}

function kubeadminPassword(): string {
  const raw = randomBytes(15)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, 'x');
  return `${raw.slice(0, 5)}-${raw.slice(5, 10)}-${raw.slice(10, 15)}-${raw.slice(15, 20) || 'abcde'}`;
}

/** Kubernetes version a hosted cluster of this OpenShift version reports. */
export function guestKubeletVersion(version: string): string {
  return kubeVersionFor(version);
}
