/**
 * The HostedCluster's side of the install: its control plane Available (first), and its version
 * rollout complete (once the nodes joined), each reported as its conditions change.
 */
import { field } from '../conditions.js';
import { API, viewHostedCluster, type HostedClusterView } from '../describe.js';
import { describeRef } from '../kube.js';
import { waitFor } from '../wait.js';
import type { InstallContext } from './context.js';

function hostedClusterRef(ctx: InstallContext) {
  return { ...API.hostedCluster, namespace: ctx.cluster.namespace, name: ctx.cluster.name };
}

/** Phase control-plane: the HostedCluster Available. Returns the release version it reports, if any. */
export async function waitControlPlaneAvailable(ctx: InstallContext): Promise<string | undefined> {
  const hcName = describeRef(hostedClusterRef(ctx));
  const hc = await waitFor(
    ctx.kube,
    hostedClusterRef(ctx),
    ([o]) => {
      const v = viewHostedCluster(o);
      return { done: v.available, value: o, state: v.summary };
    },
    {
      what: `${hcName} to be Available`,
      ...ctx.wait,
      onState: (s) => ctx.report({ phase: 'control-plane', object: hcName, message: s }),
      hint: 'the hosted control plane pods run in the control plane namespace: oc get pods -n ' + ctx.agentNs,
    },
  );
  return field(hc, 'status.version.desired.version') as string | undefined;
}

/** Phase complete: status.version.history[0].completionTime set. */
export async function waitRolloutComplete(ctx: InstallContext): Promise<HostedClusterView> {
  const hcName = describeRef(hostedClusterRef(ctx));
  return waitFor(
    ctx.kube,
    hostedClusterRef(ctx),
    ([o]) => {
      const v = viewHostedCluster(o);
      return { done: !!v.completionTime, value: v, state: v.summary };
    },
    {
      what: `${hcName} to complete its version rollout (status.version.history[0].completionTime)`,
      ...ctx.wait,
      onState: (s) => ctx.report({ phase: 'complete', object: hcName, message: s }),
      hint: 'the data plane is still rolling out: airgap cluster status shows each part',
    },
  );
}
