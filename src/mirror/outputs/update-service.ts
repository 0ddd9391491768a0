import { AirgapError } from '../../util/errors.js';
import { formatReference, repositoryName } from '../reference.js';
import { annotations, type MirroredImage, type OutputOptions } from './types.js';
import { MirrorError } from '../errors.js';

/** An UpdateService (OpenShift Update Service operator) as oc-mirror v2 writes it. */
export interface UpdateServiceObject {
  apiVersion: 'updateservice.operator.openshift.io/v1';
  kind: 'UpdateService';
  metadata: { annotations: Record<string, string>; name: string; namespace: string };
  spec: { graphDataImage: string; releases: string; replicas: number };
}

/** oc-mirror v2 mirrors release payloads to `<dest>/openshift/release-images`. */
const PAYLOAD_REPO = /(^|\/)release-images$/;

/**
 * The UpdateService for a mirrored graph image, or undefined when no graph image was mirrored.
 * `releases` is the mirrored payload repository without tag or digest; `graphDataImage` the mirrored
 * graph image as mirrored (tag or digest).
 */
export function buildUpdateService(
  images: readonly MirroredImage[],
  opts: OutputOptions = {},
): UpdateServiceObject | undefined {
  const graph = images.find((i) => i.category === 'graph');
  if (!graph) return undefined;
  let releases = opts.releaseRepository;
  if (releases === undefined) {
    const payload = images.find(
      (i) => i.category === 'release' && PAYLOAD_REPO.test(i.destination.repository),
    );
    if (!payload) {
      throw new AirgapError(
        MirrorError.CLUSTER_RESOURCE_INPUT,
        'a graph image was mirrored but no release payload, so the UpdateService has no releases repository',
        { hint: 'mirror at least one release with graph: true, or pass the release repository explicitly' },
      );
    }
    releases = repositoryName(payload.destination);
  }
  return {
    apiVersion: 'updateservice.operator.openshift.io/v1',
    kind: 'UpdateService',
    metadata: {
      annotations: annotations(opts),
      name: 'update-service-oc-mirror',
      namespace: 'openshift-update-service',
    },
    spec: { graphDataImage: formatReference(graph.destination), releases, replicas: 2 },
  };
}
