/**
 * What a real OpenShift management cluster already has before airgap touches it: the ClusterVersion,
 * three Ready control-plane/worker Nodes, a default StorageClass, the usual namespaces, the global pull
 * secret, the cluster Image config and an Available MultiClusterEngine (with the HyperShift and
 * assisted-service components not yet enabled).
 */
import type { HubStore } from '../types.js';
import type { ControllerFaults } from './context.js';
import { MCE_NAMESPACE, MCE_VERSION } from './mce.js';
import { T, b64, create, ensure, ensureNamespace, get, nowIso, readyNode, shortHash } from './util.js';

export interface SeedOptions {
  /** The hub's OpenShift version, default 4.17.3. */
  hubVersion?: string;
  faults?: ControllerFaults;
  /** Hub nodes (default 3). */
  nodes?: number;
}

const HUB_NAMESPACES = [
  'default',
  'kube-system',
  'openshift-config',
  'openshift-config-managed',
  'openshift-marketplace',
  'openshift-machine-api',
  MCE_NAMESPACE,
  'local-cluster',
  'hypershift',
];

/** Kubernetes minor version shipped with an OpenShift 4.y release (4.17 → 1.30). */
export function kubeVersionFor(ocpVersion: string): string {
  const m = /^4\.(\d+)/.exec(ocpVersion);
  const minor = m ? Number(m[1]) + 13 : 30;
  return `v1.${minor}.5`;
}

