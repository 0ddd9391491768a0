/**
 * The `hosts[].bmc` section of a site file: either a complete metal3 BMC URL, checked the way
 * baremetal-operator parses it (pkg/hardwareutils/bmc), or a vendor and an address (with optional
 * port and Redfish system id) from which src/cluster/render/bmc.ts builds that URL.
 */
import { isIP } from 'node:net';
import { addressProblem, unbracket } from './net.js';
import { SiteErrorCode, type SiteProblems } from './problems.js';
import type { SiteBmc } from './types.js';
import type { SiteHostDocument } from './schema.js';

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
const BMC_SCHEMES: readonly string[] = [
  ...REDFISH_SCHEMES.flatMap((s) => [s, `${s}+http`, `${s}+https`]),
  'ilo4',
  'ilo4-virtualmedia',
  'ipmi',
  'libvirt',
];

/**
 * How to bracket the IPv6 literal of an unbracketed `host[:port]`. When its last group reads as a
 * port (`fd00::1:8000`), the port goes after the brackets: `[fd00::1]:8000`; when the whole is also
 * an address, both readings are offered.
 */
function bracketHint(scheme: string, hostPort: string): string {
  const colon = hostPort.lastIndexOf(':');
  const addr = hostPort.slice(0, colon);
  const port = hostPort.slice(colon + 1);
  const whole = `${scheme}://[${hostPort}]/…`;
  if (!/^\d{1,5}$/.test(port) || Number(port) > 65535 || isIP(addr) !== 6)
    return `write it as ${whole} (with a port: [addr]:port)`;
  const withPort = `${scheme}://[${addr}]:${port}/…`;
  return isIP(hostPort) === 6
    ? `write it as ${withPort} if ${port} is the port, or ${whole} if it is part of the address`
    : `write it as ${withPort}`;
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
  const [, scheme, authority] = m;
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
      hint: bracketHint(scheme, hostPort),
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

/** A `bmc.url` is the whole address: vendor, address, port and systemId cannot come with it. */
function checkBmcUrl(problems: SiteProblems, p: string, b: SiteHostDocument['bmc'], url: string): void {
  const why = bmcUrlProblem(url);
  if (why)
    problems.add(SiteErrorCode.Invalid, `${p}.bmc.url`, `${p}.bmc.url: ${why.message}`, {
      hint: why.hint,
    });
  for (const k of ['address', 'port', 'systemId'] as const) {
    if (b[k] !== undefined)
      problems.add(
        SiteErrorCode.Conflict,
        `${p}.bmc.${k}`,
        `${p}.bmc.${k} cannot be given with ${p}.bmc.url`,
        {
          hint: 'give the whole url, or vendor and address, not both',
          part: 'key',
        },
      );
  }
}

/** Without a url, the vendor and the address are required (unless the decoder already said so). */
function checkBmcParts(problems: SiteProblems, p: string, host: SiteHostDocument): void {
  const b = host.bmc ?? { disableCertificateVerification: false };
  const given = (k: string) => problems.positions.has(`${p}.bmc.${k}`);
  if (b.vendor === undefined && !given('vendor') && host.bmc !== undefined)
    problems.add(SiteErrorCode.Required, `${p}.bmc`, `${p}.bmc.vendor is required (or give bmc.url)`, {
      hint: 'redfish, idrac, ilo5, ilo4 or ipmi',
      part: 'key',
    });
  if (b.address === undefined) {
    if (!given('address') && host.bmc !== undefined)
      problems.add(SiteErrorCode.Required, `${p}.bmc`, `${p}.bmc.address is required (or give bmc.url)`, {
        part: 'key',
      });
  } else {
    const why = addressProblem(b.address);
    if (why)
      problems.add(SiteErrorCode.Invalid, `${p}.bmc.address`, `${p}.bmc.address: ${why}`, {
        hint: 'a host name, an IPv4 address or an IPv6 address (without a port: use bmc.port)',
      });
  }
  if (b.systemId !== undefined && /[\s?#]/.test(b.systemId))
    problems.add(
      SiteErrorCode.Invalid,
      `${p}.bmc.systemId`,
      `${p}.bmc.systemId "${b.systemId}" cannot hold spaces, "?" or "#"`,
    );
}

/**
 * Check the `bmc` of the host at `p` (`hosts[2]`) and return it with the address unbracketed and
 * the credentials file made absolute by `abs`.
 */
export function hostBmc(
  problems: SiteProblems,
  p: string,
  host: SiteHostDocument,
  abs: (path: string) => string,
): SiteBmc {
  // A missing bmc was reported by the decoder; the host is still checked for the rest.
  const b = host.bmc ?? { disableCertificateVerification: false };
  if (b.url !== undefined) checkBmcUrl(problems, p, b, b.url);
  else checkBmcParts(problems, p, host);
  return {
    ...(b.vendor !== undefined ? { vendor: b.vendor } : {}),
    ...(b.address !== undefined ? { address: unbracket(b.address) } : {}),
    ...(b.port !== undefined ? { port: b.port } : {}),
    ...(b.systemId !== undefined ? { systemId: b.systemId } : {}),
    ...(b.url !== undefined ? { url: b.url } : {}),
    credentialsFile: abs(b.credentialsFile),
    disableCertificateVerification: b.disableCertificateVerification,
  };
}
