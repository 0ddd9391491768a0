/**
 * assisted-service, time-compressed: the InfraEnv controller (discovery ISO URL and ImageCreated), the
 * BareMetalHost agent controller (BMAC: an Agent per booted host, approval, hostname/role/disk from the
 * host) and the Agent lifecycle (registration and validation; binding → discovering → insufficient →
 * installing → installing-in-progress → added-to-existing-cluster once the CAPI provider binds it; the
 * hosted cluster's Node, running the release of the Agent's NodePool, appears at the `Joined` stage;
 * unbinding leaves it pending user action).
 */
import { randomUUID } from 'node:crypto';
import type { KubeObject } from '../types.js';
import {
  guestForClusterDeployment,
  hostedClusterForClusterDeployment,
  releaseVersion,
  type Ctx,
  type Reconciler,
} from './context.js';
import { MCE_NAMESPACE, assistedServiceReady } from './mce.js';
import { machineOfAgent } from './machines.js';
import { guestNode, nodeName } from './nodes.js';
import { infraEnvIso, parseBmcAddress } from './metal3.js';
import {
  L,
  T,
  arr,
  create,
  get,
  list,
  minorOf,
  patch,
  patchStatus,
  rec,
  remove,
  shortHash,
  str,
  v1Conditions,
  type Cond,
} from './util.js';

const IMAGE_SERVICE_HOST = `assisted-image-service-${MCE_NAMESPACE}.apps.hub.example.com`;
const ASSISTED_SERVICE_HOST = `assisted-service-${MCE_NAMESPACE}.apps.hub.example.com`;

/** Installation stages of a day-2 (HyperShift worker) host, with the percentage each reports. */
const STAGES: { stage: string; percent: number; steps: number }[] = [
  { stage: 'Starting installation', percent: 10, steps: 1 },
  { stage: 'Installing', percent: 20, steps: 1 },
  { stage: 'Writing image to disk', percent: 30, steps: 3 },
  { stage: 'Rebooting', percent: 70, steps: 1 },
  { stage: 'Waiting for ignition', percent: 75, steps: 1 },
  { stage: 'Configuring', percent: 85, steps: 1 },
  { stage: 'Joined', percent: 95, steps: 1 },
  { stage: 'Done', percent: 100, steps: 0 },
];

/** Agent states before a cluster binds it. */
const UNBOUND_STATES = new Set(['', 'discovering-unbound', 'known-unbound', 'insufficient-unbound']);

/** The IP stack of the hosted cluster whose Agents live in a namespace: v4, v6 or both. */
function ipStack(ctx: Ctx, namespace: string): { v4: boolean; v6: boolean } {
  const hc = list(ctx.store, T.hostedCluster).find(
    (h) => str(rec(rec(rec(h.spec).platform).agent).agentNamespace) === namespace,
  );
  const net = rec(rec(hc?.spec).networking);
  const cidrs = [...arr(net.clusterNetwork), ...arr(net.serviceNetwork), ...arr(net.machineNetwork)]
    .map((c) => str(rec(c).cidr) ?? '')
    .filter(Boolean);
  if (cidrs.length === 0) return { v4: true, v6: false };
  const v6 = cidrs.some((c) => c.includes(':'));
  const v4 = cidrs.some((c) => !c.includes(':'));
  return { v4, v6 };
}

interface Disk {
  id: string;
  path: string;
  name: string;
  sizeBytes: number;
  driveType: string;
  rotational: boolean;
}

function disksOf(mac: string): Disk[] {
  const wwn = shortHash(mac, 16);
  return [
    {
      id: `/dev/disk/by-id/wwn-0x${wwn}`,
      path: '/dev/sda',
      name: 'sda',
      sizeBytes: 128849018880,
      driveType: 'SSD',
      rotational: false,
    },
    {
      id: `/dev/disk/by-id/wwn-0x${shortHash(`${mac}b`, 16)}`,
      path: '/dev/sdb',
      name: 'sdb',
      sizeBytes: 536870912000,
      driveType: 'HDD',
      rotational: true,
    },
  ];
}

