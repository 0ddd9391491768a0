/**
 * `airgap install hub`: the management-cluster side of a disconnected hosted-cluster site, applied
 * in the seeds' order and waiting where they wait:
 *
 *   preflight   OpenShift version (hosted control planes on bare metal need 4.14+), the
 *               MultiClusterEngine, a storage class for the assisted-service volumes, what is
 *               already there
 *   trust       registry CA ConfigMap in openshift-config + the cluster Image additionalTrustedCA,
 *               and the release-signature ConfigMap in openshift-config-managed when the site's
 *               cluster-resources has one (signature-configmap.yaml)
 *   mirrors     ImageDigestMirrorSet / ImageTagMirrorSet, then every Node Ready again (the machine
 *               config operator restarts kubelets), then the CatalogSources
 *   engine      MultiClusterEngine components (assisted-service, hypershift,
 *               hypershift-local-hosting, local-cluster) and the HyperShift operator install flags
 *   assisted    custom-registries ConfigMap and the AgentServiceConfig (mirrorRegistryRef, osImages)
 *   ready       assisted-service and the HyperShift operator Available, AgentServiceConfig reconciled
 */
import { AirgapError, usageError } from '../util/errors.js';
import { conditionIs, describeCondition, field, findCondition } from './conditions.js';
import { API } from './describe.js';
import { applyObjects, type AppliedObject } from './install/apply.js';
import { describeRef, type Kube, type KubeObject } from './kube.js';
import { dedupe, type InstallReporter } from './progress.js';
import { waitFor } from './wait.js';
import { ClusterError } from './errors.js';

const MIN_HUB_VERSION = [4, 14] as const;

export interface InstallHubOptions {
  kube: Kube;
  /** The rendered hub objects (renderHub), each with its install step. */
  objects: { object: KubeObject; step: string }[];
  /** The storage class the AgentServiceConfig asks for, if the site names one. */
  storageClass?: string;
  report: InstallReporter;
  phaseTimeoutMs?: number;
  resyncMs?: number;
}

export interface HubPreflight {
  version?: string;
  multiClusterEngine: string;
  mceNamespace: string;
  storageClass: string;
  existing: string[];
}

export interface InstallHubResult {
  preflight: HubPreflight;
  applied: AppliedObject[];
}

function versionAtLeast(v: string, min: readonly [number, number]): boolean {
  const [maj, minor] = v.split('.').map(Number);
  return maj > min[0] || (maj === min[0] && minor >= min[1]);
}

/** What the hub has before anything is applied; exit 2 for what must be fixed first. */
async function hubPreflight(kube: Kube, objects: KubeObject[], storageClass?: string): Promise<HubPreflight> {
  const cv = await kube.get({ ...API.clusterVersion, name: 'version' });
  const version =
    (field(cv, 'status.desired.version') as string | undefined) ??
    (field(cv, 'status.history') as { version?: string }[] | undefined)?.[0]?.version;
  if (version && !versionAtLeast(version, MIN_HUB_VERSION))
    throw usageError(
      ClusterError.HUB_TOO_OLD,
      `the hub runs OpenShift ${version}; hosted control planes on bare metal need ${MIN_HUB_VERSION.join('.')} or later`,
      {
        where: kube.server,
        hint: 'upgrade the management cluster first',
      },
    );
  // None when the MultiClusterEngine type is not installed; a refusal or a fault is thrown.
  const mces = await kube.listServed(API.multiClusterEngine.apiVersion, API.multiClusterEngine.kind);
  if (mces.length === 0)
    throw usageError(ClusterError.HUB_NO_MCE, 'the hub has no MultiClusterEngine', {
      where: kube.server,
      hint: 'install the multicluster engine operator from the mirrored redhat-operators catalog (package multicluster-engine) and create its MultiClusterEngine, then run this again',
    });
  const mce = mces[0];
  const classes = (await kube.list(API.storageClass.apiVersion, API.storageClass.kind)).items;
  const isDefault = (c: KubeObject) =>
    c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true';
  let sc: string;
  if (storageClass) {
    if (!classes.some((c) => c.metadata.name === storageClass))
      throw usageError(ClusterError.HUB_NO_STORAGE_CLASS, `the hub has no StorageClass ${storageClass}`, {
        where: 'hub.storageClass',
        hint: `the hub has: ${classes.map((c) => c.metadata.name).join(', ') || 'none'}`,
      });
    sc = storageClass;
  } else {
    const def = classes.find(isDefault);
    if (!def)
      throw usageError(
        ClusterError.HUB_NO_STORAGE_CLASS,
        'the hub has no default StorageClass for the assisted-service volumes',
        {
          where: kube.server,
          hint: 'name one in the site file (hub.storageClass), or mark one default (LVMS, ODF, local storage)',
        },
      );
    sc = def.metadata.name;
  }
  const existing: string[] = [];
  for (const o of objects) {
    if (o.kind === 'MultiClusterEngine' || o.kind === 'Image') continue;
    // An object of a type the hub does not serve yet (its operator comes with MCE) cannot exist.
    const served = await kube.resource(o.apiVersion, o.kind);
    const live =
      served &&
      (await kube.get({
        apiVersion: o.apiVersion,
        kind: o.kind,
        name: o.metadata.name,
        ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
      }));
    if (live)
      existing.push(describeRef({ kind: o.kind, namespace: o.metadata.namespace, name: o.metadata.name }));
  }
  return {
    ...(version ? { version } : {}),
    multiClusterEngine: mce.metadata.name,
    mceNamespace: (field(mce, 'spec.targetNamespace') as string | undefined) ?? 'multicluster-engine',
    storageClass: sc,
    existing,
  };
}

