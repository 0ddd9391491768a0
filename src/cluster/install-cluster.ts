/**
 * `airgap install cluster`: apply the rendered hosted-cluster objects to the hub with server-side
 * apply, in dependency order, then drive and report each phase until the hosted cluster's nodes
 * are Ready through its own kubeconfig:
 *
 *   control-plane  HostedCluster Available (conditions shown as they change)
 *   iso            InfraEnv ImageCreated and status.isoDownloadURL (ImageCreationError fails at once)
 *   hosts          each BareMetalHost registering → provisioning → provisioned (errors reported;
 *                  a failed host does not stop the others, but the run exits non-zero)
 *   agents         one Agent per provisioned host, approved (when the site says so), validated,
 *                  connected; hostname and role shown
 *   scale          NodePool replicas = the Agents ready to install
 *   install        Agents bound and installed, NodePool ready replicas; an Agent the NodePool does
 *                  not pick is explained (approved / validated / connected / bound / selector)
 *   complete       status.version.history[0].completionTime
 *   kubeconfig     admin kubeconfig written 0600; the hosted cluster's Nodes Ready through it
 *
 * Every phase is a wait that returns at once when its state is already reached, so a second run
 * continues where the first stopped and creates nothing twice.
 */
import { writeFileAtomic } from '../util/fs.js';
import { Limiter } from '../util/limit.js';
import { AirgapError } from '../util/errors.js';
import { conditionIs, describeCondition, field, findCondition } from './conditions.js';
import {
  API,
  BMH_LABEL,
  INFRAENV_LABEL,
  viewAgent,
  viewBareMetalHost,
  viewHostedCluster,
  viewInfraEnv,
  viewNodePool,
  whyAgentNotPicked,
  type AgentView,
} from './describe.js';
import { describeRef, Kube, refOf, type KubeObject } from './kube.js';
import { dedupe, type InstallReporter } from './progress.js';
import { waitFor } from './wait.js';

/** Default limit of each wait. */
export const DEFAULT_PHASE_TIMEOUT_MS = 60 * 60_000;

export interface ClusterIdentity {
  name: string;
  namespace: string;
}

/** The control plane (and agent) namespace HyperShift uses for a hosted cluster. */
export function controlPlaneNamespace(c: ClusterIdentity): string {
  return `${c.namespace}-${c.name.replaceAll('.', '-')}`;
}

export interface InstallClusterOptions {
  kube: Kube;
  cluster: ClusterIdentity;
  /** The rendered objects applied first, in order (no status): namespaces … InfraEnv. */
  objects: KubeObject[];
  /** The rendered host objects (NMStateConfigs, BMC secrets, BareMetalHosts), applied once the ISO exists. */
  hostObjects: KubeObject[];
  /** Host names of the site (BareMetalHost names), in site order. */
  hosts: string[];
  /** Approve Agents that are not approved yet. */
  approveAgents: boolean;
  /** NodePool agentLabelSelector, for stall explanations. */
  agentLabelSelector?: {
    matchLabels?: Record<string, string>;
    matchExpressions?: { key: string; operator: string; values?: string[] }[];
  };
  /** Where the hosted cluster's admin kubeconfig is written (0600). */
  kubeconfigOut: string;
  report: InstallReporter;
  /** Limit of each wait (default 60 min). */
  phaseTimeoutMs?: number;
  /** Re-list period of the waits (default 10 s). */
  resyncMs?: number;
}

export interface HostOutcome {
  name: string;
  state: string;
  agent?: string;
  hostname?: string;
  role?: string;
  error?: string;
}

export interface InstallClusterResult {
  cluster: ClusterIdentity;
  releaseVersion?: string;
  applied: AppliedObject[];
  hosts: HostOutcome[];
  nodePool: { desired: number; ready: number };
  kubeconfig?: string;
  nodes: { name: string; ready: boolean }[];
  /** What failed (hosts that did not provision, …): the exit code is 1 when not empty. */
  failures: string[];
}

/** The NodePool object among the rendered ones (there is exactly one). */
function nodePoolOf(objects: KubeObject[]): KubeObject {
  const np = objects.find((o) => o.kind === 'NodePool');
  if (!np) throw new AirgapError('RENDER_NO_NODEPOOL', 'the rendered objects have no NodePool');
  return np;
}

/** What applying one object did (kubectl's words: created, configured, unchanged). */
export interface AppliedObject {
  object: string;
  created: boolean;
  /** Created, or changed by the apply (its resourceVersion moved). */
  changed: boolean;
}

