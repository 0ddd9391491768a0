/**
 * What `airgap mirror init` knows about Red Hat's content, as data apart from the builder: the
 * ready-made image sets, the operator catalog of each OpenShift minor, the operators an
 * agent-based hosted cluster needs, and the OpenShift Data Foundation packages of each minor
 * (with where each fact comes from).
 */

/** Ready-made image sets. */
export const PRESETS = ['hosted-agent'] as const;
export type Preset = (typeof PRESETS)[number];

/** Red Hat's operator catalog for an OpenShift minor. */
export function redHatOperatorIndex(major: number, minor: number): string {
  return `registry.redhat.io/redhat/redhat-operator-index:v${major}.${minor}`;
}

/**
 * The `hosted-agent` preset's operator packages, all from the redhat-operator-index of the
 * cluster's minor: what an agent-based hosted cluster (HyperShift on bare metal) needs from OLM.
 */
export const HOSTED_AGENT_PACKAGES: readonly { name: string; purpose: string }[] = [
  // The seed runbook: "mirror the latest multicluster engine Operator images"; MCE runs HyperShift
  // and the agent (assisted-installer) services on the hub.
  { name: 'multicluster-engine', purpose: 'HyperShift, the agent and assisted-installer services' },
  // The seed runbook's operator list for hosted control planes on bare metal.
  { name: 'lvms-operator', purpose: "storage for the hosted control planes' etcd" },
  { name: 'local-storage-operator', purpose: 'local disks as persistent volumes' },
  { name: 'metallb-operator', purpose: 'load balancer addresses for the hosted API and ingress' },
];

interface OdfPackage {
  name: string;
  /** The first OpenShift/ODF minor (4.x) whose redhat-operator-index has the package. */
  since: number;
}

/**
 * The OpenShift Data Foundation packages for `--with-odf`, by the first 4.x minor that has them.
 *
 * oc-mirror v2 does not follow OLM dependencies (`olm.package.required`; airgap does, unless
 * --no-dependencies, but the configuration is for oc-mirror too), while odf-operator subscribes to
 * all of these at install time: a disconnected catalog missing one leaves ODF half installed. And a package that is not in the
 * catalog is an error when mirroring, so the list depends on the minor. Sources:
 *
 * - odf-operator, ocs-operator, mcg-operator, odf-csi-addons-operator: the seed runbook's
 *   ImageSetConfiguration for hosted control planes (4.17 and 4.18 editions).
 * - ocs-client-operator, odf-prometheus-operator, recipe, rook-ceph-operator: the CSVs an ODF
 *   4.16.1 install creates, and again on 4.18.8 and 4.19.5 (public install logs).
 * - odf-dependencies: `oc-mirror list operators` on redhat-operator-index:v4.17 lists it
 *   (stable-4.17); odf-operator 4.17+ requires it, and it pulls the component operators in.
 * - cephcsi-operator: in the 4.18.8 and 4.19.5 CSV lists, not in the 4.16.1 one; 4.17 is not
 *   confirmed, so it starts at 4.18 (a 4.17 user adds it with --package if the catalog has it).
 * - odf-external-snapshotter-operator: in the ODF 4.20 CSV lists, not in the 4.19.5 one.
 *
 * Left out: ocs-tls-profiles, which only later lists show and no source ties to a minor.
 */
const ODF_PACKAGES: readonly OdfPackage[] = [
  { name: 'odf-operator', since: 0 },
  { name: 'odf-dependencies', since: 17 },
  { name: 'ocs-operator', since: 0 },
  { name: 'ocs-client-operator', since: 16 },
  { name: 'mcg-operator', since: 0 },
  { name: 'odf-csi-addons-operator', since: 0 },
  { name: 'odf-prometheus-operator', since: 16 },
  { name: 'recipe', since: 16 },
  { name: 'rook-ceph-operator', since: 16 },
  { name: 'cephcsi-operator', since: 18 },
  { name: 'odf-external-snapshotter-operator', since: 20 },
];

/** The minors for which {@link ODF_PACKAGES} is confirmed complete by the sources above. */
const ODF_CONFIRMED = { from: 16, to: 20 };

/** The ODF packages the redhat-operator-index of OpenShift `major.minor` has. */
export function odfPackages(major: number, minor: number): string[] {
  return ODF_PACKAGES.filter((p) => major > 4 || (major === 4 && minor >= p.since)).map((p) => p.name);
}

/**
 * What the person should check about the ODF package list of OpenShift `major.minor`, when the
 * sources above do not confirm it complete for that minor; undefined when they do.
 */
export function odfNote(major: number, minor: number): string | undefined {
  const label = `${major}.${minor}`;
  if (major === 4 && minor < ODF_CONFIRMED.from) {
    return (
      `the ODF package list for ${label} is the seed runbook's (odf-operator, ocs-operator, mcg-operator, ` +
      'odf-csi-addons-operator); compare it with `oc-mirror list operators --catalog <catalog> --package odf-operator`'
    );
  }
  if (major === 4 && minor === 17) {
    return 'ODF 4.17 may also need cephcsi-operator; if `oc-mirror list operators --catalog <catalog>` shows it, add --package cephcsi-operator';
  }
  if (major > 4 || minor > ODF_CONFIRMED.to) {
    return (
      `the ODF package list is confirmed up to 4.${ODF_CONFIRMED.to}; ODF ${label} may add packages ` +
      '(check `oc-mirror list operators --catalog <catalog>` for odf-, ocs- and ceph packages)'
    );
  }
  return undefined;
}
