/**
 * The `hosts` section of a site file: every host has its own lowercase name, every MAC address
 * (the boot NIC's and those of its nmstate interfaces) is well formed and belongs to one host, and
 * each BMC is reachable by metal3 (bmc.ts). Problems name the host by its index (`hosts[2].name`).
 */
import { hostBmc } from './bmc.js';
import { isHostResourceName } from './names.js';
import { isMacAddress } from './net.js';
import { SiteErrorCode, type SiteProblems } from './problems.js';
import type { SiteHostDocument } from './schema.js';
import type { SectionContext } from './sections.js';
import type { SiteHost } from './types.js';

const MAC_HINT = 'six hex pairs separated by colons, like 52:54:00:aa:bb:01';

/** A MAC address and the field that gives it. */
interface HostMac {
  mac: string;
  path: string;
}

/** The host's name is a lowercase RFC 1123 name that no earlier host has (`names`: name → index). */
function checkHostName(
  problems: SiteProblems,
  p: string,
  host: SiteHostDocument,
  i: number,
  names: Map<string, number>,
): void {
  if (host.name !== undefined && !isHostResourceName(host.name)) {
    problems.add(
      SiteErrorCode.Invalid,
      `${p}.name`,
      `${p}.name "${host.name}" is not a lowercase RFC 1123 name`,
      {
        hint: 'lowercase letters, digits, hyphens and dots (it names the BareMetalHost and the node)',
      },
    );
  }
  const seen = host.name === undefined ? undefined : names.get(host.name);
  if (seen !== undefined)
    problems.add(
      SiteErrorCode.Duplicate,
      `${p}.name`,
      `${p}.name "${host.name}" is also the name of hosts[${seen}]`,
      {
        hint: 'give every host its own name',
      },
    );
  else if (host.name !== undefined) names.set(host.name, i);
}

/** The host's well-formed MAC addresses (lowercase, each once), boot NIC first; bad ones recorded. */
function hostMacs(problems: SiteProblems, p: string, host: SiteHostDocument): HostMac[] {
  const macs: HostMac[] = [];
  if (host.bootMACAddress === undefined) {
    // reported by the decoder
  } else if (!isMacAddress(host.bootMACAddress)) {
    problems.add(
      SiteErrorCode.Invalid,
      `${p}.bootMACAddress`,
      `${p}.bootMACAddress "${host.bootMACAddress}" is not a MAC address`,
      { hint: MAC_HINT },
    );
  } else macs.push({ mac: host.bootMACAddress.toLowerCase(), path: `${p}.bootMACAddress` });
  // `interfaces` is absent only when the decoder reported it missing.
  host.network?.interfaces?.forEach((iface, j) => {
    const ip = `${p}.network.interfaces[${j}].macAddress`;
    if (iface.macAddress === undefined) return;
    if (!isMacAddress(iface.macAddress)) {
      problems.add(SiteErrorCode.Invalid, ip, `${ip} "${iface.macAddress}" is not a MAC address`, {
        hint: MAC_HINT,
      });
      return;
    }
    const mac = iface.macAddress.toLowerCase();
    if (host.network!.interfaces.some((o, k) => k < j && o.macAddress.toLowerCase() === mac))
      problems.add(SiteErrorCode.Duplicate, ip, `${ip} ${iface.macAddress} is listed twice for this host`);
    else if (!macs.some((x) => x.mac === mac)) macs.push({ mac, path: ip });
  });
  if (host.network?.interfaces?.length === 0)
    problems.add(SiteErrorCode.Invalid, `${p}.network.interfaces`, `${p}.network.interfaces is empty`, {
      hint: 'name each interface of the nmstate config with its MAC address',
    });
  return macs;
}

/** No MAC of host `i` belongs to another host (`seen`: MAC → first host and field that gave it). */
function checkMacsUnique(
  problems: SiteProblems,
  i: number,
  macs: HostMac[],
  seen: Map<string, { host: number; path: string }>,
): void {
  for (const { mac, path } of macs) {
    const other = seen.get(mac);
    if (other !== undefined && other.host !== i)
      problems.add(SiteErrorCode.Duplicate, path, `${path} ${mac} is also used by ${other.path}`, {
        hint: 'each MAC belongs to one NIC of one host; check for a copy-paste slip',
      });
    else if (other === undefined) seen.set(mac, { host: i, path });
  }
}

/** The `hosts` section: each host checked, its BMC resolved and its credentials file made absolute. */
export function hostsSection(hosts: SiteHostDocument[], ctx: SectionContext): SiteHost[] {
  const { problems } = ctx;
  const names = new Map<string, number>();
  const macs = new Map<string, { host: number; path: string }>();
  return hosts.map((host, i) => {
    const p = `hosts[${i}]`;
    checkHostName(problems, p, host, i, names);
    checkMacsUnique(problems, i, hostMacs(problems, p, host), macs);
    return {
      name: host.name,
      role: host.role,
      bootMACAddress: host.bootMACAddress,
      bmc: hostBmc(problems, p, host, ctx.abs),
      ...(host.network ? { network: host.network } : {}),
      ...(host.rootDeviceHints ? { rootDeviceHints: host.rootDeviceHints } : {}),
    };
  });
}