export function seedHub(store: HubStore, options: SeedOptions = {}): void {
  const version = options.hubVersion ?? '4.17.3';
  const now = nowIso();
  for (const ns of HUB_NAMESPACES) ensureNamespace(store, ns);

  if (!options.faults?.clusterVersionRequired && !get(store, T.clusterVersion, 'version')) {
    const image = `quay.io/openshift-release-dev/ocp-release@sha256:${shortHash(`release-${version}`, 64)}`;
    create(store, {
      apiVersion: T.clusterVersion.apiVersion,
      kind: T.clusterVersion.kind,
      metadata: { name: 'version' },
      spec: {
        clusterID: '5c1b9b0e-6f0e-4d54-9f5e-3f1f8a3c2b7d',
        channel: `stable-${version.split('.').slice(0, 2).join('.')}`,
      },
      status: {
        desired: { version, image, channels: [] },
        history: [
          { state: 'Completed', version, image, startedTime: now, completionTime: now, verified: false },
        ],
        observedGeneration: 1,
        versionHash: shortHash(version, 12),
        availableUpdates: null,
        capabilities: {},
        conditions: [
          { type: 'Available', status: 'True', message: `Done applying ${version}`, lastTransitionTime: now },
          { type: 'Failing', status: 'False', lastTransitionTime: now },
          {
            type: 'Progressing',
            status: 'False',
            message: `Cluster version is ${version}`,
            lastTransitionTime: now,
          },
          {
            type: 'RetrievedUpdates',
            status: 'False',
            reason: 'RemoteFailed',
            message:
              'Unable to retrieve available updates: Get "https://api.openshift.com/api/upgrades_info/v1/graph": dial tcp: lookup api.openshift.com: no such host',
            lastTransitionTime: now,
          },
        ],
      },
    });
  }

  const kubelet = kubeVersionFor(version);
  const count = options.nodes ?? 3;
  for (let i = 0; i < count; i++) {
    const name = `master-${i}`;
    if (get(store, T.node, name)) continue;
    create(
      store,
      readyNode({
        name,
        labels: {
          'kubernetes.io/hostname': name,
          'kubernetes.io/os': 'linux',
          'kubernetes.io/arch': 'amd64',
          'node-role.kubernetes.io/control-plane': '',
          'node-role.kubernetes.io/master': '',
          'node-role.kubernetes.io/worker': '',
          'topology.kubernetes.io/zone': `zone-${i}`,
          'node.openshift.io/os_id': 'rhcos',
        },
        annotations: { 'machineconfiguration.openshift.io/state': 'Done' },
        providerID: `baremetalhost:///openshift-machine-api/hub-${name}/${shortHash(name, 8)}`,
        addresses: [{ type: 'InternalIP', address: `192.168.125.${20 + i}` }],
        capacity: { cpu: '16', memory: '65843788Ki', pods: '250', 'ephemeral-storage': '250000000Ki' },
        allocatable: { cpu: '15500m', memory: '64692812Ki', pods: '250', 'ephemeral-storage': '229844000Ki' },
        pressure: [
          {
            type: 'MemoryPressure',
            status: 'False',
            reason: 'KubeletHasSufficientMemory',
            message: 'kubelet has sufficient memory available',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
          {
            type: 'DiskPressure',
            status: 'False',
            reason: 'KubeletHasNoDiskPressure',
            message: 'kubelet has no disk pressure',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
          {
            type: 'PIDPressure',
            status: 'False',
            reason: 'KubeletHasSufficientPID',
            message: 'kubelet has sufficient PID available',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
        ],
        kubelet,
        osImage: `Red Hat Enterprise Linux CoreOS ${version.replace(/^4\.(\d+).*/, '4$1')}.94.202410211619-0`,
        kernelVersion: '5.14.0-427.40.1.el9_4.x86_64',
        ids: {
          machineID: shortHash(`machine-${name}`, 32),
          systemUUID: shortHash(`system-${name}`, 32),
          bootID: shortHash(`boot-${name}`, 32),
        },
        now,
      }),
    );
  }

  ensure(store, {
    apiVersion: T.storageClass.apiVersion,
    kind: T.storageClass.kind,
    metadata: { name: 'lvms-vg1', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'topolvm.io',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
    allowVolumeExpansion: true,
    parameters: { 'csi.storage.k8s.io/fstype': 'xfs', 'topolvm.io/device-class': 'vg1' },
  });

  ensure(store, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'pull-secret', namespace: 'openshift-config' },
    type: 'kubernetes.io/dockerconfigjson',
    data: {
      '.dockerconfigjson': b64(
        JSON.stringify({
          auths: { 'cloud.openshift.com': { auth: b64('user:token'), email: 'user@example.com' } },
        }),
      ),
    },
  });

  if (store.typeFor(T.image.apiVersion, T.image.kind)) {
    ensure(store, {
      apiVersion: T.image.apiVersion,
      kind: T.image.kind,
      metadata: { name: 'cluster' },
      spec: {},
      status: { internalRegistryHostname: 'image-registry.openshift-image-registry.svc:5000' },
    });
  }

  if (store.typeFor(T.mce.apiVersion, T.mce.kind)) {
    ensure(store, {
      apiVersion: T.mce.apiVersion,
      kind: T.mce.kind,
      metadata: { name: 'multiclusterengine' },
      spec: { availabilityConfig: 'High', targetNamespace: MCE_NAMESPACE },
      status: {
        phase: 'Available',
        currentVersion: MCE_VERSION,
        desiredVersion: MCE_VERSION,
        components: [
          'cluster-manager',
          'hive-operator',
          'managedcluster-import-controller-v2',
          'ocm-controller',
          'ocm-proxyserver',
          'ocm-webhook',
          'console-mce-console',
        ].map((name) => ({
          name,
          kind: 'Deployment',
          type: 'Available',
          status: 'True',
          reason: 'MinimumReplicasAvailable',
          message: 'Deployment has minimum availability.',
          lastTransitionTime: now,
        })),
        conditions: [
          {
            type: 'Progressing',
            status: 'True',
            reason: 'DeploySuccessful',
            message: 'All components deployed',
            lastTransitionTime: now,
            lastUpdateTime: now,
          },
          {
            type: 'Available',
            status: 'True',
            reason: 'ComponentsAvailable',
            message: 'All components are available',
            lastTransitionTime: now,
            lastUpdateTime: now,
          },
        ],
      },
    });
  }
}