/** Objects of one kind applied at once (the hub has no ordering among them). */
const APPLY_CONCURRENCY = 8;

/**
 * Apply every object with server-side apply. Kinds go in the order they first appear (so a BMC
 * Secret is there before any BareMetalHost, a Namespace before what lives in it); the objects of one
 * kind go concurrently. The NodePool keeps the replicas it has on the hub (a re-run must not scale a
 * running pool down to the rendered 0). Results and reports keep the given order.
 */
export async function applyObjects(
  kube: Kube,
  objects: KubeObject[],
  report: InstallReporter,
  phase = 'apply',
): Promise<AppliedObject[]> {
  const kinds = [...new Set(objects.map((o) => `${o.apiVersion}/${o.kind}`))];
  const results = new Map<KubeObject, AppliedObject>();
  const limit = new Limiter(APPLY_CONCURRENCY);
  for (const kind of kinds) {
    const group = objects.filter((o) => `${o.apiVersion}/${o.kind}` === kind);
    // What exists already: one list per namespace of the group, not one read per object.
    const live = new Map<string, KubeObject>();
    const namespaces = [...new Set(group.map((o) => o.metadata.namespace))];
    await Promise.all(
      namespaces.map(async (namespace) => {
        const { items } = await kube
          .list(group[0]!.apiVersion, group[0]!.kind, namespace ? { namespace } : {})
          .catch(() => ({ items: [] as KubeObject[] }));
        for (const o of items) live.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
      }),
    );
    await Promise.all(
      group.map((obj) =>
        limit.run(async () => {
          const ref = refOf(obj);
          const existing = live.get(`${ref.namespace ?? ''}/${ref.name}`);
          let body = obj;
          if (obj.kind === 'NodePool' && existing) {
            body = { ...obj, spec: { ...obj.spec, replicas: field(existing, 'spec.replicas') ?? 0 } };
          }
          const applied = await kube.apply(body);
          results.set(obj, {
            object: describeRef(ref),
            created: !existing,
            changed: !existing || applied.metadata.resourceVersion !== existing.metadata.resourceVersion,
          });
        }),
      ),
    );
  }
  return objects.map((o) => {
    const r = results.get(o)!;
    report({
      phase,
      object: r.object,
      message: r.created ? 'created' : r.changed ? 'configured' : 'unchanged',
    });
    return r;
  });
}

/** The APIs a hosted-cluster install needs on the hub (MCE with hypershift and assisted-service). */
const REQUIRED_APIS = [
  API.hostedCluster,
  API.nodePool,
  API.infraEnv,
  API.agent,
  API.bareMetalHost,
  API.agentServiceConfig,
];

export interface ClusterPreflightOptions {
  kube: Kube;
  cluster: ClusterIdentity;
  /** `4.17.3`: the AgentServiceConfig must have an osImage for its x.y. */
  releaseVersion: string;
  /** AgentServiceConfig `cpuArchitecture` of the hosts (`x86_64`). */
  cpuArchitecture: string;
}

/**
 * What the hub must have before anything of a hosted cluster is applied (exit 2 otherwise): the
 * HyperShift, assisted-service and metal3 APIs, an AgentServiceConfig with an osImage for the
 * release (else the discovery ISO fails much later), and no HostedCluster of the same name in
 * another namespace (names are unique across the hub).
 */