/** The installation disk BMAC derives from a host's rootDeviceHints. */
function diskFromHints(disks: Disk[], hints: Record<string, unknown>): string | undefined {
  if (Object.keys(hints).length === 0) return undefined;
  const match = disks.find((d) => {
    if (typeof hints.deviceName === 'string' && hints.deviceName !== d.path && hints.deviceName !== d.id)
      return false;
    if (typeof hints.minSizeGigabytes === 'number' && d.sizeBytes < hints.minSizeGigabytes * 1024 ** 3)
      return false;
    if (typeof hints.rotational === 'boolean' && hints.rotational !== d.rotational) return false;
    if (typeof hints.wwn === 'string' && !d.id.includes(hints.wwn)) return false;
    return true;
  });
  return match ? match.id : '/dev/not-found-by-hints';
}

function macHost(mac: string): number {
  return 30 + (parseInt(shortHash(mac, 6), 16) % 200);
}

export class InfraEnvController implements Reconciler {
  readonly name = 'assisted-infraenv';
  private readonly imageGeneration = new Map<string, number>();

  constructor(private readonly ctx: Ctx) {}

  reconcile(): void {
    for (const env of list(this.ctx.store, T.infraEnv)) {
      try {
        this.reconcileOne(env);
      } catch (err) {
        this.ctx.error(`InfraEnv ${env.metadata.namespace}/${env.metadata.name}`, err);
      }
    }
  }

  private reconcileOne(env: KubeObject): void {
    const { ctx } = this;
    if (env.metadata.deletionTimestamp) return;
    const uid = env.metadata.uid ?? env.metadata.name;
    const gen = env.metadata.generation ?? 1;
    const status = rec(env.status);
    if (str(status.isoDownloadURL) && this.imageGeneration.get(uid) === gen) return;
    const now = ctx.now();
    const asc = get(ctx.store, T.agentServiceConfig, 'agent');
    const spec = rec(env.spec);
    const fail = (message: string): void => {
      patchStatus(ctx.store, env, {
        conditions: v1Conditions(
          status.conditions,
          [
            {
              type: 'ImageCreated',
              status: 'False',
              reason: 'ImageCreationError',
              message: `Failed to create image: ${message}`,
            },
          ],
          now,
        ),
      });
    };
    if (!asc) {
      fail(
        'AgentServiceConfig "agent" not found: the assisted-service (infrastructure operator) is not configured on this hub',
      );
      return;
    }
    if (!assistedServiceReady(ctx)) return;
    const pullSecret = str(rec(spec.pullSecretRef).name);
    if (!pullSecret || !get(ctx.store, T.secret, pullSecret, env.metadata.namespace)) {
      fail(
        `failed to get pull secret for update: secrets "${pullSecret ?? ''}" not found in namespace ${env.metadata.namespace}`,
      );
      return;
    }
    const arch = str(spec.cpuArchitecture) || 'x86_64';
    const osImages = arr(rec(asc.spec).osImages).map(rec);
    if (ctx.options.faults.isoCreationFailure) {
      const base =
        str(osImages.find((o) => o.cpuArchitecture === arch)?.url) ??
        `https://mirror.openshift.com/pub/openshift-v4/${arch}/dependencies/rhcos/${minorOf(ctx.options.hubVersion)}/latest/rhcos-live.${arch}.iso`;
      fail(
        `failed to download the base ISO from ${base}: dial tcp: lookup ${new URL(base).hostname}: no such host`,
      );
      return;
    }
    if (ctx.dwell.steps(`infraenv/${uid}`, `gen-${gen}`) < 1) return;
    const version =
      str(spec.osImageVersion) ??
      osImages
        .filter((o) => (str(o.cpuArchitecture) ?? 'x86_64') === arch)
        .map((o) => str(o.openshiftVersion) ?? '')
        .sort((a, b) => a.localeCompare(b, undefined, { numeric: true }))
        .pop() ??
      minorOf(ctx.options.hubVersion);
    const token = shortHash(`${uid}-token`, 40);
    const kind = spec.imageType === 'full-iso' ? 'full' : 'minimal';
    const base = `https://${IMAGE_SERVICE_HOST}`;
    this.imageGeneration.set(uid, gen);
    patchStatus(ctx.store, env, {
      isoDownloadURL: `${base}/byapikey/${token}/${version}/${arch}/${kind}.iso`,
      createdTime: now,
      agentLabelSelector: { matchLabels: { [L.infraEnv]: env.metadata.name } },
      bootArtifacts: {
        initrd: `${base}/images/${uid}/pxe-initrd?api_key=${token}&arch=${arch}&version=${version}`,
        kernel: `${base}/boot-artifacts/kernel?arch=${arch}&version=${version}`,
        rootfs: `${base}/boot-artifacts/rootfs?arch=${arch}&version=${version}`,
        ipxeScript: `https://${ASSISTED_SERVICE_HOST}/api/assisted-install/v2/infra-envs/${uid}/downloads/files?api_key=${token}&file_name=ipxe-script`,
        discoveryIgnitionURL: `https://${ASSISTED_SERVICE_HOST}/api/assisted-install/v2/infra-envs/${uid}/downloads/files?api_key=${token}&file_name=discovery.ign`,
      },
      debugInfo: {
        eventsURL: `https://${ASSISTED_SERVICE_HOST}/api/assisted-install/v2/events?api_key=${token}&infra_env_id=${uid}`,
      },
      conditions: v1Conditions(
        status.conditions,
        [{ type: 'ImageCreated', status: 'True', reason: 'ImageCreated', message: 'Image has been created' }],
        now,
      ),
    });
  }
}

