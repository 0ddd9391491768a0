/**
 * The bare metal operator (metal3), time-compressed, as it behaves on a hub without a provisioning
 * network that boots hosts from the InfraEnv discovery ISO (the converged agent flow):
 * registering (credentials Secret with username/password, a BMC address that parses, a driver that
 * can boot an ISO over virtual media — else `registration error`) → inspecting → available, skipped
 * with `inspect.metal3.io: disabled` or `spec.inspectionMode: disabled` → provisioning once the
 * InfraEnv named by the host's `infraenvs.agent-install.openshift.io` label has its ISO → provisioned
 * and powered on. `faults.failProvisioning` hosts fail with a `provisioning error`. Deleting a host
 * (finalizer) deprovisions and powers it off before it goes.
 */
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { KubeObject } from '../types.js';
import type { Ctx, Reconciler } from './context.js';
import {
  L,
  T,
  addFinalizer,
  get,
  list,
  patch,
  patchStatus,
  rec,
  removeFinalizer,
  secretValue,
  str,
} from './util.js';

const BMH_FINALIZER = 'baremetalhost.metal3.io';

/** BMC drivers BMO knows; `iso`: can boot an ISO without a provisioning network. */
const DRIVERS: Record<string, { iso: boolean }> = {
  ipmi: { iso: false },
  libvirt: { iso: false },
  redfish: { iso: false },
  'redfish-virtualmedia': { iso: true },
  'redfish-uefihttp': { iso: false },
  'idrac-redfish': { iso: false },
  'idrac-virtualmedia': { iso: true },
  'ilo5-redfish': { iso: false },
  'ilo5-virtualmedia': { iso: true },
  idrac: { iso: false },
  ilo4: { iso: false },
  ilo5: { iso: false },
  irmc: { iso: false },
};

const DNS_NAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?)*$/;

export interface ParsedBmc {
  /** Driver as BMO names it (`redfish-virtualmedia`), transport suffix dropped. */
  driver: string;
  host: string;
  port?: number;
  iso: boolean;
}

/** Parse a BMC address as BMO does (schemeless → ipmi; IPv6 must be bracketed). */
export function parseBmcAddress(address: string): ParsedBmc | { error: string } {
  if (!address) return { error: "Missing BMC connection detail 'Address'" };
  const m = /^([a-z0-9-]+(?:\+https?)?):\/\/(.*)$/i.exec(address);
  const scheme = m ? m[1].toLowerCase() : 'ipmi';
  const rest = m ? m[2] : address;
  const driver = scheme.replace(/\+https?$/, '');
  if (!DRIVERS[driver]) return { error: `Unknown BMC type '${scheme}' for address ${address}` };
  const authority = rest.split('/')[0];
  const shown = m ? address : `ipmi://${address}`;
  let host: string;
  let port: string | undefined;
  if (authority.startsWith('[')) {
    const b = /^\[([^\]]*)\](?::(\d*))?$/.exec(authority);
    if (!b)
      return { error: `failed to parse BMC address information: parse "${shown}": invalid port after host` };
    host = b[1];
    port = b[2];
    if (isIP(host) === 0) {
      return {
        error: `failed to parse BMC address information: parse "${shown}": invalid IP-literal "[${host}]"`,
      };
    }
  } else {
    const h = /^([^:]*)(?::(\d*))?$/.exec(authority);
    if (!h) {
      const after = authority.slice(authority.indexOf(':'));
      return {
        error: `failed to parse BMC address information: parse "${shown}": invalid port "${after.slice(after.lastIndexOf(':'))}" after host (IPv6 addresses must be in brackets: [${authority}])`,
      };
    }
    host = h[1];
    port = h[2];
    if (!host) return { error: `failed to parse BMC address information: missing host in "${address}"` };
    if (isIP(host) === 0 && !DNS_NAME.test(host)) {
      return { error: `failed to parse BMC address information: invalid host "${host}" in "${address}"` };
    }
  }
  if (port !== undefined && port !== '' && (Number(port) < 1 || Number(port) > 65535)) {
    return { error: `failed to parse BMC address information: invalid port ${port} in "${address}"` };
  }
  return { driver, host, ...(port ? { port: Number(port) } : {}), iso: DRIVERS[driver].iso };
}

