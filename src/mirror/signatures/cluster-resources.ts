/**
 * What the cluster needs of the trust chain, written beside the mirror sets in
 * `cluster-resources/`:
 *
 * - `signature-configmap.yaml` / `.json`: the release GPG signatures that verified, as oc-mirror v2
 *   writes them, for the cluster version operator (`openshift-config-managed`); `airgap install hub`
 *   applies it.
 * - `registries.d/<mirror host>.yaml`: `use-sigstore-attachments: true` for the mirror, so nodes (and
 *   podman, skopeo) read the `sha256-<hex>.sig` signatures copied next to the images.
 * - `clusterimagepolicy-example.yaml`: a ClusterImagePolicy scoped to the mirrored release
 *   repositories, for sites that sign their own content (its key is a placeholder to replace).
 */
import { toYaml } from '../../util/yaml.js';
import type { CopySummary } from '../copy/engine.js';
import { AirgapError } from '../../util/errors.js';
import { clusterImagePolicyExampleYaml } from '../outputs/image-policy.js';
import type { MirrorPlan, PlanEntry } from '../plan.js';
import { signatureConfigMap } from './configmap.js';
import { registriesDFileName, registriesDSnippet } from './registries-d.js';

/** The trust files of a finished run into `registry`, by file name below cluster-resources/. */
export function trustFiles(
  plan: MirrorPlan,
  summary: CopySummary,
  registry: string,
  destRepo: (e: PlanEntry) => string,
): Map<string, string> {
  const files = new Map<string, string>();
  const arrived = (n: number) => summary.images[n]?.status !== 'failed' && !!summary.images[n]?.digest;
  const mirrored = plan.images.filter((_, n) => arrived(n));

  const payloads = new Set<string>(mirrored.filter((e) => e.kind === 'release').map((e) => e.digest));
  const releases = (plan.signatures?.releases ?? []).filter(
    (r) => r.signatures.length > 0 && payloads.has(r.digest),
  );
  if (releases.length > 0) {
    const cm = signatureConfigMap(releases.map((r) => ({ digest: r.digest, signatures: r.signatures })));
    files.set('signature-configmap.yaml', toYaml(cm));
    files.set('signature-configmap.json', `${JSON.stringify(cm, null, 2)}\n`);
  }

  if (mirrored.some((e) => e.kind === 'signature')) {
    files.set(`registries.d/${registriesDFileName(registry)}`, registriesDSnippet(registry));
  }

  const releaseRepos = [
    ...new Set(
      mirrored
        .filter((e) => e.kind === 'release' || e.kind === 'release-component')
        .map((e) => `${registry}/${destRepo(e)}`),
    ),
  ].sort();
  if (releaseRepos.length > 0) {
    // An example only: a mirror the policy cannot scope (an IPv6 literal, a host without a dot) gets none.
    try {
      files.set('clusterimagepolicy-example.yaml', clusterImagePolicyExampleYaml({ scopes: releaseRepos }));
    } catch (e) {
      if (!(e instanceof AirgapError)) throw e;
    }
  }
  return files;
}
