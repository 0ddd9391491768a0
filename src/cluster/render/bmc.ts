/**
 * The metal3 BareMetalHost `spec.bmc.address` of a host: a driver scheme, the BMC host (IPv6 in
 * brackets), an optional port, and the Redfish system path. Vendors map to the virtual-media
 * drivers, which boot the discovery ISO without a provisioning network (plain `redfish://` and
 * `ipmi://` need one). Schemes and defaults follow baremetal-operator's pkg/hardwareutils/bmc.
 * A `url` from the site is used as written: the site loader checked it (src/cluster/site/bmc.ts).
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
const BMC_DRIVERS: Record<BmcVendor, VendorDriver> = {
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

/** `host` with brackets when it is an IPv6 literal (given with or without them). */
function bracketHost(address: string): string {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  return isIP(bare) === 6 ? `[${bare}]` : bare;
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