/** BMAC: an Agent for each booted BareMetalHost, kept in line with the host's annotations. */
export class BmacController implements Reconciler {
  readonly name = 'assisted-bmac';

  constructor(private readonly ctx: Ctx) {}

  reconcile(): void {
    const { ctx } = this;
    const agents = list(ctx.store, T.agent);
    const hosts = list(ctx.store, T.bmh);
    // Agents whose host is gone go with it.
    for (const agent of agents) {
      const bmhName = agent.metadata.labels?.[L.bmh];
      if (!bmhName || agent.metadata.deletionTimestamp) continue;
      if (
        !hosts.some((h) => h.metadata.name === bmhName && h.metadata.namespace === agent.metadata.namespace)
      ) {
        remove(ctx.store, T.agent, agent.metadata.name, agent.metadata.namespace);
      }
    }
    if (!assistedServiceReady(ctx)) return;
    for (const bmh of hosts) {
      try {
        this.reconcileHost(
          bmh,
          agents.filter(
            (a) =>
              a.metadata.namespace === bmh.metadata.namespace &&
              a.metadata.labels?.[L.bmh] === bmh.metadata.name,
          ),
        );
      } catch (err) {
        ctx.error(`BMAC for BareMetalHost ${bmh.metadata.namespace}/${bmh.metadata.name}`, err);
      }
    }
  }

