/**
 * `airgap cluster upgrade`: update a hosted cluster through the mirror.
 *
 * 1. Preflight, before anything changes: the target release (`--to 4.18.3`, the site's release
 *    repository at that version's tag, or an image) resolved to its digest in the mirror, its
 *    payload read and every one of its component images found there (release.ts); a downgrade
 *    refused; the update from the running version checked in the cluster's channel
 *    (upgrade-edge.ts: `--graph-url`'s update service, else the graph-data image in the mirror,
 *    else UPDATE_URL_OVERRIDE's update service): a recommended edge goes on; a conditional one,
 *    none, or one nothing could check needs `--force`, and its risks are printed.
 * 2. The HostedCluster's `spec.release.image` (and its control-plane-operator pin) patched, and
 *    the control plane's version history followed until the new entry is Completed.
 * 3. Each NodePool's `spec.release.image` patched and followed until it reports the version with
 *    all its nodes Ready.
 * Each step looks at what is there first, so a run that stopped is started again and goes on.
 */
import { compareSemver, parseReference, parseSemver } from '../mirror/index.js';
import { hasCode, usageError } from '../util/errors.js';
import { field } from './conditions.js';
import { API, viewControlPlaneUpdate, viewNodePoolUpdate } from './describe.js';
import { ClusterError } from './errors.js';
import { connectHub, type HubConnection } from './identity.js';
import { describeRef, type Kube, type KubeObject, type ObjectRef } from './kube.js';
import { prepareSite, type PreparedSite } from './prepare.js';
import type { InstallReporter } from './progress.js';
import { resolveRelease, type ReleaseResolution } from './release.js';
import { judgeUpdateEdge, type UpdateEdge } from './upgrade-edge.js';
import { waitFor } from './wait.js';

/** The annotation HyperShift reads for the control-plane-operator image of a disconnected cluster. */
const CPO_ANNOTATION = 'hypershift.openshift.io/control-plane-operator-image';

const ARCH_TAG: Record<string, string> = {
  amd64: 'x86_64',
  arm64: 'aarch64',
  ppc64le: 'ppc64le',
  s390x: 's390x',
};

export interface UpgradeOptions {
  siteFile: string;
  /** `x.y.z`, or a release image (tag or digest). */
  to: string;
  hub: HubConnection;
  /** Go on without a recommended update edge (the risks are printed). */
  force?: boolean;
  /** Print the patches; change nothing. */
  dryRun?: boolean;
  /** The update service, asked first; else the graph image in the mirror, else UPDATE_URL_OVERRIDE. */
  graphUrl?: string;
  report: InstallReporter;
  phaseTimeoutMs: number;
  resyncMs?: number;
  insecureSkipTlsVerify?: boolean;
}

export interface UpgradeResult {
  cluster: string;
  from: string;
  to: ReleaseResolution;
  /** How the update was judged (recommended, conditional with risks, none, unchecked) and by what. */
  edge: UpdateEdge;
  /**
   * The patches, in the order they are (or would be) applied; `change` is false for an object
   * already at the target (it is left alone: nothing is patched, nothing said to be).
   */
  patches: { object: string; patch: Record<string, unknown>; change: boolean }[];
  dryRun: boolean;
}

/** The release image `--to` names: a version is the site's release repository at `<version>-<arch>`. */
function targetImage(to: string, siteRelease: string, arch: string): string {
  if (to.includes('/')) return to;
  if (!parseSemver(to)) {
    throw usageError(ClusterError.UPGRADE_TARGET_INVALID, `--to "${to}" is neither a version nor an image`, {
      hint: 'give the version (e.g. 4.18.3) or the release image in the mirror (…/release-images@sha256:…)',
    });
  }
  const ref = parseReference(siteRelease);
  return `${ref.registry}/${ref.repository}:${to}-${ARCH_TAG[arch] ?? arch}`;
}

/** UPGRADE_NOT_RECOMMENDED: why the update needs --force, and what judged it. */
function notRecommended(edge: UpdateEdge, from: string, to: string, channel: string) {
  const by = edge.source ? ` (${edge.source})` : '';
  const why =
    edge.kind === 'conditional'
      ? `the update ${from} → ${to} is conditional in ${channel}${by}: ${edge.risks.join('; ')}`
      : edge.kind === 'none'
        ? `${channel} recommends no update ${from} → ${to}${by}${edge.reason ? `: ${edge.reason}` : ''}`
        : edge.reason
          ? `cannot check ${from} → ${to}: ${edge.reason}`
          : `no update graph to check ${from} → ${to} against`;
  const hint =
    edge.kind === 'unchecked'
      ? edge.reason
        ? `mirror the graph data of ${channel} (airgap mirror with ${channel} among platform.channels and platform.graph: true), give --graph-url (the site's OpenShift Update Service), or --force to update without the check`
        : "mirror the graph data (airgap mirror with platform.graph: true), give --graph-url (the site's OpenShift Update Service), or --force to update without the check"
      : 'update in steps the graph recommends (airgap mirror list releases --channel shows them), or --force once the risks are understood';
  return usageError(ClusterError.UPGRADE_NOT_RECOMMENDED, why, { hint });
}