export async function clusterPreflight(o: ClusterPreflightOptions): Promise<{ warnings: string[] }> {
  const { kube, cluster } = o;
  const missing: string[] = [];
  for (const t of REQUIRED_APIS)
    if (!(await kube.resource(t.apiVersion, t.kind))) missing.push(`${t.kind} (${t.apiVersion})`);
  if (missing.length)
    throw new AirgapError('HUB_NOT_READY', `the hub does not serve ${missing.join(', ')}`, {
      where: kube.server,
      hint: 'run airgap install hub first (it enables hypershift and assisted-service in the MultiClusterEngine)',
      exitCode: 2,
    });
  const asc = await kube.get({ ...API.agentServiceConfig, name: 'agent' });
  if (!asc)
    throw new AirgapError('HUB_NOT_READY', 'the hub has no AgentServiceConfig agent', {
      where: kube.server,
      hint: 'run airgap install hub first (it creates the AgentServiceConfig with your osImages)',
      exitCode: 2,
    });
  const minor = o.releaseVersion.split('.').slice(0, 2).join('.');
  const images =
    (field(asc, 'spec.osImages') as { openshiftVersion?: string; cpuArchitecture?: string }[] | undefined) ??
    [];
  if (
    !images.some((i) => i.openshiftVersion === minor && (i.cpuArchitecture ?? 'x86_64') === o.cpuArchitecture)
  )
    throw new AirgapError(
      'HUB_NO_OS_IMAGE',
      `the AgentServiceConfig has no osImage for OpenShift ${minor} ${o.cpuArchitecture} (it has: ${
        images.map((i) => `${i.openshiftVersion} ${i.cpuArchitecture ?? 'x86_64'}`).join(', ') || 'none'
      })`,
      {
        where: 'AgentServiceConfig agent',
        hint: `serve the RHCOS of release ${o.releaseVersion} (airgap images fetch --release …; airgap serve-images --asc-out), add it to hub.osImages in the site file, and run airgap install hub again`,
        exitCode: 2,
      },
    );
  const same = (await kube.list(API.hostedCluster.apiVersion, API.hostedCluster.kind)).items.filter(
    (hc) => hc.metadata.name === cluster.name && hc.metadata.namespace !== cluster.namespace,
  );
  if (same.length)
    throw new AirgapError(
      'CLUSTER_NAME_TAKEN',
      `a HostedCluster named ${cluster.name} already exists in namespace ${same[0]!.metadata.namespace}`,
      {
        where: kube.server,
        hint: 'hosted cluster names are unique across the hub: pick another cluster.name',
        exitCode: 2,
      },
    );
  // A HyperShift operator not installed by MCE lacks IMAGE_AGENT_CAPI_PROVIDER and deploys the CAPI
  // agent provider from quay.io, which a disconnected hub cannot pull.
  const warnings: string[] = [];
  const ho = await kube.get({ ...API.deployment, namespace: 'hypershift', name: 'operator' });
  const containers =
    (field(ho, 'spec.template.spec.containers') as { env?: { name: string }[] }[] | undefined) ?? [];
  if (ho && !containers.some((c) => c.env?.some((e) => e.name === 'IMAGE_AGENT_CAPI_PROVIDER')))
    warnings.push(
      'the HyperShift operator has no IMAGE_AGENT_CAPI_PROVIDER: it will deploy the CAPI agent provider from quay.io/edge-infrastructure/cluster-api-provider-agent:latest, which a disconnected hub cannot pull. Install the operator through MCE, or annotate the HostedCluster with hypershift.openshift.io/capi-provider-agent-image=<the mirrored image>',
    );
  return { warnings };
}