  private reconcileHost(bmh: KubeObject, agents: KubeObject[]): void {
    const { ctx } = this;
    const envName = bmh.metadata.labels?.[L.infraEnv];
    if (!envName || bmh.metadata.deletionTimestamp) return;
    const status = rec(bmh.status);
    const booted = rec(status.provisioning).state === 'provisioned' && status.poweredOn === true;
    const env = get(ctx.store, T.infraEnv, envName, bmh.metadata.namespace);
    const spec = rec(bmh.spec);
    const mac = (str(spec.bootMACAddress) ?? '').toLowerCase();
    const disks = disksOf(mac);
    const hints = rec(spec.rootDeviceHints);
    const annotations = bmh.metadata.annotations ?? {};
    const approve = ctx.options.bmacAutoApprove || rec(rec(env?.spec).agentApproval).autoApprove === true;
    const desired: Record<string, unknown> = {};
    if (annotations[L.bmacHostname]) desired.hostname = annotations[L.bmacHostname];
    if (annotations[L.bmacRole]) desired.role = annotations[L.bmacRole];
    const disk = diskFromHints(disks, hints);
    if (disk) desired.installation_disk_id = disk;

    if (agents.length > 0) {
      for (const agent of agents) {
        patch(ctx.store, agent, { spec: { ...desired, ...(approve ? { approved: true } : {}) } });
      }
      ctx.dwell.forget(`bmac/${bmh.metadata.uid}`);
      return;
    }
    if (!booted || !env || !infraEnvIso(ctx, bmh)) return;
    // The host boots the discovery ISO and its agent registers a step later.
    if (ctx.dwell.steps(`bmac/${bmh.metadata.uid}`, 'booting') < 1) return;
    const hostname = annotations[L.bmacHostname] ?? bmh.metadata.name;
    const stack = ipStack(ctx, bmh.metadata.namespace ?? '');
    const n = macHost(mac);
    const ipv4 = stack.v4 ? [`192.168.125.${n}/24`] : [];
    const ipv6 = stack.v6 ? [`fd00:1101::${n.toString(16)}/64`] : [];
    const bmc = parseBmcAddress(str(rec(spec.bmc).address) ?? '');
    const vendor = vendorOf('error' in bmc ? 'redfish-virtualmedia' : bmc.driver);
    const name = randomUUID();
    const now = ctx.now();
    const labels: Record<string, string> = {
      ...Object.fromEntries(Object.entries(rec(rec(env.spec).agentLabels)).map(([k, v]) => [k, String(v)])),
      [L.infraEnv]: envName,
      [L.bmh]: bmh.metadata.name,
      'inventory.agent-install.openshift.io/cpu-architecture': 'x86_64',
      'inventory.agent-install.openshift.io/cpu-virtenabled': 'true',
      'inventory.agent-install.openshift.io/host-isvirtual': String(vendor.virtual),
      'inventory.agent-install.openshift.io/host-manufacturer': vendor.manufacturer.replace(
        /[^A-Za-z0-9._-]/g,
        '',
      ),
      'inventory.agent-install.openshift.io/host-productname': vendor.productName.replace(
        /[^A-Za-z0-9._-]/g,
        '',
      ),
      'inventory.agent-install.openshift.io/storage-hasnonrotationaldisk': 'true',
    };
    for (const [k, v] of Object.entries(bmh.metadata.labels ?? {})) {
      const prefix = 'bmac.agent-install.openshift.io.agent-label.';
      if (k.startsWith(prefix)) labels[k.slice(prefix.length)] = v;
    }
    create(ctx.store, {
      apiVersion: T.agent.apiVersion,
      kind: T.agent.kind,
      metadata: { name, namespace: bmh.metadata.namespace, labels },
      spec: { approved: approve, role: '', ...desired },
      status: {
        role: 'auto-assign',
        bootstrap: false,
        inventory: {
          hostname,
          reportTime: now,
          bmcAddress: 'error' in bmc ? '' : bmc.host,
          memory: { physicalBytes: 34359738368, usableBytes: 33643659264 },
          cpu: {
            count: 8,
            architecture: 'x86_64',
            modelName: 'Intel Xeon Processor (Icelake)',
            clockMegahertz: 2600,
            flags: ['vmx', 'sse4_2', 'avx2'],
          },
          interfaces: [
            {
              name: 'enp1s0',
              macAddress: mac,
              ipV4Addresses: ipv4,
              ipV6Addresses: ipv6,
              flags: ['up', 'broadcast', 'multicast'],
              hasCarrier: true,
              mtu: 1500,
              speedMbps: 1000,
              product: '0x0001',
              vendor: '0x1af4',
            },
          ],
          disks: disks.map((d) => ({
            id: d.id,
            path: d.path,
            name: d.name,
            byID: d.id,
            byPath: `/dev/disk/by-path/pci-0000:04:00.0-scsi-0:0:0:${d.name === 'sda' ? 0 : 1}`,
            sizeBytes: d.sizeBytes,
            driveType: d.driveType,
            bootable: d.name === 'sda',
            model: 'QEMU HARDDISK',
            vendor: 'QEMU',
            installationEligibility: { eligible: true, notEligibleReasons: [] },
          })),
          boot: { currentBootMode: 'uefi' },
          systemVendor: { ...vendor, serialNumber: shortHash(`serial-${mac}`, 12) },
        },
        debugInfo: {
          state: 'discovering-unbound',
          stateInfo: 'Waiting for host to send hardware details',
          eventsURL: `https://${ASSISTED_SERVICE_HOST}/api/assisted-install/v2/events?api_key=${shortHash(name, 40)}&host_id=${name}`,
        },
        conditions: v1Conditions(
          [],
          agentConditions({ state: 'discovering-unbound', approved: approve, diskOk: true }),
          now,
        ),
      },
    });
    ctx.dwell.forget(`bmac/${bmh.metadata.uid}`);
  }
}

