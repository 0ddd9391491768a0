/**
 * `airgap cluster upgrade`: update a hosted cluster through the mirror.
 *
 * 1. Preflight, before anything changes: the target release (`--to 4.18.3`, the site's release
 *    repository at that version's tag, or an image) resolved to its digest in the mirror, its
 *    payload read and its control-plane-operator image found there (release.ts); a downgrade
 *    refused; the update from the running version checked against the update graph (an
 *    OpenShift Update Service, `--graph-url` / UPDATE_URL_OVERRIDE): a recommended edge goes on, a
 *    conditional one or none needs `--force` and its risks are printed.
 * 2. The HostedCluster's `spec.release.image` (and its control-plane-operator pin) patched, and
 *    the control plane's version history followed until the new entry is Completed.
 * 3. Each NodePool's `spec.release.image` patched and followed until it reports the version with
 *    all its nodes Ready.
 * Each step looks at what is there first, so a run that stopped is started again and goes on.
 */
import { compareSemver, fetchGraph, graphEndpoint, parseReference, parseSemver } from '../mirror/index.js';
import { usageError } from '../util/errors.js';
import { field } from './conditions.js';
import { API, viewHostedCluster, viewNodePool } from './describe.js';
import { ClusterError } from './errors.js';
import { connectHub, type HubConnection } from './identity.js';
import { describeRef, type KubeObject } from './kube.js';
import { prepareSite } from './prepare.js';
import type { InstallReporter } from './progress.js';
import { resolveRelease, type ReleaseResolution } from './release.js';
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
  /** The update service; default UPDATE_URL_OVERRIDE. */
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
  /** How the update was judged: recommended, conditional (with risks), unknown (no graph), forced. */
  edge: { kind: 'recommended' | 'conditional' | 'none' | 'unchecked'; risks: string[] };
  /** The patches, in the order they are (or would be) applied. */
  patches: { object: string; patch: Record<string, unknown> }[];
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

/** Is there an update edge from → to in `channel`: recommended, conditional (risks), or none. */
async function updateEdge(
  from: string,
  to: string,
  channel: string,
  arch: string,
  graphUrl: string | undefined,
): Promise<UpgradeResult['edge']> {
  const endpoint = graphUrl ?? process.env.UPDATE_URL_OVERRIDE;
  if (!endpoint) return { kind: 'unchecked', risks: [] };
  const graph = await fetchGraph({ channel, arch, graphUrl: graphEndpoint(endpoint), retries: 1 });
  const at = (v: string) => graph.nodes.findIndex((n) => n.version === v);
  const [a, b] = [at(from), at(to)];
  if (a >= 0 && b >= 0 && graph.edges.some(([x, y]) => x === a && y === b))
    return { kind: 'recommended', risks: [] };
  const conditional = graph.conditionalEdges.find((c) => c.edges.some((e) => e.from === from && e.to === to));
  if (conditional)
    return {
      kind: 'conditional',
      risks: conditional.risks.map((r) => `${r.name}: ${r.message}${r.url ? ` (${r.url})` : ''}`),
    };
  return { kind: 'none', risks: [] };
}

/** `airgap cluster upgrade`; see the file comment. */
export async function upgradeCluster(o: UpgradeOptions): Promise<UpgradeResult> {
  const { site, inputs } = await prepareSite({ siteFile: o.siteFile });
  const arch = site.cluster.nodePool.arch ?? 'amd64';
  const release = await resolveRelease({
    release: targetImage(o.to, site.cluster.release.image, arch),
    imageContentSources: inputs.imageContentSources,
    pullSecretFile: site.cluster.pullSecretFile,
    arch,
    caFiles: site.mirror.caFiles,
    ...(o.insecureSkipTlsVerify ? { insecureSkipTlsVerify: true } : {}),
  });
  const kube = connectHub(o.hub);
  const ns = site.cluster.namespace;
  const name = site.cluster.name;
  const hcRef = { ...API.hostedCluster, namespace: ns, name };
  const hc = await kube.get(hcRef);
  if (!hc) {
    throw usageError(ClusterError.UPGRADE_NO_CLUSTER, `there is no HostedCluster ${ns}/${name} on the hub`, {
      hint: 'install it first (airgap install cluster -f <site>), or check --kubeconfig and the site file',
    });
  }
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
  const edge = same
    ? ({ kind: 'recommended', risks: [] } as UpgradeResult['edge'])
    : await updateEdge(running, release.version, channel, arch, o.graphUrl);
  if (edge.kind !== 'recommended' && !o.force) {
    const why =
      edge.kind === 'conditional'
        ? `the update ${running} → ${release.version} is conditional in ${channel}: ${edge.risks.join('; ')}`
        : edge.kind === 'none'
          ? `${channel} recommends no update ${running} → ${release.version}`
          : `no update graph to check ${running} → ${release.version} against`;
    throw usageError(ClusterError.UPGRADE_NOT_RECOMMENDED, why, {
      hint:
        edge.kind === 'unchecked'
          ? 'give --graph-url (the OpenShift Update Service of the site), or --force to update without the check'
          : 'update in steps the graph recommends (airgap mirror list releases --channel shows them), or --force once the risks are understood',
    });
  }
  for (const r of edge.risks) o.report({ phase: 'preflight', level: 'warn', message: `update risk: ${r}` });

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
    { object: describeRef(hcRef), patch: hcPatch },
    ...pools.map((np) => ({
      object: describeRef({ ...API.nodePool, namespace: ns, name: np.metadata!.name! }),
      patch: poolPatch,
    })),
  ];
  const result: UpgradeResult = {
    cluster: `${ns}/${name}`,
    from: running,
    to: release,
    edge,
    patches,
    dryRun: !!o.dryRun,
  };
  if (o.dryRun) return result;

  const wait = { timeoutMs: o.phaseTimeoutMs, ...(o.resyncMs ? { resyncMs: o.resyncMs } : {}) };
  // The control plane first, as HyperShift requires: its version history must complete.
  if (field(hc, 'spec.release.image') !== release.image) await kube.mergePatch(hcRef, hcPatch);
  await waitFor(
    kube,
    hcRef,
    ([obj]) => {
      const top = (
        field(obj, 'status.version.history') as { image?: string; state?: string }[] | undefined
      )?.[0];
      return {
        done: top?.image === release.image && top.state === 'Completed',
        value: obj,
        state: viewHostedCluster(obj).summary,
      };
    },
    {
      what: `${describeRef(hcRef)} to complete its update to ${release.version}`,
      ...wait,
      onState: (s) => o.report({ phase: 'control-plane', object: describeRef(hcRef), message: s }),
      hint: 'the control plane update is under way: airgap cluster status shows its conditions',
    },
  );
  // Then each NodePool, one after the other.
  for (const np of pools) {
    const ref = { ...API.nodePool, namespace: ns, name: np.metadata!.name! };
    if (field(np, 'spec.release.image') !== release.image) await kube.mergePatch(ref, poolPatch);
    await waitFor(
      kube,
      ref,
      ([obj]: (KubeObject | undefined)[]) => {
        const v = viewNodePool(obj);
        return {
          done: field(obj, 'status.version') === release.version && v.ready,
          value: obj,
          state: `${v.summary}; version ${String(field(obj, 'status.version') ?? '?')}`,
        };
      },
      {
        what: `${describeRef(ref)} to run ${release.version} on all its nodes`,
        ...wait,
        onState: (s) => o.report({ phase: 'nodepool', object: describeRef(ref), message: s }),
        hint: 'the nodes are being updated: airgap cluster status shows each host and Agent',
      },
    );
  }
  return result;
}
