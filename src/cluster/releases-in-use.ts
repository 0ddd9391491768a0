/**
 * The release images hosted clusters on a hub run or are moving to: each HostedCluster's
 * `spec.release.image` and the images of its version history that are not superseded (the
 * current one, and a Partial rollout's). `airgap mirror delete` refuses to delete them.
 */
import { API } from './describe.js';
import { connectHub, type HubConnection } from './identity.js';

export interface ReleaseInUse {
  /** `namespace/name` of the HostedCluster. */
  cluster: string;
  image: string;
  /** The `sha256:…` the image names, when it is by digest. */
  digest?: string;
}

const rec = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** Every release image the hub's HostedClusters use (all namespaces). */
export async function releasesInUse(hub: HubConnection): Promise<ReleaseInUse[]> {
  const kube = connectHub(hub);
  const list = await kube.list(API.hostedCluster.apiVersion, API.hostedCluster.kind, {});
  const out: ReleaseInUse[] = [];
  for (const hc of list.items) {
    const cluster = `${hc.metadata?.namespace}/${hc.metadata?.name}`;
    const images = new Set<string>();
    const spec = rec(rec(hc.spec).release).image;
    if (typeof spec === 'string') images.add(spec);
    const history = rec(rec(hc.status).version).history;
    if (Array.isArray(history)) {
      // The newest entry is being rolled out; the first Completed one below it still runs until then.
      for (const h of history.map(rec)) {
        if (typeof h.image === 'string') images.add(h.image);
        if (h.state === 'Completed') break;
      }
    }
    for (const image of images) {
      const digest = /@(sha256:[0-9a-f]{64})$/.exec(image)?.[1];
      out.push({ cluster, image, ...(digest ? { digest } : {}) });
    }
  }
  return out;
}