function vendorOf(driver: string): { manufacturer: string; productName: string; virtual: boolean } {
  if (driver.startsWith('idrac'))
    return { manufacturer: 'Dell Inc.', productName: 'PowerEdge R650', virtual: false };
  if (driver.startsWith('ilo'))
    return { manufacturer: 'HPE', productName: 'ProLiant DL360 Gen10 Plus', virtual: false };
  return { manufacturer: 'Red Hat', productName: 'KVM', virtual: true };
}

interface AgentView {
  state: string;
  approved: boolean;
  diskOk: boolean;
  stage?: string;
}

/** The Agent's conditions in a state, with the real reasons and messages. */
function agentConditions(a: AgentView): Cond[] {
  const { state, approved } = a;
  const specSynced: Cond = a.diskOk
    ? {
        type: 'SpecSynced',
        status: 'True',
        reason: 'SyncOK',
        message: 'The Spec has been successfully applied',
      }
    : {
        type: 'SpecSynced',
        status: 'False',
        reason: 'InputError',
        message:
          "The Spec could not be synced due to an input error: Requested installation disk is not part of the host's valid disks",
      };
  const connected: Cond = {
    type: 'Connected',
    status: 'True',
    reason: 'AgentIsConnected',
    message: "The agent's connection to the installation service is unimpaired",
  };
  const notApproved: Cond = {
    type: 'RequirementsMet',
    status: 'False',
    reason: 'AgentIsNotApproved',
    message: 'The agent is not approved',
  };
  const notReady: Cond = {
    type: 'RequirementsMet',
    status: 'False',
    reason: 'AgentNotReady',
    message: 'The agent is not ready to begin the installation',
  };
  const ready: Cond = {
    type: 'RequirementsMet',
    status: 'True',
    reason: 'AgentIsReady',
    message: 'The agent is ready to begin the installation',
  };
  const passing: Cond = {
    type: 'Validated',
    status: 'True',
    reason: 'ValidationsPassing',
    message: "The agent's validations are passing",
  };
  const unknown: Cond = {
    type: 'Validated',
    status: 'Unknown',
    reason: 'ValidationsUnknown',
    message: "The agent's validations have not yet been calculated",
  };
  const notStarted: Cond = {
    type: 'Installed',
    status: 'False',
    reason: 'InstallationNotStarted',
    message: 'The installation has not yet started',
  };
  const unbound: Cond = {
    type: 'Bound',
    status: 'False',
    reason: 'Unbound',
    message: 'The agent is not bound to any cluster deployment',
  };
  const bound: Cond = {
    type: 'Bound',
    status: 'True',
    reason: 'Bound',
    message: 'The agent is bound to a cluster deployment',
  };
  const c = (type: string, status: Cond['status'], reason: string, message: string): Cond => ({
    type,
    status,
    reason,
    message,
  });
  const binding = 'The agent is currently binding to a cluster deployment';
  const unbinding = 'The agent is currently unbinding from a cluster deployment';
  switch (state) {
    case 'discovering-unbound':
      return [specSynced, connected, approved ? notReady : notApproved, unknown, notStarted, unbound];
    case 'insufficient-unbound':
    case 'insufficient':
      return [
        specSynced,
        connected,
        approved ? notReady : notApproved,
        c(
          'Validated',
          'False',
          'ValidationsFailing',
          a.diskOk
            ? "The agent's validations are failing: Ignition is not downloadable. Please ensure host connectivity to the cluster's API"
            : "The agent's validations are failing: No eligible disks were found, please check specific disks to see why they are not eligible",
        ),
        notStarted,
        state === 'insufficient' ? bound : unbound,
      ];
    case 'known-unbound':
      return [specSynced, connected, approved ? ready : notApproved, passing, notStarted, unbound];
    case 'binding':
      return [
        specSynced,
        connected,
        c('RequirementsMet', 'False', 'Binding', binding),
        c('Validated', 'False', 'Binding', binding),
        c('Installed', 'False', 'Binding', binding),
        c('Bound', 'False', 'Binding', binding),
      ];
    case 'discovering':
      return [specSynced, connected, approved ? notReady : notApproved, unknown, notStarted, bound];
    case 'known':
      return [specSynced, connected, approved ? ready : notApproved, passing, notStarted, bound];
    case 'installing':
    case 'installing-in-progress':
      return [
        specSynced,
        connected,
        c(
          'RequirementsMet',
          'True',
          'AgentAlreadyInstalling',
          'Installation already started and is in progress',
        ),
        passing,
        c(
          'Installed',
          'False',
          'InstallationInProgress',
          `The installation is in progress: ${a.stage ?? 'Starting installation'}`,
        ),
        bound,
      ];
    case 'added-to-existing-cluster':
      return [
        specSynced,
        connected,
        c('RequirementsMet', 'True', 'AgentInstallationStopped', 'The agent installation stopped'),
        passing,
        c('Installed', 'True', 'InstallationCompleted', 'The installation has completed: Done'),
        bound,
      ];
    case 'unbinding':
      return [
        specSynced,
        connected,
        c('RequirementsMet', 'False', 'Unbinding', unbinding),
        c('Validated', 'False', 'Unbinding', unbinding),
        c('Installed', 'False', 'Unbinding', unbinding),
        c('Bound', 'False', 'Unbinding', unbinding),
      ];
    case 'unbinding-pending-user-action':
    default:
      return [
        specSynced,
        connected,
        c('RequirementsMet', 'False', 'Unbinding', unbinding),
        c('Validated', 'False', 'Unbinding', unbinding),
        notStarted,
        c(
          'Bound',
          'False',
          'UnbindingPendingUserAction',
          'The agent is currently unbinding; Pending host reboot from infraenv image',
        ),
      ];
  }
}