/** Run the whole install; see the file comment. */
export async function installCluster(opts: InstallClusterOptions): Promise<InstallClusterResult> {
  const { kube, cluster } = opts;
  const report = dedupe(opts.report);
  const agentNs = controlPlaneNamespace(cluster);
  const timeoutMs = opts.phaseTimeoutMs ?? DEFAULT_PHASE_TIMEOUT_MS;
  const resync = opts.resyncMs !== undefined ? { resyncMs: opts.resyncMs } : {};
  const hcRef = { ...API.hostedCluster, namespace: cluster.namespace, name: cluster.name };
  const hcName = describeRef(hcRef);
  const failures: string[] = [];

  // ---- apply
  const applied = await applyObjects(kube, opts.objects, report);
  const nodePool = nodePoolOf(opts.objects);
  const npRef = refOf(nodePool);

  // ---- control plane
  const hc = await waitFor(
    kube,
    { ...API.hostedCluster, namespace: cluster.namespace, name: cluster.name },
    ([o]) => {
      const v = viewHostedCluster(o);
      return { done: v.available, value: o, state: v.summary };
    },
    {
      what: `${hcName} to be Available`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'control-plane', object: hcName, message: s }),
      hint: 'the hosted control plane pods run in the control plane namespace: oc get pods -n ' + agentNs,
    },
  );
  const releaseVersion = field(hc, 'status.version.desired.version') as string | undefined;

  // ---- discovery ISO
  const infraEnvName = opts.objects.find((o) => o.kind === 'InfraEnv')?.metadata.name ?? cluster.name;
  const ieName = describeRef({ kind: 'InfraEnv', namespace: agentNs, name: infraEnvName });
  await waitFor(
    kube,
    { ...API.infraEnv, namespace: agentNs, name: infraEnvName },
    ([o]) => {
      const v = viewInfraEnv(o);
      return {
        done: v.isoReady,
        state: v.summary,
        ...(v.error
          ? {
              failed: new AirgapError('ISO_CREATION_FAILED', `${ieName}: ${v.error}`, {
                hint:
                  'check the AgentServiceConfig (oc get agentserviceconfig agent -o yaml) and the pull secret in ' +
                  agentNs,
              }),
            }
          : {}),
      };
    },
    {
      what: `${ieName} discovery ISO`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'iso', object: ieName, message: s }),
    },
  );

  // ---- hosts: BareMetalHosts only once the discovery ISO exists (the seeds' order)
  applied.push(...(await applyObjects(kube, opts.hostObjects, report, 'hosts')));
  const hostSet = new Set(opts.hosts);
  const hostViews = await waitFor(
    kube,
    { ...API.bareMetalHost, namespace: agentNs, labelSelector: `${INFRAENV_LABEL}=${infraEnvName}` },
    (objs) => {
      const views = objs.filter((o) => hostSet.has(o.metadata.name)).map(viewBareMetalHost);
      for (const v of views)
        report({
          phase: 'hosts',
          object: describeRef({ kind: 'BareMetalHost', namespace: agentNs, name: v.name }),
          message: v.error ? `${v.state}: ${v.error}` : v.state,
          ...(v.error ? { level: 'error' as const } : {}),
        });
      const settled = views.filter((v) => v.provisioned || v.error);
      return {
        done: settled.length === hostSet.size,
        value: views,
        state: `${views.filter((v) => v.provisioned).length}/${hostSet.size} hosts provisioned${
          views.some((v) => v.error) ? `, ${views.filter((v) => v.error).length} failed` : ''
        }; ${
          views
            .filter((v) => !v.provisioned && !v.error)
            .map((v) => `${v.name} ${v.state}`)
            .join(', ') || 'none pending'
        }`,
      };
    },
    { what: `the BareMetalHosts in ${agentNs} to be provisioned`, timeoutMs, ...resync },
  );
  const failedHosts = hostViews.filter((v) => v.error);
  for (const h of failedHosts) failures.push(`host ${h.name}: ${h.error}`);
  const goodHosts = hostViews.filter((v) => v.provisioned).map((v) => v.name);
  if (goodHosts.length === 0)
    throw new AirgapError(
      'NO_HOSTS_PROVISIONED',
      `no host of ${cluster.name} provisioned: ${failures.join('; ')}`,
      {
        hint: 'check each BMC address and credentials: oc get bmh -n ' + agentNs,
      },
    );

  // ---- agents
  const approved = new Set<string>();
  const agentErrors = new Map<string, string>();
  const agents = await waitFor(
    kube,
    { ...API.agent, namespace: agentNs },
    (objs) => {
      const byHost = new Map<string, KubeObject>();
      for (const a of objs) {
        const host = a.metadata.labels?.[BMH_LABEL];
        if (host && goodHosts.includes(host)) byHost.set(host, a);
      }
      const pending: string[] = [];
      for (const host of goodHosts) {
        const a = byHost.get(host);
        if (!a) {
          pending.push(`${host}: no Agent yet (the host boots the discovery ISO)`);
          continue;
        }
        const v = viewAgent(a);
        const name = describeRef({ kind: 'Agent', namespace: agentNs, name: a.metadata.name });
        // Input the site gave that the host cannot satisfy (a root device hint that matches no
        // disk): waiting would not fix it, so the host fails and the others go on.
        const synced = findCondition(a, 'SpecSynced');
        if (synced?.status === 'False' && synced.reason === 'InputError') {
          if (!agentErrors.has(host)) {
            agentErrors.set(host, synced.message ?? 'the Agent refused its spec');
            report({
              phase: 'agents',
              object: name,
              level: 'error',
              message: `${host}: ${synced.message ?? synced.reason}`,
            });
          }
          continue;
        }
        agentErrors.delete(host);
        report({ phase: 'agents', object: name, message: agentLine(v, host) });
        if (!v.approved && opts.approveAgents && !approved.has(a.metadata.name)) {
          approved.add(a.metadata.name);
          void kube
            .mergePatch(refOf(a), { spec: { approved: true } })
            .then(() => report({ phase: 'agents', object: name, message: 'approved' }))
            .catch((e: unknown) =>
              report({
                phase: 'agents',
                object: name,
                level: 'error',
                message: `approve failed: ${String(e)}`,
              }),
            );
        }
        const why = [
          ...(!v.approved
            ? [
                opts.approveAgents
                  ? 'being approved'
                  : 'not approved (set cluster.approveAgents: true in the site file, or approve it)',
              ]
            : []),
          ...(!v.validated ? [describeCondition(findCondition(a, 'Validated'), 'Validated')] : []),
          ...(!v.connected ? [describeCondition(findCondition(a, 'Connected'), 'Connected')] : []),
        ];
        if (why.length) pending.push(`${host} (Agent ${a.metadata.name}): ${why.join(', ')}`);
      }
      return {
        done: pending.length === 0,
        value: goodHosts.filter((h) => !agentErrors.has(h)).map((h) => byHost.get(h) as KubeObject),
        state: pending.length ? `waiting for ${pending.join('; ')}` : 'every Agent is ready',
      };
    },
    {
      what: `an approved, validated Agent for each provisioned host in ${agentNs}`,
      timeoutMs,
      ...resync,
      onState: (s) =>
        report({ phase: 'agents', message: s, ...(s.startsWith('waiting for') ? { transient: true } : {}) }),
    },
  );
  for (const [host, why] of agentErrors) failures.push(`host ${host}: ${why}`);
  if (agents.length === 0)
    throw new AirgapError(
      'NO_AGENTS_READY',
      `no Agent of ${cluster.name} can be installed: ${failures.join('; ')}`,
      {
        hint: 'fix what the messages name in the site file (hosts[].rootDeviceHints, BMC settings) and run this again',
      },
    );

  // ---- scale
  const desired = agents.length;
  const liveNp = await kube.get(npRef);
  if (Number(field(liveNp, 'spec.replicas') ?? 0) !== desired) {
    await kube.apply({ ...nodePool, spec: { ...nodePool.spec, replicas: desired } });
    report({ phase: 'scale', object: describeRef(npRef), message: `replicas ${desired}` });
  } else {
    report({ phase: 'scale', object: describeRef(npRef), message: `replicas ${desired} (already)` });
  }

  // ---- install: Agents bound and installed, NodePool ready
  const agentNames = new Set(agents.map((a) => a.metadata.name));
  await waitFor(
    kube,
    { ...API.agent, namespace: agentNs },
    (objs) => {
      const mine = objs.filter((a) => agentNames.has(a.metadata.name));
      const boundHere = mine.filter((a) => viewAgent(a).boundTo === cluster.name);
      const lines: string[] = [];
      for (const a of mine) {
        const v = viewAgent(a);
        const name = describeRef({ kind: 'Agent', namespace: agentNs, name: a.metadata.name });
        report({ phase: 'install', object: name, message: agentLine(v, a.metadata.labels?.[BMH_LABEL]) });
        if (v.boundTo !== cluster.name) {
          const why = whyAgentNotPicked(a, cluster.name, opts.agentLabelSelector);
          lines.push(
            `${v.hostname ?? a.metadata.name} not picked by the NodePool${why.length ? `: ${why.join(', ')}` : ' yet'}`,
          );
        } else if (!v.installed)
          lines.push(`${v.hostname ?? a.metadata.name} ${v.stage ?? v.state ?? 'installing'}`);
      }
      const installed = boundHere.filter((a) => viewAgent(a).installed).length;
      return {
        done: installed === agentNames.size,
        state: `${installed}/${agentNames.size} Agents installed${lines.length ? `; ${lines.join('; ')}` : ''}`,
      };
    },
    {
      what: `the Agents of ${cluster.name} to be installed`,
      timeoutMs,
      ...resync,
      // Each Agent reports its own line; the summary is a redrawn line on a terminal.
      onState: (s) => report({ phase: 'install', message: s, transient: true }),
    },
  );
  const np = await waitFor(
    kube,
    { ...API.nodePool, namespace: npRef.namespace, name: npRef.name },
    ([o]) => {
      const v = viewNodePool(o);
      return { done: v.ready && v.current === desired, value: v, state: v.summary };
    },
    {
      what: `${describeRef(npRef)} to have ${desired} ready nodes`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'install', object: describeRef(npRef), message: s }),
    },
  );

  // ---- complete
  const done = await waitFor(
    kube,
    { ...API.hostedCluster, namespace: cluster.namespace, name: cluster.name },
    ([o]) => {
      const v = viewHostedCluster(o);
      return { done: !!v.completionTime, value: v, state: v.summary };
    },
    {
      what: `${hcName} to complete its version rollout (status.version.history[0].completionTime)`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'complete', object: hcName, message: s }),
      hint: 'the data plane is still rolling out: airgap cluster status shows each part',
    },
  );

  // ---- kubeconfig and nodes
  const kubeconfig = await writeHostedKubeconfig(kube, cluster, opts.kubeconfigOut);
  report({ phase: 'kubeconfig', message: `admin kubeconfig written to ${opts.kubeconfigOut} (0600)` });
  const guest = Kube.connect({ kubeconfigText: kubeconfig });
  const nodes = await waitFor(
    guest,
    { ...API.node },
    (objs) => {
      const ns = objs.map((n) => ({ name: n.metadata.name, ready: conditionIs(n, 'Ready') }));
      const ready = ns.filter((n) => n.ready).length;
      return {
        done: ready >= desired,
        value: ns,
        state: `${ready}/${desired} nodes Ready${ns.length ? ` (${ns.map((n) => `${n.name} ${n.ready ? 'Ready' : 'NotReady'}`).join(', ')})` : ''}`,
      };
    },
    {
      what: `${desired} Ready nodes in the hosted cluster ${cluster.name}`,
      timeoutMs,
      ...resync,
      onState: (s) => report({ phase: 'kubeconfig', message: s }),
    },
  );

  const agentViews = new Map(agents.map((a) => [a.metadata.labels?.[BMH_LABEL] ?? '', viewAgent(a)]));
  return {
    cluster,
    ...((done.version ?? releaseVersion) ? { releaseVersion: done.version ?? releaseVersion } : {}),
    applied,
    hosts: hostViews.map((h) => {
      const a = agentViews.get(h.name);
      return {
        name: h.name,
        state: h.state,
        ...(a ? { agent: a.name } : {}),
        ...(a?.hostname ? { hostname: a.hostname } : {}),
        ...(a?.role ? { role: a.role } : {}),
        ...(h.error ? { error: h.error } : {}),
      };
    }),
    nodePool: { desired, ready: np.current },
    kubeconfig: opts.kubeconfigOut,
    nodes,
    failures,
  };
}