/** The ISO URL of the InfraEnv a host belongs to, once the image exists. */
export function infraEnvIso(ctx: Ctx, bmh: KubeObject): string | undefined {
  const name = bmh.metadata.labels?.[L.infraEnv];
  if (!name) return undefined;
  const env = get(ctx.store, T.infraEnv, name, bmh.metadata.namespace);
  return str(env?.status?.isoDownloadURL) || undefined;
}

function inspectionDisabled(bmh: KubeObject): boolean {
  return bmh.metadata.annotations?.[L.inspect] === 'disabled' || rec(bmh.spec).inspectionMode === 'disabled';
}

export class BareMetalHostController implements Reconciler {
  readonly name = 'metal3';

  constructor(private readonly ctx: Ctx) {}

  reconcile(): void {
    for (const bmh of list(this.ctx.store, T.bmh)) {
      try {
        this.reconcileOne(bmh);
      } catch (err) {
        this.ctx.error(`BareMetalHost ${bmh.metadata.namespace}/${bmh.metadata.name}`, err);
      }
    }
  }

  private reconcileOne(bmh: KubeObject): void {
    const { ctx } = this;
    const id = `bmh/${bmh.metadata.uid}`;
    const now = ctx.now();
    const status = rec(bmh.status);
    const prov = rec(status.provisioning);
    const state = str(prov.state) ?? '';
    const history = rec(status.operationHistory);

    if (bmh.metadata.deletionTimestamp) {
      if (!(bmh.metadata.finalizers ?? []).includes(BMH_FINALIZER)) return;
      if (state === 'provisioned' || state === 'provisioning') {
        patchStatus(ctx.store, bmh, {
          provisioning: { ...prov, state: 'deprovisioning' },
          operationHistory: { ...history, deprovision: { start: now, end: null } },
        });
        return;
      }
      if (state === 'deprovisioning' && ctx.dwell.steps(id, 'deprovisioning') < 1) return;
      if (state !== 'powering off before delete' && state !== 'deleting') {
        patchStatus(ctx.store, bmh, {
          provisioning: { ...prov, state: 'powering off before delete' },
          poweredOn: false,
          operationHistory: {
            ...history,
            deprovision: { start: rec(history.deprovision).start ?? now, end: now },
          },
        });
        return;
      }
      ctx.dwell.forget(id);
      removeFinalizer(ctx.store, bmh, BMH_FINALIZER);
      return;
    }

    bmh = addFinalizer(ctx.store, bmh, BMH_FINALIZER);
    const base = {
      errorCount: typeof status.errorCount === 'number' ? status.errorCount : 0,
      errorMessage: str(status.errorMessage) ?? '',
      operationalStatus: str(status.operationalStatus) ?? 'discovered',
      poweredOn: status.poweredOn === true,
      provisioningFailCount:
        typeof status.provisioningFailCount === 'number' ? status.provisioningFailCount : 0,
      provisioning: { ID: str(prov.ID) ?? randomUUID(), state: state || 'registering', ...rest(prov) },
      lastUpdated: now,
    };
    if (!state) {
      patchStatus(ctx.store, bmh, {
        ...base,
        operationHistory: { register: { start: now, end: null } },
        hardwareProfile: 'unknown',
      });
      return;
    }

    const spec = rec(bmh.spec);
    const bmc = rec(spec.bmc);
    const ok = (extra: Record<string, unknown>): void => {
      patchStatus(ctx.store, bmh, {
        ...base,
        errorType: null,
        errorMessage: '',
        errorCount: 0,
        operationalStatus: 'OK',
        lastUpdated: str(status.lastUpdated) ?? now,
        ...extra,
      });
    };
    const fail = (errorType: string, message: string): void => {
      const same = status.errorType === errorType && status.errorMessage === message;
      if (same) return;
      patchStatus(ctx.store, bmh, {
        ...base,
        errorType,
        errorMessage: message,
        operationalStatus: 'error',
        errorCount: base.errorCount + 1,
        lastUpdated: now,
      });
    };

    if (state === 'registering') {
      const credName = str(bmc.credentialsName);
      const secret = credName ? get(ctx.store, T.secret, credName, bmh.metadata.namespace) : undefined;
      if (!credName || !secret) {
        fail(
          'registration error',
          credName
            ? `The BMC secret ${bmh.metadata.namespace}/${credName} does not exist`
            : 'Missing BMC connection details: Credentials',
        );
        return;
      }
      if (!secretValue(secret, 'username')) {
        fail('registration error', "Missing BMC connection detail 'username' in credentials");
        return;
      }
      if (!secretValue(secret, 'password')) {
        fail('registration error', "Missing BMC connection details 'password' in credentials");
        return;
      }
      const parsed = parseBmcAddress(str(bmc.address) ?? '');
      if ('error' in parsed) {
        fail('registration error', parsed.error);
        return;
      }
      if (!parsed.iso) {
        fail('registration error', `BMC driver ${parsed.driver} requires a provisioning network`);
        return;
      }
      // Registered. With the converged flow the host stays here until its discovery ISO exists.
      const steps = ctx.dwell.steps(id, 'registering');
      const iso = infraEnvIso(ctx, bmh);
      const wantsIso = bmh.metadata.labels?.[L.infraEnv] !== undefined;
      if (steps < 1 || (wantsIso && !iso)) {
        ok({
          goodCredentials: {
            credentials: { name: credName, namespace: bmh.metadata.namespace },
            credentialsVersion: secret.metadata.resourceVersion ?? '1',
          },
        });
        return;
      }
      const next = inspectionDisabled(bmh) ? (wantsIso ? 'provisioning' : 'available') : 'inspecting';
      ok({
        provisioning: { ...base.provisioning, state: next },
        operationHistory: {
          ...history,
          register: { start: rec(history.register).start ?? now, end: now },
          ...(next === 'inspecting' ? { inspect: { start: now, end: null } } : {}),
          ...(next === 'provisioning' ? { provision: { start: now, end: null } } : {}),
        },
        goodCredentials: {
          credentials: { name: credName, namespace: bmh.metadata.namespace },
          credentialsVersion: secret.metadata.resourceVersion ?? '1',
        },
      });
      return;
    }

    if (state === 'inspecting') {
      if (ctx.dwell.steps(id, 'inspecting') < 2) return;
      ok({
        provisioning: { ...base.provisioning, state: 'available' },
        hardware: hardwareOf(bmh),
        operationHistory: { ...history, inspect: { start: rec(history.inspect).start ?? now, end: now } },
      });
      return;
    }

    if (state === 'available' || state === 'ready') {
      const iso = infraEnvIso(ctx, bmh);
      if (!iso || ctx.dwell.steps(id, 'available') < 1) return;
      ok({
        provisioning: { ...base.provisioning, state: 'provisioning' },
        operationHistory: { ...history, provision: { start: now, end: null } },
      });
      return;
    }

    if (state === 'provisioning') {
      const iso = infraEnvIso(ctx, bmh);
      if (ctx.options.faults.failProvisioning?.includes(bmh.metadata.name)) {
        if (ctx.dwell.steps(id, 'provisioning') < 2) return;
        if (status.errorType !== 'provisioning error') {
          patchStatus(ctx.store, bmh, {
            ...base,
            errorType: 'provisioning error',
            errorMessage: `Image provisioning failed: Failed to prepare to deploy: Redfish exception occurred. Error: Failed to insert virtual media: the BMC of ${bmh.metadata.name} refused ${iso ?? 'the discovery ISO'} (HTTP 500)`,
            operationalStatus: 'error',
            errorCount: base.errorCount + 1,
            provisioningFailCount: base.provisioningFailCount + 1,
            lastUpdated: now,
          });
        }
        return;
      }
      if (ctx.dwell.steps(id, 'provisioning') < 3 || !iso) return;
      ok({
        provisioning: {
          ...base.provisioning,
          state: 'provisioned',
          image: { url: iso, format: 'live-iso' },
          ...(rec(spec.rootDeviceHints) && Object.keys(rec(spec.rootDeviceHints)).length > 0
            ? { rootDeviceHints: rec(spec.rootDeviceHints) }
            : {}),
          ...(str(spec.bootMode) ? { bootMode: spec.bootMode } : { bootMode: 'UEFI' }),
        },
        poweredOn: spec.online !== false,
        hardware: rec(status.hardware).hostname ? status.hardware : hardwareOf(bmh),
        operationHistory: { ...history, provision: { start: rec(history.provision).start ?? now, end: now } },
      });
      return;
    }

    if (state === 'provisioned') {
      if (bmh.metadata.annotations?.[L.reboot] !== undefined) {
        rebootHost(ctx, bmh, now);
        return;
      }
      const powered = spec.online !== false;
      if (status.poweredOn !== powered) ok({ poweredOn: powered });
    }
  }
}