/** The cluster being updated: the site's HostedCluster on the hub. */
interface UpgradeTarget {
  kube: Kube;
  ns: string;
  name: string;
  hcRef: ObjectRef;
  hc: KubeObject;
}

/** The patches planned: the HostedCluster's, then one per NodePool of the cluster. */
interface UpgradePatches {
  hcPatch: Record<string, unknown>;
  pools: KubeObject[];
  poolPatch: Record<string, unknown>;
  patches: UpgradeResult['patches'];
}

/** `airgap cluster upgrade`; see the file comment. */
export async function upgradeCluster(o: UpgradeOptions): Promise<UpgradeResult> {
  const { site, inputs } = await prepareSite({ siteFile: o.siteFile });
  const arch = site.cluster.nodePool.arch ?? 'amd64';
  const release = await resolveTarget(o, { site, inputs }, arch);
  const t = await findHostedCluster(o, site.cluster.namespace, site.cluster.name);
  const { running, edge } = await checkUpdate(o, { site, inputs }, arch, t, release);
  const planned = await planPatches(t, release);
  const result: UpgradeResult = {
    cluster: `${t.ns}/${t.name}`,
    from: running,
    to: release,
    edge,
    patches: planned.patches,
    dryRun: !!o.dryRun,
  };
  if (o.dryRun) return result;

  const wait = { timeoutMs: o.phaseTimeoutMs, ...(o.resyncMs ? { resyncMs: o.resyncMs } : {}) };
  await updateControlPlane(o, t, planned, release, wait);
  await updateNodePools(o, t, planned, release, wait);
  return result;
}

