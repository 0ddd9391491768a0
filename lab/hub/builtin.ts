/**
 * The built-in resource types the hub simulator serves beside the CRDs: the core and apps types the
 * install touches, RBAC, StorageClass and OpenShift's ClusterVersion. They have no schema (any field
 * is kept); Secrets get the API server's `stringData` folding and base64 check, Namespaces get
 * `status.phase: Active`, and Nodes print the columns kube-apiserver computes for them (STATUS from
 * the Ready condition, ROLES from the node-role labels, VERSION) so `kubectl get nodes` reads the same.
 * The hub also serves the Cluster API types HyperShift keeps in a hosted control plane namespace
 * (Machine, and the agent provider's AgentMachine), with their CRDs' printer columns.
 */
import { isObject } from './schema.js';
import { HubApiError, type KubeObject, type ResourceType } from './types.js';

type Columns = NonNullable<ResourceType['printerColumns']>;
/** Last, unless a type's columns place it themselves. */
const AGE = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function t(
  apiVersion: string,
  kind: string,
  plural: string,
  opts: { namespaced?: boolean; status?: boolean; shortNames?: string[]; columns?: Columns } = {},
): ResourceType {
  const slash = apiVersion.indexOf('/');
  return {
    group: slash < 0 ? '' : apiVersion.slice(0, slash),
    version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
    apiVersion,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    shortNames: opts.shortNames ?? [],
    namespaced: opts.namespaced ?? true,
    hasStatus: opts.status ?? false,
    printerColumns: opts.columns?.includes(AGE) ? opts.columns : [...(opts.columns ?? []), AGE],
    source: 'builtin',
  };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const DATA_KEY = /^[-._a-zA-Z0-9]+$/;

/** The API server's Secret handling: stringData into data (base64), data values must be base64. */
function normalizeSecret(obj: KubeObject): { unknownFields: string[] } {
  const name = obj.metadata?.name ?? '';
  const data: Record<string, unknown> = { ...((obj.data as Record<string, unknown> | undefined) ?? {}) };
  for (const [k, v] of Object.entries(data)) {
    if (typeof v !== 'string' || !BASE64.test(v)) {
      const at = typeof v === 'string' ? ` at input byte ${firstBadByte(v)}` : '';
      throw new HubApiError(
        400,
        'BadRequest',
        `Secret in version "v1" cannot be handled as a Secret: illegal base64 data${at} (data[${k}] of ${name})`,
      );
    }
  }
  const stringData = obj.stringData;
  if (stringData !== undefined && stringData !== null) {
    for (const [k, v] of Object.entries(stringData as Record<string, unknown>)) {
      data[k] = Buffer.from(String(v), 'utf8').toString('base64');
    }
  }
  delete obj.stringData;
  const bad = Object.keys(data).filter((k) => !DATA_KEY.test(k));
  if (bad.length > 0) {
    throw new HubApiError(
      422,
      'Invalid',
      `Secret "${name}" is invalid: data[${bad[0]}]: Invalid value: "${bad[0]}": a valid config key must consist of alphanumeric characters, '-', '_' or '.'`,
      {
        name,
        kind: 'Secret',
        causes: bad.map((k) => ({
          field: `data[${k}]`,
          reason: 'FieldValueInvalid',
          message: `Invalid value: "${k}"`,
        })),
      },
    );
  }
  if (Object.keys(data).length > 0 || obj.data !== undefined) obj.data = data;
  if (obj.type === undefined) obj.type = 'Opaque';
  return { unknownFields: [] };
}

function firstBadByte(s: string): number {
  const i = s.search(/[^A-Za-z0-9+/=]/);
  return i >= 0 ? i : s.length - (s.length % 4);
}

const NODE_ROLE_PREFIX = 'node-role.kubernetes.io/';

/** A Node's STATUS: Ready or NotReady from its (last) Ready condition, Unknown without one; cordoned: `,SchedulingDisabled`. */
function nodeStatus(node: KubeObject): string {
  let ready: Record<string, unknown> | undefined;
  const conditions = node.status?.conditions;
  for (const c of Array.isArray(conditions) ? conditions : [])
    if (isObject(c) && c.type === 'Ready') ready = c;
  const status = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (node.spec?.unschedulable === true) status.push('SchedulingDisabled');
  return status.join(',');
}

/** A Node's ROLES: the `node-role.kubernetes.io/<role>` suffixes and `kubernetes.io/role`, sorted, or `<none>`. */
function nodeRoles(node: KubeObject): string {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith(NODE_ROLE_PREFIX)) {
      if (k.length > NODE_ROLE_PREFIX.length) roles.add(k.slice(NODE_ROLE_PREFIX.length));
    } else if (k === 'kubernetes.io/role' && v !== '') roles.add(v);
  }
  return roles.size > 0 ? [...roles].sort().join(',') : '<none>';
}

