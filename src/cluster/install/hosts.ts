/**
 * The hosts' side of the install, up to provisioned: the InfraEnv's discovery ISO built, then the
 * BMC secrets and BareMetalHosts applied (only once the ISO exists, the seeds' order), then each
 * BareMetalHost registering → provisioning → provisioned. A host that fails is reported and
 * recorded; the others go on, and only when none provisions does the install stop.
 */
import { AirgapError } from '../../util/errors.js';
import {
  API,
  BMH_LABEL,
  INFRAENV_LABEL,
  viewAgent,
  viewBareMetalHost,
  viewInfraEnv,
  type HostView,
} from '../describe.js';
import { describeRef, type KubeObject } from '../kube.js';
import { waitFor } from '../wait.js';
import { applyObjects, type AppliedObject } from './apply.js';
import type { InstallContext } from './context.js';
import { ClusterError } from '../errors.js';

/** The InfraEnv's name: the rendered one, else the cluster's. */
export function infraEnvNameOf(objects: KubeObject[], clusterName: string): string {
  return objects.find((o) => o.kind === 'InfraEnv')?.metadata.name ?? clusterName;
}

/** Phase iso: InfraEnv ImageCreated and status.isoDownloadURL; ImageCreationError fails at once. */
export async function waitDiscoveryIso(ctx: InstallContext, infraEnvName: string): Promise<void> {
  const { agentNs } = ctx;
  const ieName = describeRef({ kind: 'InfraEnv', namespace: agentNs, name: infraEnvName });
  await waitFor(
    ctx.kube,
    { ...API.infraEnv, namespace: agentNs, name: infraEnvName },
    ([o]) => {
      const v = viewInfraEnv(o);
      return {
        done: v.isoReady,
        state: v.summary,
        ...(v.error
          ? {
              failed: new AirgapError(ClusterError.ISO_CREATION_FAILED, `${ieName}: ${v.error}`, {
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
      ...ctx.wait,
      onState: (s) => ctx.report({ phase: 'iso', object: ieName, message: s }),
    },
  );
}

/** Phase hosts, first half: the NMStateConfigs, BMC secrets and BareMetalHosts applied. */
export function applyHostObjects(ctx: InstallContext, hostObjects: KubeObject[]): Promise<AppliedObject[]> {
  return applyObjects(ctx.kube, hostObjects, ctx.report, 'hosts');
}

export interface ProvisionedHosts {
  /** Every host of the site the hub shows, with its state (and error). */
  views: HostView[];
  /** The names of the hosts that provisioned. */
  provisioned: string[];
}

/**
 * Phase hosts, second half: each BareMetalHost of the site provisioned or failed. Failed hosts go
 * to the failures; none provisioned is NO_HOSTS_PROVISIONED.
 */
export async function waitHostsProvisioned(
  ctx: InstallContext,
  infraEnvName: string,
  hosts: string[],
): Promise<ProvisionedHosts> {
  const { agentNs } = ctx;
  const hostSet = new Set(hosts);
  const views = await waitFor(
    ctx.kube,
    { ...API.bareMetalHost, namespace: agentNs, labelSelector: `${INFRAENV_LABEL}=${infraEnvName}` },
    (objs) => {
      const seen = objs.filter((o) => hostSet.has(o.metadata.name)).map(viewBareMetalHost);
      for (const v of seen)
        ctx.report({
          phase: 'hosts',
          object: describeRef({ kind: 'BareMetalHost', namespace: agentNs, name: v.name }),
          message: v.error ? `${v.state}: ${v.error}` : v.state,
          ...(v.error ? { level: 'error' as const } : {}),
        });
      const settled = seen.filter((v) => v.provisioned || v.error);
      return { done: settled.length === hostSet.size, value: seen, state: hostsState(seen, hostSet.size) };
    },
    { what: `the BareMetalHosts in ${agentNs} to be provisioned`, ...ctx.wait },
  );
  for (const h of views.filter((v) => v.error)) ctx.failures.push(`host ${h.name}: ${h.error}`);
  const provisioned = views.filter((v) => v.provisioned).map((v) => v.name);
  if (provisioned.length === 0)
    throw new AirgapError(
      ClusterError.NO_HOSTS_PROVISIONED,
      `no host of ${ctx.cluster.name} provisioned: ${ctx.failures.join('; ')}`,
      {
        hint: 'check each BMC address and credentials: oc get bmh -n ' + agentNs,
      },
    );
  return { views, provisioned };
}

/** `1/2 hosts provisioned, 1 failed; worker-1 provisioning`. */
function hostsState(views: HostView[], total: number): string {
  return `${views.filter((v) => v.provisioned).length}/${total} hosts provisioned${
    views.some((v) => v.error) ? `, ${views.filter((v) => v.error).length} failed` : ''
  }; ${
    views
      .filter((v) => !v.provisioned && !v.error)
      .map((v) => `${v.name} ${v.state}`)
      .join(', ') || 'none pending'
  }`;
}

/** metal3's reboot request: set-and-forget, the operator power-cycles the host and removes it. */
const REBOOT_ANNOTATION = 'reboot.metal3.io';
/** The Agent state of a host that left a cluster and waits to boot the discovery ISO again. */
const AWAITING_REBOOT = 'unbinding-pending-user-action';

/**
 * Reboot, through their BareMetalHosts, the hosts whose Agent left a cluster and waits for the
 * discovery ISO again (`unbinding-pending-user-action`), so each comes back as a free Agent.
 * Returns the hosts rebooted.
 */
export async function rebootReleasedHosts(ctx: InstallContext, agents: KubeObject[]): Promise<string[]> {
  const rebooted: string[] = [];
  for (const agent of agents) {
    const host = agent.metadata.labels?.[BMH_LABEL];
    if (!host || viewAgent(agent).state !== AWAITING_REBOOT) continue;
    const ref = { ...API.bareMetalHost, namespace: ctx.agentNs, name: host };
    const bmh = await ctx.kube.get(ref);
    if (!bmh) continue;
    if (bmh.metadata.annotations?.[REBOOT_ANNOTATION] === undefined)
      await ctx.kube.mergePatch(ref, { metadata: { annotations: { [REBOOT_ANNOTATION]: '' } } });
    ctx.report({
      phase: 'hosts',
      object: describeRef(ref),
      message: 'rebooting into the discovery ISO (its Agent left the cluster and waits for it)',
    });
    rebooted.push(host);
  }
  return rebooted;
}