/** The Agent lifecycle. */
export class AgentController implements Reconciler {
  readonly name = 'assisted-agent';

  constructor(private readonly ctx: Ctx) {}

  reconcile(): void {
    if (!assistedServiceReady(this.ctx)) return;
    for (const agent of list(this.ctx.store, T.agent)) {
      try {
        this.reconcileOne(agent);
      } catch (err) {
        this.ctx.error(`Agent ${agent.metadata.namespace}/${agent.metadata.name}`, err);
      }
    }
  }

  private reconcileOne(agent: KubeObject): void {
    const { ctx } = this;
    if (agent.metadata.deletionTimestamp) return;
    const id = `agent/${agent.metadata.uid}`;
    const now = ctx.now();
    const spec = rec(agent.spec);
    const status = rec(agent.status);
    const debug = rec(status.debugInfo);
    const state = str(debug.state) ?? '';
    const approved = spec.approved === true;
    const cd = rec(spec.clusterDeploymentName);
    const boundTo =
      str(cd.name) && str(cd.namespace)
        ? { name: String(cd.name), namespace: String(cd.namespace) }
        : undefined;
    const disks = arr(rec(status.inventory).disks).map(rec);
    const diskId = str(spec.installation_disk_id) ?? str(spec.installation_disk_path);
    const diskOk =
      !diskId ||
      disks.some((d) => d.id === diskId || d.path === diskId || d.byID === diskId || d.byPath === diskId);
    const progress = rec(status.progress);
    const stage = str(progress.currentStage);

    let next = state || 'discovering-unbound';
    let nextStage = stage;
    const dwell = (phase: string): number => ctx.dwell.steps(id, phase);

    if (!boundTo) {
      if (state === 'discovering-unbound' || state === '') {
        if (dwell('discovering-unbound') >= 1) next = diskOk ? 'known-unbound' : 'insufficient-unbound';
      } else if (state === 'known-unbound' || state === 'insufficient-unbound') {
        next = diskOk ? 'known-unbound' : 'insufficient-unbound';
      } else if (state === 'unbinding') {
        if (dwell('unbinding') >= 1) next = 'unbinding-pending-user-action';
      } else if (
        state !== 'unbinding-pending-user-action' &&
        dwell('released') >= (ctx.options.faults.slowUnbind ?? 0)
      ) {
        // Released by the cluster: the host must boot the discovery image again.
        this.removeGuestNode(agent);
        next = 'unbinding';
        nextStage = undefined;
      }
    } else if (UNBOUND_STATES.has(state)) {
      if (state === 'known-unbound' || state === 'insufficient-unbound') next = 'binding';
      else if (dwell('discovering-unbound') >= 1) next = diskOk ? 'known-unbound' : 'insufficient-unbound';
    } else if (state === 'unbinding' || state === 'unbinding-pending-user-action') {
      if (state === 'unbinding' && dwell('unbinding') >= 1) next = 'unbinding-pending-user-action';
    } else {
      const guest = guestForClusterDeployment(ctx, boundTo.name, boundTo.namespace);
      const hc = hostedClusterForClusterDeployment(ctx, boundTo.name, boundTo.namespace);
      const ignitionReady = guest !== undefined && str(hc?.status?.ignitionEndpoint) !== undefined;
      switch (state) {
        case 'binding':
          if (dwell('binding') >= 1) next = 'discovering';
          break;
        case 'discovering':
          if (dwell('discovering') >= 1) next = 'insufficient';
          break;
        case 'insufficient':
          if (dwell('insufficient') >= 1 && ignitionReady && diskOk) next = approved ? 'installing' : 'known';
          break;
        case 'known':
          if (approved && diskOk) next = 'installing';
          break;
        case 'installing':
          if (dwell('installing') >= 1) {
            next = 'installing-in-progress';
            nextStage = STAGES[0].stage;
          }
          break;
        case 'installing-in-progress': {
          const i = Math.max(
            0,
            STAGES.findIndex((s) => s.stage === stage),
          );
          const cur = STAGES[i];
          const waited = dwell(`stage-${cur.stage}`);
          const gated = cur.stage === 'Rebooting' && !ignitionReady;
          if (waited >= cur.steps && !gated) {
            const nxt = STAGES[i + 1];
            if (nxt.stage === 'Joined' && guest && hc) this.ensureGuestNode(agent, guest.store, hc);
            if (nxt.stage === 'Done') next = 'added-to-existing-cluster';
            nextStage = nxt.stage;
          }
          break;
        }
        case 'added-to-existing-cluster': {
          // The kubelet (re)registers its Node, unless the host is being reprovisioned or deleted.
          const phase = str(rec(machineOfAgent(ctx, agent)?.status).phase);
          if (guest && hc && phase !== 'Provisioning' && phase !== 'Deleting')
            this.ensureGuestNode(agent, guest.store, hc);
          break;
        }
      }
    }

    const view: AgentView = { state: next, approved, diskOk, stage: nextStage };
    const statusPatch: Record<string, unknown> = {
      debugInfo: { ...debug, state: next, stateInfo: stateInfo(next, nextStage) },
      conditions: v1Conditions(status.conditions, agentConditions(view), now),
      installation_disk_id: diskOk && diskId ? diskId : (str(disks[0]?.id) ?? null),
    };
    if (boundTo && !UNBOUND_STATES.has(next) && !next.startsWith('unbinding')) {
      statusPatch.role = 'worker';
      statusPatch.kind = 'AddToExistingClusterHost';
      statusPatch.deprovision_info = {
        cluster_name: boundTo.name,
        cluster_namespace: boundTo.namespace,
        node_name: nodeName(agent),
        message: '',
      };
    }
    if (next === 'installing-in-progress' || next === 'added-to-existing-cluster') {
      const s = STAGES.find((x) => x.stage === nextStage) ?? STAGES[0];
      let percent = s.percent;
      let info: string | null = null;
      if (s.stage === 'Writing image to disk') {
        const w = Math.min(ctx.dwell.steps(id, `stage-${s.stage}`), s.steps);
        percent = 30 + Math.round((w / s.steps) * 35);
        info = `${Math.round((w / s.steps) * 100)}%`;
      }
      const changed = s.stage !== stage;
      statusPatch.progress = {
        currentStage: s.stage,
        installationPercentage: percent,
        progressStages: STAGES.map((x) => x.stage),
        progressInfo: info,
        stageStartTime: changed ? now : (progress.stageStartTime ?? now),
        stageUpdateTime:
          changed || (info ?? undefined) !== progress.progressInfo ? now : (progress.stageUpdateTime ?? now),
      };
    } else if (next === 'unbinding' || next === 'unbinding-pending-user-action' || UNBOUND_STATES.has(next)) {
      if (Object.keys(progress).length > 0) statusPatch.progress = null;
      if (!boundTo && status.role === 'worker') statusPatch.role = 'auto-assign';
    }
    patchStatus(ctx.store, agent, statusPatch);
  }

