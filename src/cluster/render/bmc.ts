/**
 * The metal3 BareMetalHost `spec.bmc.address` of a host: a driver scheme, the BMC host (IPv6 in
 * brackets), an optional port, and the Redfish system path. Vendors map to the virtual-media
 * drivers, which boot the discovery ISO without a provisioning network (plain `redfish://` and
 * `ipmi://` need one). Schemes and defaults follow baremetal-operator's pkg/hardwareutils/bmc.
 */
import { isIP } from 'node:net';
import type { BmcVendor, SiteBmc } from '../site/types.js';

interface VendorDriver {
  scheme: string;
  /** The Redfish system id used when the host gives none; undefined: no path. */
  systemId?: string;
}

const REDFISH: VendorDriver = { scheme: 'redfish-virtualmedia', systemId: '1' };
const IDRAC: VendorDriver = { scheme: 'idrac-virtualmedia', systemId: 'System.Embedded.1' };
const ILO5: VendorDriver = { scheme: 'ilo5-virtualmedia', systemId: '1' };
const ILO4: VendorDriver = { scheme: 'ilo4-virtualmedia' };
const IPMI: VendorDriver = { scheme: 'ipmi' };

/** Vendor → driver. `redfish` means Redfish virtual media: the agent flow boots an ISO. */
export const BMC_DRIVERS: Record<BmcVendor, VendorDriver> = {
  redfish: REDFISH,
  'redfish-virtualmedia': REDFISH,
  idrac: IDRAC,
  'idrac-virtualmedia': IDRAC,
  ilo5: ILO5,
  'ilo5-virtualmedia': ILO5,
  ilo4: ILO4,
  'ilo4-virtualmedia': ILO4,
  ipmi: IPMI,
};

/** The URL schemes baremetal-operator registers (each Redfish one also with `+http`/`+https`). */
const REDFISH_SCHEMES = [
  'redfish',
  'redfish-virtualmedia',
  'redfish-uefihttp',
  'idrac-redfish',
  'idrac-virtualmedia',
  'ilo5-redfish',
  'ilo5-virtualmedia',
];
export const BMC_SCHEMES: readonly string[] = [
  ...REDFISH_SCHEMES.flatMap((s) => [s, `${s}+http`, `${s}+https`]),
  'ilo4',
  'ilo4-virtualmedia',
  'ipmi',
  'libvirt',
];

/** `host` with brackets when it is an IPv6 literal (given with or without them). */
export function bracketHost(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  return isIP(bare) === 6 ? `[${bare}]` : bare;
}

/**
 * Why `url` is not a BMC address baremetal-operator accepts, with a hint, or undefined. Catches
 * an unknown scheme, a missing host, and an IPv6 literal without brackets (`redfish://fd00::1/…`).
 */
export function bmcUrlProblem(url: string): { message: string; hint: string } | undefined {
  const m = /^([a-z0-9+.-]+):\/\/([^/?#]*)(.*)$/i.exec(url);
  if (!m) {
    return {
      message: `"${url}" is not a URL`,
      hint: 'write it like redfish-virtualmedia://10.0.0.5/redfish/v1/Systems/1, or give vendor and address instead',
    };
  }
  const [, scheme, authority] = m as unknown as [string, string, string];
  if (!BMC_SCHEMES.includes(scheme.toLowerCase())) {
    return {
      message: `"${scheme}://" is not a BMC driver baremetal-operator knows`,
      hint: `use one of ${['redfish-virtualmedia', 'idrac-virtualmedia', 'ilo5-virtualmedia', 'ilo4-virtualmedia', 'ipmi'].join(', ')} (or redfish, idrac-redfish, ilo5-redfish, redfish-uefihttp, libvirt)`,
    };
  }
  const hostPort = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
  if (hostPort === '') return { message: `"${url}" has no host`, hint: 'put the BMC address after "://"' };
  if (!hostPort.startsWith('[') && (hostPort.match(/:/g) ?? []).length > 1) {
    return {
      message: `the IPv6 address in "${url}" is not in brackets`,
      hint: `write it as ${scheme}://[${hostPort}]/… (with a port: [addr]:port)`,
    };
  }
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0 || isIP(hostPort.slice(1, close)) !== 6)
      return {
        message: `"${hostPort}" is not a bracketed IPv6 address`,
        hint: 'write it like [fd00::1]:8000',
      };
  }
  return undefined;
}

/**
 * The BMC address of a host: its `url` as written, or `<scheme>://<host>[:port]<path>` from vendor,
 * address, port and systemId. Redfish-based vendors get `/redfish/v1/Systems/<systemId>`.
 */
export function bmcAddress(host: {
  bmc: Pick<SiteBmc, 'vendor' | 'address' | 'port' | 'systemId' | 'url'>;
}): string {
  const { bmc } = host;
  if (bmc.url !== undefined) return bmc.url;
  if (bmc.vendor === undefined || bmc.address === undefined)
    throw new Error('bmcAddress: a BMC needs url, or vendor and address');
  const driver = BMC_DRIVERS[bmc.vendor];
  const hostPart = `${bracketHost(bmc.address)}${bmc.port !== undefined ? `:${bmc.port}` : ''}`;
  const systemId = bmc.systemId ?? driver.systemId;
  const path =
    driver.systemId !== undefined && systemId !== undefined ? `/redfish/v1/Systems/${systemId}` : '';
  return `${driver.scheme}://${hostPart}${path}`;
}
