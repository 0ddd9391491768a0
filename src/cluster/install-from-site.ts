/**
 * `airgap install hub` and `airgap install cluster` as the commands run them, from a site file:
 * the preflight (site checked, its files read, for a cluster the release resolved in the mirror),
 * the objects rendered, and then either written one per file (--render) or applied and driven to
 * the end on the hub. The commands only turn flags into options and print the typed result.
 */
import { CPU_ARCHITECTURE, type SiteOverrides } from './site/index.js';
import { renderCluster, renderHub } from './render/index.js';
import { connectHub, type HubConnection } from './identity.js';
import { clusterPreflight } from './install/preflight.js';
import { installCluster, type InstallClusterResult } from './install-cluster.js';
import { installHub, type InstallHubResult } from './install-hub.js';
import { prepareCluster, prepareHub } from './prepare.js';
import type { InstallReporter } from './progress.js';
import type { ReleaseResolution } from './release.js';
import { writeRendered } from './render-out.js';
import type { RenderedObject } from './render/types.js';

interface FromSiteOptions {
  /** The site file (docs/site-config.md). */
  siteFile: string;
  /** The management cluster; not connected to when rendering a cluster. */
  hub: HubConnection;
  /** Write the manifests into this directory instead of applying them. */
  renderDir?: string;
  /** Progress: preflight warnings and every phase. */
  report: InstallReporter;
  /** Limit of each wait. */
  phaseTimeoutMs: number;
}

export type InstallHubFromSiteOptions = FromSiteOptions;

export type InstallHubFromSiteResult =
  { mode: 'render'; files: string[] } | { mode: 'install'; result: InstallHubResult };

/** `airgap install hub`: prepare the site, render the hub objects, then write or apply them. */
export async function installHubFromSite(o: InstallHubFromSiteOptions): Promise<InstallHubFromSiteResult> {
  const prepared = await prepareHub({ siteFile: o.siteFile });
  for (const w of [...prepared.site.warnings, ...prepared.inputs.warnings])
    o.report({ phase: 'preflight', level: 'warn', message: w });
  const items = renderHub(prepared.resolved);
  if (o.renderDir) {
    const out = await writeRendered(o.renderDir, items);
    return { mode: 'render', files: out.files };
  }
  const result = await installHub({
    kube: connectHub(o.hub),
    objects: items.map((i) => ({ object: i.object, step: i.step })),
    ...(prepared.site.hub.storageClass ? { storageClass: prepared.site.hub.storageClass } : {}),
    report: o.report,
    phaseTimeoutMs: o.phaseTimeoutMs,
  });
  return { mode: 'install', result };
}

export interface InstallClusterFromSiteOptions extends FromSiteOptions {
  /** --name, --namespace, --release: what replaces the site file's. */
  overrides?: SiteOverrides;
  /** With renderDir, also write the Secrets (0600). */
  renderSensitive?: boolean;
  /** Where the admin kubeconfig goes (0600). Default: ./<name>.kubeconfig. */
  kubeconfigOut?: string;
  /** Do not verify the mirror's certificate in the preflight. */
  insecureSkipTlsVerify?: boolean;
}

export type InstallClusterFromSiteResult =
  | { mode: 'render'; release: ReleaseResolution; files: string[]; omittedSecrets: number }
  | { mode: 'install'; release: ReleaseResolution; result: InstallClusterResult };

/**
 * `airgap install cluster`: prepare the site (the release resolved in the mirror, an existing
 * cluster's etcd key kept), render the cluster objects, then write them, or check the hub and run
 * the install (exit code 1 when `result.failures` is not empty).
 */
export async function installClusterFromSite(
  o: InstallClusterFromSiteOptions,
): Promise<InstallClusterFromSiteResult> {
  const kube = o.renderDir ? undefined : connectHub(o.hub);
  const prepared = await prepareCluster({
    siteFile: o.siteFile,
    ...(o.overrides ? { overrides: o.overrides } : {}),
    ...(kube ? { kube } : {}),
    ...(o.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
  });
  const { site, release } = prepared;
  for (const w of [...site.warnings, ...prepared.inputs.warnings])
    o.report({ phase: 'preflight', level: 'warn', message: w });
  if (release.unpinned)
    for (const line of release.unpinned) o.report({ phase: 'preflight', level: 'warn', message: line });
  else
    o.report({
      phase: 'preflight',
      message: `release ${release.version} = ${release.image}${release.resolvedFrom ? ` (from ${release.resolvedFrom})` : ''}; control plane operator ${release.controlPlaneOperatorImage}`,
    });
  const items = renderCluster(prepared.resolved);

  if (!kube) {
    const out = await writeRendered(o.renderDir!, items, { sensitive: o.renderSensitive });
    return { mode: 'render', release, files: out.files, omittedSecrets: out.omitted };
  }

  const cluster = { name: site.cluster.name, namespace: site.cluster.namespace };
  const hubCheck = await clusterPreflight({
    kube,
    cluster,
    releaseVersion: release.version,
    cpuArchitecture: CPU_ARCHITECTURE[site.cluster.nodePool.arch] ?? 'x86_64',
  });
  for (const w of hubCheck.warnings) o.report({ phase: 'preflight', level: 'warn', message: w });
  const result = await installCluster({
    kube,
    cluster,
    ...splitHostObjects(items),
    hosts: site.hosts.map((h) => h.name),
    approveAgents: site.cluster.approveAgents,
    ...(site.cluster.nodePool.agentLabelSelector
      ? { agentLabelSelector: site.cluster.nodePool.agentLabelSelector }
      : {}),
    kubeconfigOut: o.kubeconfigOut ?? `${site.cluster.name}.kubeconfig`,
    report: o.report,
    phaseTimeoutMs: o.phaseTimeoutMs,
  });
  return { mode: 'install', release, result };
}

/** The host objects are applied only once the discovery ISO exists; everything else first. */
function splitHostObjects(items: RenderedObject[]) {
  return {
    objects: items.filter((i) => i.step !== 'hosts').map((i) => i.object),
    hostObjects: items.filter((i) => i.step === 'hosts').map((i) => i.object),
  };
}