  private ensureGuestNode(agent: KubeObject, guest: import('../types.js').HubStore, hc: KubeObject): void {
    if (get(guest, T.node, nodeName(agent))) return;
    // The host runs the release of its NodePool (the HostedCluster's until the pool has one).
    const [npNs, npName] = (agent.metadata.annotations?.[L.nodePoolAnnotation] ?? '').split('/');
    const np = npName ? get(this.ctx.store, T.nodePool, npName, npNs) : undefined;
    const image = str(rec(rec(np?.spec).release).image) || str(rec(rec(hc.spec).release).image) || '';
    create(guest, guestNode(this.ctx, agent, releaseVersion(this.ctx, image), this.ctx.now()));
  }

  /** Remove the Node a released Agent had in its hosted cluster (recorded in deprovision_info). */
  private removeGuestNode(agent: KubeObject): void {
    const info = rec(agent.status?.deprovision_info);
    const name = str(info.cluster_name);
    const ns = str(info.cluster_namespace);
    if (!name || !ns) return;
    const guest = guestForClusterDeployment(this.ctx, name, ns);
    if (guest) remove(guest.store, T.node, str(info.node_name) ?? nodeName(agent));
  }
}

function stateInfo(state: string, stage: string | undefined): string {
  switch (state) {
    case 'discovering-unbound':
    case 'discovering':
      return 'Waiting for host to send hardware details';
    case 'known-unbound':
    case 'known':
      return 'Host is ready to be installed';
    case 'insufficient-unbound':
    case 'insufficient':
      return "Host cannot be installed due to following failing validation(s): Ignition is not downloadable. Please ensure host connectivity to the cluster's API";
    case 'binding':
      return 'Host is waiting to be bound to the cluster';
    case 'installing':
      return 'Installation is in progress';
    case 'installing-in-progress':
      return stage ?? 'Installation is in progress';
    case 'added-to-existing-cluster':
      return 'Host has rebooted and no further updates will be posted. Please check console for progress and to possibly approve pending CSRs';
    case 'unbinding':
      return 'Host is waiting to be unbound from the cluster';
    case 'unbinding-pending-user-action':
      return 'Host is waiting to be unbound from the cluster. Please reboot the host with the discovery ISO';
    default:
      return '';
  }
}
