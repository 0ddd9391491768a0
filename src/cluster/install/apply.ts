/**
 * Server-side apply of rendered objects, in dependency order, reporting each object as kubectl
 * does (created, configured, unchanged). The hub install applies its steps with it too.
 */
import { Limiter } from '../../util/limit.js';
import { AirgapError } from '../../util/errors.js';
import { field } from '../conditions.js';
import { describeRef, refOf, type Kube, type KubeObject } from '../kube.js';
import type { InstallReporter } from '../progress.js';
import { ClusterError } from '../errors.js';

/** What applying one object did (kubectl's words: created, configured, unchanged). */
export interface AppliedObject {
  object: string;
  created: boolean;
  /** Created, or changed by the apply (its resourceVersion moved). */
  changed: boolean;
}

/** Objects of one kind applied at once (the hub has no ordering among them). */
const APPLY_CONCURRENCY = 8;

/** The NodePool object among the rendered ones (there is exactly one). */
export function nodePoolOf(objects: KubeObject[]): KubeObject {
  const np = objects.find((o) => o.kind === 'NodePool');
  if (!np) throw new AirgapError(ClusterError.RENDER_NO_NODEPOOL, 'the rendered objects have no NodePool');
  return np;
}

/**
 * Apply every object with server-side apply. Kinds go in the order they first appear (so a BMC
 * Secret is there before any BareMetalHost, a Namespace before what lives in it); the objects of one
 * kind go concurrently. The NodePool keeps the replicas it has on the hub (a re-run must not scale a
 * running pool down to the rendered 0). Results and reports keep the given order.
 */
export async function applyObjects(
  kube: Kube,
  objects: KubeObject[],
  report: InstallReporter,
  phase = 'apply',
): Promise<AppliedObject[]> {
  const kinds = [...new Set(objects.map((o) => `${o.apiVersion}/${o.kind}`))];
  const results = new Map<KubeObject, AppliedObject>();
  const limit = new Limiter(APPLY_CONCURRENCY);
  for (const kind of kinds) {
    const group = objects.filter((o) => `${o.apiVersion}/${o.kind}` === kind);
    const live = await liveObjects(kube, group);
    await Promise.all(
      group.map((obj) =>
        limit.run(async () => {
          const ref = refOf(obj);
          const existing = live.get(`${ref.namespace ?? ''}/${ref.name}`);
          let body = obj;
          if (obj.kind === 'NodePool' && existing) {
            body = { ...obj, spec: { ...obj.spec, replicas: field(existing, 'spec.replicas') ?? 0 } };
          }
          const applied = await kube.apply(body);
          results.set(obj, {
            object: describeRef(ref),
            created: !existing,
            changed: !existing || applied.metadata.resourceVersion !== existing.metadata.resourceVersion,
          });
        }),
      ),
    );
  }
  return objects.map((o) => {
    const r = results.get(o)!;
    report({
      phase,
      object: r.object,
      message: r.created ? 'created' : r.changed ? 'configured' : 'unchanged',
    });
    return r;
  });
}

/**
 * What of one kind's group exists already, by `namespace/name`: one list per namespace of the
 * group, not one read per object.
 */
async function liveObjects(kube: Kube, group: KubeObject[]): Promise<Map<string, KubeObject>> {
  const live = new Map<string, KubeObject>();
  const namespaces = [...new Set(group.map((o) => o.metadata.namespace))];
  await Promise.all(
    namespaces.map(async (namespace) => {
      // None of a type the cluster does not serve yet; any other failure is the apply's.
      const items = await kube.listServed(
        group[0]!.apiVersion,
        group[0]!.kind,
        namespace ? { namespace } : {},
      );
      for (const o of items) live.set(`${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
    }),
  );
  return live;
}
