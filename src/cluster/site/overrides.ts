/**
 * Command-line values in place of the site file's (`--name`, `--release`, …): each is checked like
 * the file's field (names.ts), and a bad one is a usage error naming the flag, not the file.
 */
import { hostNameProblem } from '../../certs/index.js';
import { usageError, CommonError } from '../../util/errors.js';
import { clusterNameProblem, namespaceProblem, releaseProblem } from './names.js';
import { addressProblem, unbracket } from './net.js';
import type { Site, SiteOverrides } from './types.js';

/**
 * A copy of `site` with command-line values in place of the file's. Each is checked like the file's
 * field, and a bad one is a usage error naming the flag.
 */
export function applySiteOverrides(site: Site, overrides: SiteOverrides): Site {
  const bad = (flag: string, why: string) => usageError(CommonError.FLAG_INVALID, `--${flag}: ${why}`);
  // The source (positions in the file) is shared, not copied.
  const out: Site = { ...structuredClone({ ...site, source: undefined }), source: site.source };
  if (overrides.name !== undefined) {
    const why = clusterNameProblem(overrides.name);
    if (why) throw bad('name', why);
    if (out.cluster.infraID === site.cluster.name) out.cluster.infraID = overrides.name;
    out.cluster.name = overrides.name;
  }
  if (overrides.namespace !== undefined) {
    const why = namespaceProblem(overrides.namespace);
    if (why) throw bad('namespace', why);
    out.cluster.namespace = overrides.namespace;
  }
  if (`${out.cluster.namespace}-${out.cluster.name}`.length > 63)
    throw bad(
      overrides.name !== undefined ? 'name' : 'namespace',
      `the control plane namespace ${out.cluster.namespace}-${out.cluster.name} is longer than 63 characters`,
    );
  if (overrides.release !== undefined) {
    const why = releaseProblem(overrides.release);
    if (why) throw bad('release', why);
    out.cluster.release = { image: overrides.release };
  }
  if (overrides.baseDomain !== undefined) {
    const why = hostNameProblem(overrides.baseDomain);
    if (why) throw bad('base-domain', why);
    out.cluster.baseDomain = overrides.baseDomain;
  }
  if (overrides.apiServerAddress !== undefined) {
    const why = addressProblem(overrides.apiServerAddress);
    if (why) throw bad('api-server-address', why);
    out.cluster.services = {
      publishing: 'nodePort',
      apiServerAddress: unbracket(overrides.apiServerAddress),
    };
  }
  if (overrides.controlPlaneAvailability !== undefined)
    out.cluster.controlPlaneAvailability = overrides.controlPlaneAvailability;
  if (overrides.approveAgents !== undefined) out.cluster.approveAgents = overrides.approveAgents;
  return out;
}