/** The first address of `type` a Node reports, or `<none>`. */
function nodeAddress(node: KubeObject, type: string): string {
  const addresses = node.status?.addresses;
  for (const a of Array.isArray(addresses) ? addresses : [])
    if (isObject(a) && a.type === type) return String(a.address);
  return '<none>';
}

/** A `status.nodeInfo` field, or `fallback` when empty (kube-apiserver prints '' for the version). */
function nodeInfo(field: string, fallback: string): (node: KubeObject) => string {
  return (node) => {
    const info = node.status?.nodeInfo;
    const v = isObject(info) ? info[field] : undefined;
    return typeof v === 'string' && v !== '' ? v : fallback;
  };
}

/** The columns kube-apiserver's Node printer has (the priority 1 ones only with `-o wide`). */
const NODE_COLUMNS: Columns = [
  {
    name: 'Status',
    type: 'string',
    jsonPath: '.status.conditions',
    description: 'The status of the node',
    cell: nodeStatus,
  },
  {
    name: 'Roles',
    type: 'string',
    jsonPath: '.metadata.labels',
    description: 'The roles of the node',
    cell: nodeRoles,
  },
  AGE,
  {
    name: 'Version',
    type: 'string',
    jsonPath: '.status.nodeInfo.kubeletVersion',
    description: 'Kubelet Version reported by the node.',
    cell: nodeInfo('kubeletVersion', ''),
  },
  {
    name: 'Internal-IP',
    type: 'string',
    jsonPath: '.status.addresses',
    priority: 1,
    cell: (n) => nodeAddress(n, 'InternalIP'),
  },
  {
    name: 'External-IP',
    type: 'string',
    jsonPath: '.status.addresses',
    priority: 1,
    cell: (n) => nodeAddress(n, 'ExternalIP'),
  },
  {
    name: 'OS-Image',
    type: 'string',
    jsonPath: '.status.nodeInfo.osImage',
    priority: 1,
    cell: nodeInfo('osImage', '<unknown>'),
  },
  {
    name: 'Kernel-Version',
    type: 'string',
    jsonPath: '.status.nodeInfo.kernelVersion',
    priority: 1,
    cell: nodeInfo('kernelVersion', '<unknown>'),
  },
  {
    name: 'Container-Runtime',
    type: 'string',
    jsonPath: '.status.nodeInfo.containerRuntimeVersion',
    priority: 1,
    cell: nodeInfo('containerRuntimeVersion', '<unknown>'),
  },
];

/** API groups only a management cluster serves (a hosted cluster's API has no Machines). */
export const HUB_ONLY_GROUPS: readonly string[] = [
  'cluster.x-k8s.io',
  'capi-provider.agent-install.openshift.io',
];

