/**
 * The hub's objects for other domains (the bastion registry's trust ConfigMaps): read one, or apply
 * a set as `oc apply` would, through the one Kubernetes client (kube.ts).
 */
import { connectHub, type HubConnection } from './identity.js';
import { applyObjects, type AppliedObject } from './install/apply.js';
import type { KubeObject } from './kube.js';

/** The object `apiVersion kind namespace/name` on the hub; undefined only when the hub says 404. */
export async function readHubObject(
  hub: HubConnection,
  ref: { apiVersion: string; kind: string; namespace?: string; name: string },
): Promise<KubeObject | undefined> {
  return connectHub(hub).get(ref);
}

/** Apply `objects` (server-side apply), each reported as created, configured or unchanged. */
export async function applyHubObjects(
  hub: HubConnection,
  objects: KubeObject[],
  report: (line: string) => void = () => undefined,
): Promise<AppliedObject[]> {
  return applyObjects(
    connectHub(hub),
    objects,
    (e) => report(`${e.object ?? ''} ${e.message}`.trim()),
    'trust',
  );
}