/** The target release resolved in the mirror, every component found there; RELEASE_NOT_IN_MIRROR says how to mirror it. */
async function resolveTarget(o: UpgradeOptions, p: PreparedSite, arch: string): Promise<ReleaseResolution> {
  const { site, inputs } = p;
  const targetRef = targetImage(o.to, site.cluster.release.image, arch);
  return resolveRelease({
    release: targetRef,
    imageContentSources: inputs.imageContentSources,
    pullSecretFile: site.cluster.pullSecretFile,
    arch,
    caFiles: site.mirror.caFiles,
    checkComponents: true,
    ...(o.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
  }).catch((e: unknown) => {
    if (!hasCode(e, ClusterError.RELEASE_NOT_IN_MIRROR)) throw e;
    throw usageError(
      ClusterError.RELEASE_NOT_IN_MIRROR,
      `${o.to} is not in the mirror: there is no ${targetRef}`,
      {
        hint: parseSemver(o.to)
          ? `mirror it first (airgap mirror, with ${o.to} within platform.channels' minVersion..maxVersion; airgap mirror list releases --channel shows what a channel holds)`
          : 'give a release image the mirror holds, or mirror it first (airgap mirror)',
      },
    );
  });
}

/** The site's HostedCluster on the hub; UPGRADE_NO_CLUSTER when there is none. */
async function findHostedCluster(o: UpgradeOptions, ns: string, name: string): Promise<UpgradeTarget> {
  const kube = connectHub(o.hub);
  const hcRef = { ...API.hostedCluster, namespace: ns, name };
  const hc = await kube.get(hcRef);
  if (!hc) {
    throw usageError(ClusterError.UPGRADE_NO_CLUSTER, `there is no HostedCluster ${ns}/${name} on the hub`, {
      hint: 'install it first (airgap install cluster -f <site>), or check --kubeconfig and the site file',
    });
  }
  return { kube, ns, name, hcRef, hc };
}

/**
 * The update from the running version, judged: a downgrade refused, an update the cluster's channel
 * does not recommend refused without --force, its risks said as warnings.
 */
async function checkUpdate(
  o: UpgradeOptions,
  p: PreparedSite,
  arch: string,
  t: UpgradeTarget,
  release: ReleaseResolution,
): Promise<{ running: string; edge: UpdateEdge }> {
  const { site, inputs } = p;
  const { hc, ns, name } = t;
  const history =
    (field(hc, 'status.version.history') as { version?: string; state?: string }[] | undefined) ?? [];
  const running = history.find((h) => h.state === 'Completed')?.version ?? '';
  const from = parseSemver(running);
  const target = parseSemver(release.version);
  if (from && target && compareSemver(target, from) < 0) {
    throw usageError(
      ClusterError.UPGRADE_DOWNGRADE,
      `${ns}/${name} runs ${running}; ${release.version} would be a downgrade, which OpenShift does not support`,
      { hint: `give a version after ${running}` },
    );
  }
  const same = from && target && compareSemver(target, from) === 0;
  const channel =
    (field(hc, 'spec.channel') as string | undefined) ?? `stable-${target?.major}.${target?.minor}`;
  const edge: UpdateEdge = same
    ? { kind: 'recommended', risks: [] }
    : await judgeUpdateEdge({
        from: running,
        to: release,
        channel,
        arch,
        ...(o.graphUrl ? { graphUrl: o.graphUrl } : {}),
        siteRelease: site.cluster.release.image,
        imageContentSources: inputs.imageContentSources,
        pullSecretFile: site.cluster.pullSecretFile,
        caFiles: site.mirror.caFiles,
        ...(o.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
        warn: (message) => o.report({ phase: 'preflight', level: 'warn', message }),
      });
  if (edge.kind !== 'recommended' && !o.force) throw notRecommended(edge, running, release.version, channel);
  for (const r of edge.risks) o.report({ phase: 'preflight', level: 'warn', message: `update risk: ${r}` });
  return { running, edge };
}

/** The patches to the release: the HostedCluster's (with its control-plane-operator pin, when pinned), then each NodePool's. */
async function planPatches(t: UpgradeTarget, release: ReleaseResolution): Promise<UpgradePatches> {
  const { kube, ns, name, hc, hcRef } = t;
  const cpoPinned = typeof hc.metadata?.annotations?.[CPO_ANNOTATION] === 'string';
  const hcPatch: Record<string, unknown> = {
    spec: { release: { image: release.image } },
    ...(cpoPinned && release.controlPlaneOperatorImage
      ? { metadata: { annotations: { [CPO_ANNOTATION]: release.controlPlaneOperatorImage } } }
      : {}),
  };
  const pools = (await kube.list(API.nodePool.apiVersion, API.nodePool.kind, { namespace: ns })).items.filter(
    (np) => np.spec?.clusterName === name,
  );
  const poolPatch = { spec: { release: { image: release.image } } };
  const patches = [
    { object: describeRef(hcRef), patch: hcPatch, change: field(hc, 'spec.release.image') !== release.image },
    ...pools.map((np) => ({
      object: describeRef({ ...API.nodePool, namespace: ns, name: np.metadata!.name! }),
      patch: poolPatch,
      change: field(np, 'spec.release.image') !== release.image,
    })),
  ];
  return { hcPatch, pools, poolPatch, patches };
}

/** The control plane first, as HyperShift requires: patched (when it changes), then its version history followed until complete. */
async function updateControlPlane(
  o: UpgradeOptions,
  t: UpgradeTarget,
  planned: UpgradePatches,
  release: ReleaseResolution,
  wait: { timeoutMs: number; resyncMs?: number },
): Promise<void> {
  const { kube, hcRef } = t;
  if (planned.patches[0]!.change) await kube.mergePatch(hcRef, planned.hcPatch);
  await waitFor(
    kube,
    hcRef,
    ([obj]) => {
      const u = viewControlPlaneUpdate(obj, release.image);
      return { done: u.done, value: obj, state: u.state };
    },
    {
      what: `${describeRef(hcRef)} to complete its update to ${release.version}`,
      ...wait,
      onState: (s) =>
        o.report({
          phase: 'control-plane',
          object: describeRef(hcRef),
          message: s,
          ...(s.includes('not succeeding:') ? { level: 'warn' as const } : {}),
        }),
      hint: 'the control plane update is under way; what holds it is named above (airgap cluster status shows every condition). Run the same command again to keep waiting',
    },
  );
}

/** Then each NodePool, one after the other: patched (when it changes), then followed until all its nodes run the version. */
async function updateNodePools(
  o: UpgradeOptions,
  t: UpgradeTarget,
  planned: UpgradePatches,
  release: ReleaseResolution,
  wait: { timeoutMs: number; resyncMs?: number },
): Promise<void> {
  const { kube, ns } = t;
  for (const [i, np] of planned.pools.entries()) {
    const ref = { ...API.nodePool, namespace: ns, name: np.metadata!.name! };
    if (planned.patches[i + 1]!.change) await kube.mergePatch(ref, planned.poolPatch);
    await waitFor(
      kube,
      ref,
      ([obj]: (KubeObject | undefined)[]) => {
        const u = viewNodePoolUpdate(obj, release.version);
        return { done: u.done, value: obj, state: u.state };
      },
      {
        what: `${describeRef(ref)} to run ${release.version} on all its nodes`,
        ...wait,
        onState: (s) => o.report({ phase: 'nodepool', object: describeRef(ref), message: s }),
        hint: 'the nodes are updated one at a time; a node named NotReady above did not come back from its reboot: check its host (airgap cluster status), then run the same command again',
      },
    );
  }
}