/** The printer columns of cluster.x-k8s.io/v1beta1 Machine. */
const MACHINE_COLUMNS: Columns = [
  { name: 'Cluster', type: 'string', jsonPath: '.spec.clusterName', description: 'Cluster' },
  {
    name: 'NodeName',
    type: 'string',
    jsonPath: '.status.nodeRef.name',
    description: 'Node name associated with this machine',
  },
  { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID', description: 'Provider ID' },
  {
    name: 'Phase',
    type: 'string',
    jsonPath: '.status.phase',
    description: 'Machine status such as Terminating/Pending/Running/Failed etc',
  },
  AGE,
  {
    name: 'Version',
    type: 'string',
    jsonPath: '.spec.version',
    description: 'Kubernetes version associated with this Machine',
  },
];

/**
 * The built-in types: core v1, apps/v1, RBAC, StorageClass, config.openshift.io ClusterVersion, and
 * the Cluster API Machine and AgentMachine (see HUB_ONLY_GROUPS).
 */
export function builtinTypes(): ResourceType[] {
  const secret = t('v1', 'Secret', 'secrets', {
    columns: [{ name: 'Type', type: 'string', jsonPath: '.type' }],
  });
  secret.normalize = normalizeSecret;
  const namespace = t('v1', 'Namespace', 'namespaces', {
    namespaced: false,
    status: true,
    shortNames: ['ns'],
    columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }],
  });
  namespace.normalize = (obj) => {
    const status = (obj.status ??= {});
    if (status.phase === undefined) status.phase = 'Active';
    return { unknownFields: [] };
  };
  return [
    namespace,
    secret,
    t('v1', 'ConfigMap', 'configmaps', { shortNames: ['cm'] }),
    t('v1', 'Node', 'nodes', { namespaced: false, status: true, shortNames: ['no'], columns: NODE_COLUMNS }),
    t('v1', 'Pod', 'pods', {
      status: true,
      shortNames: ['po'],
      columns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }],
    }),
    t('v1', 'Service', 'services', {
      status: true,
      shortNames: ['svc'],
      columns: [
        { name: 'Type', type: 'string', jsonPath: '.spec.type' },
        { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
      ],
    }),
    t('v1', 'ServiceAccount', 'serviceaccounts', { shortNames: ['sa'] }),
    t('v1', 'Event', 'events', { shortNames: ['ev'] }),
    t('apps/v1', 'Deployment', 'deployments', {
      status: true,
      shortNames: ['deploy'],
      columns: [
        { name: 'Ready', type: 'string', jsonPath: '.status.readyReplicas' },
        { name: 'Available', type: 'string', jsonPath: '.status.availableReplicas' },
      ],
    }),
    t('apps/v1', 'StatefulSet', 'statefulsets', {
      status: true,
      shortNames: ['sts'],
      columns: [{ name: 'Ready', type: 'string', jsonPath: '.status.readyReplicas' }],
    }),
    t('rbac.authorization.k8s.io/v1', 'Role', 'roles'),
    t('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings'),
    t('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', { namespaced: false }),
    t('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', { namespaced: false }),
    t('storage.k8s.io/v1', 'StorageClass', 'storageclasses', {
      namespaced: false,
      shortNames: ['sc'],
      columns: [{ name: 'Provisioner', type: 'string', jsonPath: '.provisioner' }],
    }),
    t('config.openshift.io/v1', 'ClusterVersion', 'clusterversions', {
      namespaced: false,
      status: true,
      columns: [
        { name: 'Version', type: 'string', jsonPath: '.status.desired.version' },
        { name: 'Available', type: 'string', jsonPath: '.status.conditions[?(@.type=="Available")].status' },
        {
          name: 'Progressing',
          type: 'string',
          jsonPath: '.status.conditions[?(@.type=="Progressing")].status',
        },
      ],
    }),
    t('cluster.x-k8s.io/v1beta1', 'Machine', 'machines', {
      status: true,
      shortNames: ['ma'],
      columns: MACHINE_COLUMNS,
    }),
    t('capi-provider.agent-install.openshift.io/v1beta1', 'AgentMachine', 'agentmachines', { status: true }),
  ];
}