/**
 * `reboot.metal3.io` on a provisioned host: the operator power-cycles it and removes the
 * annotation. The host boots its image again, the discovery ISO, so an Agent that left a cluster
 * and waited for that (`unbinding-pending-user-action`) registers anew (discovering-unbound).
 */
function rebootHost(ctx: Ctx, bmh: KubeObject, now: string): void {
  patch(ctx.store, bmh, { metadata: { annotations: { [L.reboot]: null } } });
  patchStatus(ctx.store, bmh, { poweredOn: true, lastUpdated: now });
  for (const agent of list(ctx.store, T.agent, { namespace: bmh.metadata.namespace })) {
    if (agent.metadata.labels?.[L.bmh] !== bmh.metadata.name) continue;
    const debugInfo = rec(agent.status?.debugInfo);
    if (debugInfo.state === 'unbinding-pending-user-action')
      patchStatus(ctx.store, agent, { debugInfo: { ...debugInfo, state: 'discovering-unbound' } });
  }
}

/** provisioning fields besides ID and state, kept as they are. */
function rest(prov: Record<string, unknown>): Record<string, unknown> {
  const { ID: _id, state: _state, ...others } = prov;
  return others;
}

/** What inspection reports for a host: a small virtual machine-like server. */
function hardwareOf(bmh: KubeObject): Record<string, unknown> {
  const mac = str(rec(bmh.spec).bootMACAddress) ?? '52:54:00:00:00:01';
  return {
    hostname: bmh.metadata.annotations?.[L.bmacHostname] ?? bmh.metadata.name,
    cpu: {
      arch: 'x86_64',
      model: 'Intel Xeon Processor (Icelake)',
      clockMegahertz: 2600,
      count: 8,
      flags: ['vmx', 'sse4_2', 'avx2'],
    },
    ramMebibytes: 32768,
    nics: [{ name: 'enp1s0', mac, model: '0x1af4 0x0001', speedGbps: 1, pxe: true, vlanId: 0 }],
    storage: [
      {
        name: '/dev/sda',
        sizeBytes: 128849018880,
        rotational: false,
        type: 'SSD',
        model: 'QEMU HARDDISK',
        vendor: 'QEMU',
        serialNumber: 'drive-scsi0',
      },
      {
        name: '/dev/sdb',
        sizeBytes: 536870912000,
        rotational: true,
        type: 'HDD',
        model: 'QEMU HARDDISK',
        vendor: 'QEMU',
        serialNumber: 'drive-scsi1',
      },
    ],
    systemVendor: {
      manufacturer: 'Red Hat',
      productName: 'KVM (RHEL 9.4.0 PC (Q35 + ICH9, 2009))',
      serialNumber: '',
    },
    firmware: { bios: { vendor: 'EDK II', version: 'edk2-20240524-1.el9', date: '05/24/2024' } },
  };
}