function agentLine(v: AgentView, host?: string): string {
  const flags = [
    v.approved ? 'approved' : 'not approved',
    v.validated ? 'validated' : 'not validated',
    v.connected ? 'connected' : 'disconnected',
  ];
  const where = [
    v.state,
    v.stage && v.stage !== v.state ? v.stage : undefined,
    v.percent !== undefined ? `${v.percent}%` : undefined,
  ]
    .filter(Boolean)
    .join(', ');
  return `${v.hostname ?? '?'}${v.role ? ` role ${v.role}` : ''}${host ? ` (host ${host})` : ''}: ${where || 'discovering'}; ${flags.join(', ')}${v.boundTo ? `; bound to ${v.boundTo}` : ''}`;
}

/**
 * The hosted cluster's admin kubeconfig: the Secret named by HostedCluster `status.kubeconfig`
 * (key `kubeconfig`) in the HostedCluster's namespace, written 0600. Returns its text.
 */
export async function writeHostedKubeconfig(
  kube: Kube,
  cluster: ClusterIdentity,
  out: string,
): Promise<string> {
  const text = await hostedKubeconfig(kube, cluster);
  await writeFileAtomic(out, text, { mode: 0o600 });
  return text;
}

export async function hostedKubeconfig(kube: Kube, cluster: ClusterIdentity): Promise<string> {
  const hc = await kube.get({ ...API.hostedCluster, namespace: cluster.namespace, name: cluster.name });
  if (!hc)
    throw new AirgapError(
      'CLUSTER_NOT_FOUND',
      `HostedCluster ${cluster.namespace}/${cluster.name} does not exist`,
      {
        where: kube.server,
        hint: 'check --name and --namespace (oc get hostedcluster -A)',
        exitCode: 2,
      },
    );
  const secretName = field(hc, 'status.kubeconfig.name') as string | undefined;
  if (!secretName)
    throw new AirgapError(
      'KUBECONFIG_NOT_READY',
      `HostedCluster ${cluster.namespace}/${cluster.name} does not report a kubeconfig yet`,
      {
        hint: 'wait for the control plane to be Available (airgap cluster status)',
      },
    );
  const secret = await kube.get({ ...API.secret, namespace: cluster.namespace, name: secretName });
  const data = secret?.data?.kubeconfig;
  if (!data)
    throw new AirgapError(
      'KUBECONFIG_NOT_READY',
      `Secret ${cluster.namespace}/${secretName} has no kubeconfig key`,
      {
        hint: 'wait for the control plane to be Available (airgap cluster status)',
      },
    );
  return Buffer.from(data, 'base64').toString('utf8');
}
