/** The names of what the renderers create, derived from the site in one place. */
import type { Site } from '../site/types.js';

/** Label HyperShift's CLI puts on the Secrets it creates for a cluster. */
export const SAFE_TO_DELETE_LABEL = 'hypershift.openshift.io/safe-to-delete-with-cluster';
/** Label linking a BareMetalHost to its InfraEnv (the BMAC contract). */
export const INFRAENV_LABEL = 'infraenvs.agent-install.openshift.io';
/** Label on NMStateConfigs, selected by the InfraEnv's nmStateConfigLabelSelector. */
export const NMSTATE_LABEL = 'airgap.openshift.io/infraenv';
export const CPO_IMAGE_ANNOTATION = 'hypershift.openshift.io/control-plane-operator-image';
export const OLM_REGISTRY_OVERRIDES_ANNOTATION = 'hypershift.openshift.io/olm-catalogs-is-registry-overrides';

/** The names of one hosted cluster's objects. */
export interface ClusterNames {
  /** The HostedCluster (and NodePool, InfraEnv) name. */
  name: string;
  /** The HostedCluster namespace. */
  namespace: string;
  /** The hosted control plane namespace, `<namespace>-<name>` (dots → dashes, as HyperShift names it). */
  controlPlaneNamespace: string;
  pullSecret: string;
  sshKey: string;
  etcdEncryptionKey: string;
  /** The pull secret the InfraEnv references, in the control plane namespace. */
  infraEnvPullSecret: string;
  userCaBundle: string;
  capiProviderRole: string;
  /** `<host>-bmc-secret`. */
  bmcSecret(host: string): string;
}

/** The Secret holding a host's BMC credentials. */
export const bmcSecretName = (host: string): string => `${host}-bmc-secret`;

export function clusterNames(site: Site): ClusterNames {
  const { name, namespace } = site.cluster;
  return {
    name,
    namespace,
    controlPlaneNamespace: `${namespace}-${name.replaceAll('.', '-')}`,
    pullSecret: `${name}-pull-secret`,
    sshKey: `${name}-ssh-key`,
    etcdEncryptionKey: `${name}-etcd-encryption-key`,
    infraEnvPullSecret: 'pull-secret',
    userCaBundle: 'user-ca-bundle',
    capiProviderRole: 'capi-provider-role',
    bmcSecret: bmcSecretName,
  };
}
