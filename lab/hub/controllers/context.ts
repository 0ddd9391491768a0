/**
 * What every simulated controller gets: the store, the resolved options, a dwell clock, the registry of
 * guest (hosted cluster) API servers, and a way to report errors and to run async work that `stop()`
 * waits for.
 */
import type { HubStore, KubeObject } from '../types.js';
import type { Dwell } from './util.js';

/** A running guest (hosted cluster) API server, as `ControllerOptions.guest.startApi` returns it. */
export interface GuestApi {
  url: string;
  caPem: string;
  token: string;
  store: HubStore;
  close(): Promise<void>;
}

export interface ControllerFaults {
  /** BareMetalHost names whose provisioning fails with a `provisioning error`. */
  failProvisioning?: string[];
  /** Every InfraEnv reports ImageCreated=False (the base ISO cannot be fetched). */
  isoCreationFailure?: boolean;
  /**
   * The hub has no ClusterVersion `version` (seedHub leaves it out) and the HyperShift operator refuses
   * HostedClusters (SupportedHostedCluster=False) while it is missing.
   */
  clusterVersionRequired?: boolean;
  /**
   * Node (host) names that do not come back from the reboot of a NodePool update: the Node stays
   * NotReady (Ready=Unknown, NodeStatusUnknown, 'Kubelet stopped posting node status.'), so the update
   * never finishes (UpdatingVersion stays True, status.version stays put). With upgradeType Replace the
   * host never reboots into discovery, so its Machine also stays Deleting.
   */
  nodeNotReturning?: string[];
  /**
   * A HostedCluster update (a new spec.release.image after the first install) never completes: the
   * hosted cluster operator kube-apiserver is degraded, so the new history entry stays Partial and
   * ClusterVersionSucceeding is False (ClusterOperatorDegraded); the control plane stays Available.
   */
  controlPlaneUpdateStuck?: boolean;
  /**
   * Steps assisted-service takes to notice that an Agent lost its cluster reference (scale down): until
   * then the Agent keeps its installed state, unbound, as a real hub shows it between two reconciles.
   */
  slowUnbind?: number;
}

export interface ControllerOptions {
  /** One simulated step in ms (default 40); a whole install takes a few dozen steps. */
  stepMs?: number;
  /**
   * `current` (default): the HyperShift operator creates Role `capi-provider-role-<cpNs>` and its
   * RoleBinding in the agent namespace. `legacy`: Agents are only bound when the user created Role
   * `capi-provider-role` in the agent namespace.
   */
  hypershift?: 'current' | 'legacy';
  /** BMAC approves Agents of BareMetalHosts (default true). */
  bmacAutoApprove?: boolean;
  /** Starts one API server per HostedCluster, serving the hosted cluster's Nodes. */
  guest: { startApi(): Promise<GuestApi> };
  faults?: ControllerFaults;
  /** The hub's OpenShift version (ClusterVersion desired), default 4.17.3. */
  hubVersion?: string;
  /**
   * The OpenShift version of release images (image → version). Images not listed use a version found
   * in the reference (`…:4.17.3-x86_64`), else `hubVersion`.
   */
  releaseVersions?: Record<string, string>;
  /** Called with every reconcile error (default: collected, see `Controllers.errors()`). */
  onError?: (where: string, err: unknown) => void;
}

export interface ResolvedOptions {
  stepMs: number;
  hypershift: 'current' | 'legacy';
  bmacAutoApprove: boolean;
  faults: ControllerFaults;
  hubVersion: string;
  releaseVersions: Record<string, string>;
}

export interface GuestEntry {
  /** `<namespace>/<name>` of the HostedCluster. */
  hc: string;
  uid: string;
  api?: GuestApi;
  starting?: boolean;
  failedAt?: number;
}

export interface Ctx {
  store: HubStore;
  options: ResolvedOptions;
  startGuest(): Promise<GuestApi>;
  dwell: Dwell;
  now(): string;
  /** Guest API servers by HostedCluster uid. */
  guests: Map<string, GuestEntry>;
  /** Run async work; `stop()` waits for it. */
  track(work: Promise<unknown>): void;
  error(where: string, err: unknown): void;
  stopped(): boolean;
  /** Ask for another reconcile pass soon (after async work finished). */
  kick(): void;
}

export interface Reconciler {
  readonly name: string;
  reconcile(): void;
}

/** The OpenShift version of a release image. */
export function releaseVersion(ctx: Ctx, image: string): string {
  const known = ctx.options.releaseVersions[image];
  if (known) return known;
  const m = /:(\d+\.\d+\.\d+(?:-[a-z]+\.\d+)?)(?:-[a-z0-9_]+)?(?:@|$)/.exec(image);
  return m ? m[1] : ctx.options.hubVersion;
}

/** The guest API of the HostedCluster owning a cluster deployment reference (`{name, namespace}`). */
export function guestForClusterDeployment(ctx: Ctx, name: string, namespace: string): GuestApi | undefined {
  const hc = hostedClusterForClusterDeployment(ctx, name, namespace);
  return hc ? ctx.guests.get(hc.metadata.uid ?? '')?.api : undefined;
}

export function hostedClusterForClusterDeployment(
  ctx: Ctx,
  name: string,
  namespace: string,
): KubeObject | undefined {
  if (!ctx.store.typeFor('hypershift.openshift.io/v1beta1', 'HostedCluster')) return undefined;
  return ctx.store
    .list('hypershift.openshift.io/v1beta1', 'HostedCluster')
    .find(
      (hc) =>
        hc.metadata.name === name &&
        `${hc.metadata.namespace}-${hc.metadata.name.replace(/\./g, '-')}` === namespace,
    );
}
