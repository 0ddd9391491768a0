/**
 * What every phase of `airgap install cluster` shares: the hub, the cluster and its agent
 * namespace, the (deduplicated) reporter, the limits of each wait, and the failures collected so
 * far (a host that fails does not stop the others, but the run exits non-zero).
 */
import type { ClusterIdentity } from '../identity.js';
import type { Kube } from '../kube.js';
import type { InstallReporter } from '../progress.js';

/** Default limit of each wait. */
export const DEFAULT_PHASE_TIMEOUT_MS = 60 * 60_000;

export interface InstallContext {
  kube: Kube;
  cluster: ClusterIdentity;
  /** The control plane namespace, where the InfraEnv, BareMetalHosts and Agents live. */
  agentNs: string;
  report: InstallReporter;
  /** What each wait takes: its limit and, in tests, its re-list period. */
  wait: { timeoutMs: number; resyncMs?: number };
  /** What failed so far (`host worker-1: …`); appended by the phases. */
  failures: string[];
}
