/**
 * Phase kubeconfig, the install's last: the hosted cluster's admin kubeconfig written (0600), then
 * its Nodes Ready as the hosted cluster itself sees them, through that kubeconfig.
 */
import { conditionIs } from '../conditions.js';
import { API } from '../describe.js';
import { Kube } from '../kube.js';
import { writeHostedKubeconfig } from '../kubeconfig.js';
import { waitFor } from '../wait.js';
import type { InstallContext } from './context.js';

export interface GuestNode {
  name: string;
  ready: boolean;
}

/** Write the admin kubeconfig to `out`, then wait for `desired` Ready Nodes through it. */
export async function writeKubeconfigAndWaitNodes(
  ctx: InstallContext,
  out: string,
  desired: number,
): Promise<GuestNode[]> {
  const kubeconfig = await writeHostedKubeconfig(ctx.kube, ctx.cluster, out);
  ctx.report({ phase: 'kubeconfig', message: `admin kubeconfig written to ${out} (0600)` });
  const guest = Kube.connect({ kubeconfigText: kubeconfig });
  return waitFor(
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
      what: `${desired} Ready nodes in the hosted cluster ${ctx.cluster.name}`,
      ...ctx.wait,
      onState: (s) => ctx.report({ phase: 'kubeconfig', message: s }),
    },
  );
}