/** The hub steps, in order (render/types.ts RenderStep): after `mirror`, every Node must be Ready again. */
const ORDER = ['trust', 'mirror', 'catalogs', 'mce', 'mce-config', 'agent'];

/** Run the hub install; see the file comment. */
export async function installHub(opts: InstallHubOptions): Promise<InstallHubResult> {
  const { kube } = opts;
  const report = dedupe(opts.report);
  const timeoutMs = opts.phaseTimeoutMs ?? 30 * 60_000;
  const resync = opts.resyncMs !== undefined ? { resyncMs: opts.resyncMs } : {};

  const preflight = await hubPreflight(
    kube,
    opts.objects.map((o) => o.object),
    opts.storageClass,
  );
  report({
    phase: 'preflight',
    message: `OpenShift ${preflight.version ?? 'version unknown'}; MultiClusterEngine ${preflight.multiClusterEngine}; storage class ${preflight.storageClass}${
      preflight.existing.length ? `; already there: ${preflight.existing.join(', ')}` : ''
    }`,
  });

  // The hub's own MultiClusterEngine is the one to configure, whatever it is called.
  const objects = opts.objects.map(({ object: o, step }) => ({
    step,
    object:
      o.kind === 'MultiClusterEngine'
        ? { ...o, metadata: { ...o.metadata, name: preflight.multiClusterEngine } }
        : o,
  }));
  const unknown = objects.filter((o) => !ORDER.includes(o.step));
  if (unknown.length)
    throw new AirgapError(
      ClusterError.RENDER_STEP_UNKNOWN,
      `hub objects with no install step: ${unknown.map((o) => o.object.kind).join(', ')}`,
    );
  const applied: AppliedObject[] = [];
  for (const step of ORDER) {
    const group = objects.filter((o) => o.step === step).map((o) => o.object);
    if (group.length === 0) continue;
    const done = await applyObjects(kube, group, report, step);
    applied.push(...done);
    if (step === 'mirror') {
      await waitNodesReady(kube, report, timeoutMs, resync);
      if (done.some((a) => a.changed)) await restartHypershiftOperator(kube, report);
    }
  }

  // ---- ready
  const waitDeployment = (namespace: string, name: string, what: string) =>
    waitFor(
      kube,
      { ...API.deployment, namespace, name },
      ([d]) => ({
        done: conditionIs(d, 'Available'),
        state: d ? describeCondition(findCondition(d, 'Available'), 'Available') : 'not deployed yet',
      }),
      {
        what: `${what} (Deployment ${namespace}/${name}) to be Available`,
        timeoutMs,
        ...resync,
        onState: (s) => report({ phase: 'ready', object: `Deployment ${namespace}/${name}`, message: s }),
        hint: `check the MultiClusterEngine components: oc get mce ${preflight.multiClusterEngine} -o yaml`,
      },
    );
  if (objects.some((o) => o.object.kind === 'AgentServiceConfig')) {
    await waitFor(
      kube,
      { ...API.agentServiceConfig, name: 'agent' },
      ([asc]) => {
        const c = findCondition(asc, 'ReconcileCompleted');
        const failed = c?.status === 'False' && /Failure$/.test(c.reason ?? '');
        return {
          done: conditionIs(asc, 'ReconcileCompleted'),
          state: describeCondition(c, 'ReconcileCompleted'),
          ...(failed
            ? {
                failed: new AirgapError(
                  ClusterError.ASC_RECONCILE_FAILED,
                  `AgentServiceConfig agent: ${c?.message ?? c?.reason}`,
                  {
                    hint: 'fix what the message names (the custom-registries ConfigMap, the storage class) and run this again',
                  },
                ),
              }
            : {}),
        };
      },
      {
        what: 'AgentServiceConfig agent to be reconciled',
        timeoutMs,
        ...resync,
        onState: (s) => report({ phase: 'ready', object: 'AgentServiceConfig agent', message: s }),
      },
    );
    await waitDeployment(preflight.mceNamespace, 'assisted-service', 'assisted-service');
  }
  await waitDeployment('hypershift', 'operator', 'the HyperShift operator');
  report({ phase: 'ready', message: 'the hub is ready for airgap install cluster' });
  return { preflight, applied };
}

/**
 * The HyperShift operator reads the mirror sets only when it starts (OCPBUGS-29110): after they
 * change, its pods are deleted so that it starts again with them. Nothing to do before it exists.
 */
async function restartHypershiftOperator(kube: Kube, report: InstallReporter): Promise<void> {
  const pods = (await kube.list('v1', 'Pod', { namespace: 'hypershift', labelSelector: 'name=operator' }))
    .items;
  if (pods.length === 0) return;
  for (const pod of pods)
    await kube.delete({ apiVersion: 'v1', kind: 'Pod', namespace: 'hypershift', name: pod.metadata.name });
  report({
    phase: 'mirror',
    object: 'Deployment hypershift/operator',
    message: `restarted (${pods.length} pods): it reads mirror sets only when it starts`,
  });
}

/** Every Node Ready (the kubelets restart after mirror sets change). */
async function waitNodesReady(
  kube: Kube,
  report: InstallReporter,
  timeoutMs: number,
  resync: { resyncMs?: number },
): Promise<void> {
  await waitFor(
    kube,
    { ...API.node },
    (nodes) => {
      const notReady = nodes.filter((n) => !conditionIs(n, 'Ready')).map((n) => n.metadata.name);
      return {
        done: nodes.length > 0 && notReady.length === 0,
        state: notReady.length
          ? `waiting for ${notReady.join(', ')} to be Ready`
          : `${nodes.length} nodes Ready`,
      };
    },
    {
      what: 'every hub Node to be Ready after the mirror sets changed',
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'mirror', message: s }),
    },
  );
}
