/**
 * The flags the hub and hosted-cluster commands share (install hub, install cluster, cluster
 * status, kubeconfig, destroy), and turning them into what src/cluster takes: the hub to connect
 * to, the cluster to act on, wait limits and a progress reporter.
 */
import { Flags } from '@oclif/core';
import type { ClusterSelector, HubConnection } from '../cluster/index.js';
import { lineReporter, parseDuration, type InstallReporter } from '../cluster/index.js';
import { usageError, CommonError } from '../util/errors.js';

export const hubFlags = {
  kubeconfig: Flags.string({
    description: 'Kubeconfig of the management cluster (hub). Default: KUBECONFIG, else ~/.kube/config.',
  }),
  context: Flags.string({ description: 'Context of the kubeconfig to use. Default: its current context.' }),
};

export const timeoutFlag = (dflt: string) =>
  Flags.string({
    description: `Limit of each wait, e.g. 45m, 90s, 2h. A run that times out can be started again: it continues where it stopped.`,
    default: dflt,
  });

export const siteFlag = Flags.string({
  char: 'f',
  description: 'Site file: the cluster name and namespace come from it (unless --name/--namespace).',
});

export const clusterIdFlags = {
  name: Flags.string({ description: 'HostedCluster name. Default: cluster.name of --site.' }),
  namespace: Flags.string({
    description: 'HostedCluster namespace. Default: cluster.namespace of --site, else clusters.',
  }),
};

/** The hub the flags name (--kubeconfig, --context). */
export function hubOf(flags: { kubeconfig?: string; context?: string }): HubConnection {
  return { kubeconfig: flags.kubeconfig, context: flags.context };
}

/** The hosted cluster the flags name (--name, --namespace, else --site's). */
export function clusterOf(flags: { name?: string; namespace?: string; site?: string }): ClusterSelector {
  return { name: flags.name, namespace: flags.namespace, site: flags.site };
}

/** --timeout as milliseconds (exit 2 when it is not a duration). */
export function timeoutMs(text: string, flag = '--timeout'): number {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0)
    throw usageError(CommonError.FLAG_INVALID, `${flag}: "${text}" is not a duration`, {
      hint: 'write it like 45m, 90s or 1h30m',
    });
  return ms;
}

/** Progress on stderr, one line per change, a redrawn summary on a terminal (stdout stays for --json). */
export const stderrReporter: InstallReporter = lineReporter(process.stderr);
