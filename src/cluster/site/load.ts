/**
 * Load a site file: parse (with positions), decode against the schema, check what needs several
 * fields (names, references, stacks and CIDRs, duplicate hosts and MACs, BMC addresses, files),
 * apply defaults, and make paths absolute (relative to the file's directory). Every problem is
 * collected and thrown as one usage error (exit 2) naming `file:line:column` and the field.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseHostPort, scopeProblem } from '../../certs/index.js';
import { hostNameProblem } from '../../certs/index.js';
import { loadYamlWithPositions } from '../../config/positions.js';
import { parseReference } from '../../mirror/index.js';
import { unreadableReason, usageError } from '../../util/errors.js';
import { bmcUrlProblem } from '../render/bmc.js';
import { addressProblem, isMacAddress, parseCidr, unbracket } from './net.js';
import { SiteErrorCode, SiteProblems } from './problems.js';
import { SITE_DECODE_CODES, siteDocument, type SiteDocument } from './schema.js';
import {
  SITE_API_VERSION,
  SITE_KIND,
  STACK_DEFAULTS,
  type NetworkStack,
  type Site,
  type SiteHost,
  type SiteOverrides,
} from './types.js';

export interface LoadSiteOptions {
  /** Check that every file and directory the site names exists (default true). */
  checkFiles?: boolean;
}

const DNS1123_LABEL = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/** Why `name` is not a HostedCluster name, or undefined. */
export function clusterNameProblem(name: string): string | undefined {
  if (!DNS1123_LABEL.test(name) || name.length > 63)
    return `"${name}" is not an RFC 1123 label (lowercase letters, digits and inner hyphens, at most 63 characters)`;
  if (name === 'clusters') return '"clusters" cannot be a hosted cluster name (it is the default namespace)';
  return undefined;
}

/** Why `ns` is not a namespace name, or undefined. */
export function namespaceProblem(ns: string): string | undefined {
  return DNS1123_LABEL.test(ns) && ns.length <= 63
    ? undefined
    : `"${ns}" is not a namespace name (lowercase letters, digits and inner hyphens, at most 63 characters)`;
}

/** Why `ref` is not a release reference by tag or digest, or undefined. */
export function releaseProblem(ref: string): string | undefined {
  try {
    parseReference(ref);
  } catch (e) {
    return (e as Error).message;
  }
  const last = ref.slice(ref.lastIndexOf('/') + 1);
  if (!ref.includes('@') && !last.includes(':')) return `"${ref}" has neither a tag nor a digest`;
  if (!/[.:[]|^localhost$/.test(ref.split('/')[0]!))
    return `"${ref}" does not name a registry (write the mirror's host first)`;
  return undefined;
}

function checkCidrs(
  problems: SiteProblems,
  path: string,
  cidrs: string[],
  stack: NetworkStack,
  opts: { exactFamilies: boolean },
): void {
  const families: number[] = [];
  cidrs.forEach((c, i) => {
    const p = `${path}[${i}]`;
    const parsed = parseCidr(c);
    if ('error' in parsed) {
      problems.add(SiteErrorCode.Invalid, p, `${p} "${c}" is not a CIDR: ${parsed.error}`);
      return;
    }
    families.push(parsed.family);
    if (stack === 'ipv4' && parsed.family !== 4)
      problems.add(SiteErrorCode.Invalid, p, `${p} ${c} is IPv6, but network.stack is ipv4`, {
        hint: 'give IPv4 networks, or set network.stack to ipv6 or dual',
      });
    if (stack === 'ipv6' && parsed.family !== 6)
      problems.add(SiteErrorCode.Invalid, p, `${p} ${c} is IPv4, but network.stack is ipv6`, {
        hint: 'give IPv6 networks, or set network.stack to ipv4 or dual',
      });
  });
  if (!opts.exactFamilies || families.length !== cidrs.length) return;
  if (stack === 'dual') {
    if (families.filter((f) => f === 4).length !== 1 || families.filter((f) => f === 6).length !== 1) {
      problems.add(
        SiteErrorCode.Invalid,
        path,
        `${path} must hold one IPv4 and one IPv6 network for a dual stack`,
        {
          hint: 'list the IPv4 network first, then the IPv6 one (or leave it out for the defaults)',
        },
      );
    } else if (families[0] !== 4) {
      problems.add(SiteErrorCode.Invalid, path, `${path} lists the IPv6 network first`, {
        hint: 'put the IPv4 network first: it is the primary family, as hcp --default-dual writes it',
      });
    }
  } else if (cidrs.length === 0) {
    problems.add(SiteErrorCode.Invalid, path, `${path} is empty`, {
      hint: 'give a network, or leave the field out for the default',
    });
  }
}

async function checkPath(
  problems: SiteProblems,
  field: string,
  path: string,
  kind: 'file' | 'directory',
): Promise<void> {
  try {
    const st = await stat(path);
    if (kind === 'file' && !st.isFile())
      problems.add(SiteErrorCode.File, field, `${field} names ${path}, which is not a file`);
    if (kind === 'directory' && !st.isDirectory())
      problems.add(SiteErrorCode.File, field, `${field} names ${path}, which is not a directory`);
  } catch (e) {
    problems.add(SiteErrorCode.File, field, `${field} names ${path}, but ${unreadableReason(e)}`, {
      hint: 'paths are relative to the site file’s directory',
    });
  }
}

/** Checks across fields, on a decoded document; records problems and returns the Site. */
function build(
  doc: SiteDocument,
  problems: SiteProblems,
  file: string,
  dir: string,
  warnings: string[],
): Site {
  const abs = (p: string) => (p === undefined ? '' : isAbsolute(p) ? p : resolve(dir, p));
  const c = doc.cluster;

  if (doc.apiVersion !== SITE_API_VERSION)
    problems.add(
      SiteErrorCode.Kind,
      'apiVersion',
      `apiVersion is ${JSON.stringify(doc.apiVersion)}, not ${SITE_API_VERSION}`,
      {
        hint: `start the file with apiVersion: ${SITE_API_VERSION} and kind: ${SITE_KIND}`,
      },
    );
  if (doc.kind !== SITE_KIND)
    problems.add(SiteErrorCode.Kind, 'kind', `kind is ${JSON.stringify(doc.kind)}, not ${SITE_KIND}`, {
      hint: `start the file with apiVersion: ${SITE_API_VERSION} and kind: ${SITE_KIND}`,
    });

  // A required field that is missing was reported by the decoder: its checks are skipped here.
  const nameWhy = c.name === undefined ? 'missing' : clusterNameProblem(c.name);
  if (nameWhy && c.name !== undefined)
    problems.add(SiteErrorCode.Invalid, 'cluster.name', `cluster.name: ${nameWhy}`, {
      hint: 'pick another name, e.g. hosted',
    });
  const nsWhy = namespaceProblem(c.namespace);
  if (nsWhy) problems.add(SiteErrorCode.Invalid, 'cluster.namespace', `cluster.namespace: ${nsWhy}`);
  if (!nameWhy && !nsWhy && `${c.namespace}-${c.name}`.length > 63)
    problems.add(
      SiteErrorCode.Invalid,
      'cluster.name',
      `cluster.name: the control plane namespace ${c.namespace}-${c.name} is longer than 63 characters`,
      { hint: 'shorten the name or the namespace' },
    );
  const domainWhy = c.baseDomain === undefined ? undefined : hostNameProblem(c.baseDomain);
  if (domainWhy)
    problems.add(SiteErrorCode.Invalid, 'cluster.baseDomain', `cluster.baseDomain: ${domainWhy}`);
  const releaseWhy = c.release?.image === undefined ? undefined : releaseProblem(c.release.image);
  if (releaseWhy)
    problems.add(SiteErrorCode.Invalid, 'cluster.release.image', `cluster.release.image: ${releaseWhy}`, {
      hint: 'give the release in the mirror by tag (registry:8443/openshift/release-images:4.17.3-x86_64) or digest (…@sha256:<64 hex>)',
    });
  if (c.infraID !== undefined && !DNS1123_LABEL.test(c.infraID))
    problems.add(
      SiteErrorCode.Invalid,
      'cluster.infraID',
      `cluster.infraID "${c.infraID}" is not an RFC 1123 label`,
    );

  const svc = c.services;
  if (svc.publishing === 'nodePort') {
    if (svc.apiServerAddress === undefined) {
      if (!problems.positions.has('cluster.services.apiServerAddress'))
        problems.add(
          SiteErrorCode.Required,
          'cluster.services',
          'cluster.services.apiServerAddress is required with publishing: nodePort',
          {
            hint: 'give the address (IPv4, IPv6 or name) of a hub node the workers reach, or use publishing: loadBalancer',
            part: 'key',
          },
        );
    } else {
      const why = addressProblem(svc.apiServerAddress);
      if (why)
        problems.add(
          SiteErrorCode.Invalid,
          'cluster.services.apiServerAddress',
          `cluster.services.apiServerAddress: ${why}`,
        );
    }
  } else if (svc.apiServerAddress !== undefined) {
    warnings.push('cluster.services.apiServerAddress is only used with publishing: nodePort; ignored');
  }

  // Network.
  const n = doc.network;
  const defaults = STACK_DEFAULTS[n.stack ?? 'ipv4'];
  const clusterNetwork = n.clusterNetwork ?? defaults.clusterNetwork;
  const serviceNetwork = n.serviceNetwork ?? defaults.serviceNetwork;
  if (n.clusterNetwork && n.stack)
    checkCidrs(problems, 'network.clusterNetwork', n.clusterNetwork, n.stack, { exactFamilies: true });
  if (n.serviceNetwork && n.stack)
    checkCidrs(problems, 'network.serviceNetwork', n.serviceNetwork, n.stack, { exactFamilies: true });
  if (n.stack)
    checkCidrs(problems, 'network.machineNetwork', n.machineNetwork, n.stack, { exactFamilies: false });

  // Mirror.
  const m = doc.mirror;
  const reg = m.registry === undefined ? { host: '', ipv6: false } : parseHostPort(m.registry);
  if ('error' in reg) {
    problems.add(SiteErrorCode.Invalid, 'mirror.registry', `mirror.registry "${m.registry}": ${reg.error}`, {
      hint: 'write it as host[:port], e.g. registry.example.com:8443',
    });
  } else if (reg.ipv6) {
    problems.add(
      SiteErrorCode.Invalid,
      'mirror.registry',
      `mirror.registry ${m.registry}: an IPv6 literal cannot be a key of the registry-config ConfigMap`,
      {
        hint: 'give the registry a DNS name (in its certificate too) and mirror to that name',
      },
    );
  }
  if (m.imageContentSources !== undefined && m.clusterResources !== undefined) {
    problems.add(
      SiteErrorCode.Conflict,
      'mirror.imageContentSources',
      'mirror.imageContentSources and mirror.clusterResources cannot both be given',
      {
        hint: 'give clusterResources (the directory airgap mirror wrote), or the list, not both',
        part: 'key',
      },
    );
  } else if (m.imageContentSources === undefined && m.clusterResources === undefined) {
    problems.add(
      SiteErrorCode.Required,
      'mirror',
      'mirror.clusterResources or mirror.imageContentSources is required',
      {
        hint: 'give clusterResources: <workspace>/cluster-resources (from airgap mirror)',
        part: 'key',
      },
    );
  }
  m.imageContentSources?.forEach((ics, i) => {
    const p = `mirror.imageContentSources[${i}]`;
    const why = ics.source === undefined ? undefined : scopeProblem(ics.source);
    if (why) problems.add(SiteErrorCode.Invalid, `${p}.source`, `${p}.source "${ics.source}": ${why}`);
    if (ics.mirrors?.length === 0)
      problems.add(SiteErrorCode.Invalid, `${p}.mirrors`, `${p}.mirrors is empty`);
    ics.mirrors?.forEach((mm, j) => {
      const w = scopeProblem(mm);
      if (w) problems.add(SiteErrorCode.Invalid, `${p}.mirrors[${j}]`, `${p}.mirrors[${j}] "${mm}": ${w}`);
    });
  });
  if (m.caFiles?.length === 0)
    problems.add(SiteErrorCode.Required, 'mirror.caFiles', 'mirror.caFiles is empty', {
      hint: 'give the CA PEM the registry certificate chains to',
    });

  // Hub.
  const h = doc.hub;
  if (h.osImages !== undefined && h.osImagesFile !== undefined) {
    problems.add(
      SiteErrorCode.Conflict,
      'hub.osImages',
      'hub.osImages and hub.osImagesFile cannot both be given',
      { part: 'key' },
    );
  } else if (h.osImages === undefined && h.osImagesFile === undefined) {
    problems.add(
      SiteErrorCode.Required,
      'hub',
      'hub.osImages or hub.osImagesFile is required (AgentServiceConfig needs an RHCOS live ISO per OpenShift version)',
      {
        hint: 'give osImagesFile: the file airgap serve-images --asc-out wrote',
        part: 'key',
      },
    );
  }
  h.osImages?.forEach((o, i) => {
    if (!/^\d+\.\d+$/.test(o.openshiftVersion))
      problems.add(
        SiteErrorCode.Invalid,
        `hub.osImages[${i}].openshiftVersion`,
        `hub.osImages[${i}].openshiftVersion "${o.openshiftVersion}" must be major.minor, like "4.17"`,
      );
  });

  // Hosts.
  const names = new Map<string, number>();
  const macs = new Map<string, { host: number; path: string }>();
  const hosts: SiteHost[] = doc.hosts.map((host, i) => {
    const p = `hosts[${i}]`;
    if (host.name !== undefined && (!DNS1123_SUBDOMAIN.test(host.name) || host.name.length > 240)) {
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
        { hint: 'give every host its own name' },
      );
    else if (host.name !== undefined) names.set(host.name, i);

    const hostMacs: { mac: string; path: string }[] = [];
    if (host.bootMACAddress === undefined) {
      // reported by the decoder
    } else if (!isMacAddress(host.bootMACAddress)) {
      problems.add(
        SiteErrorCode.Invalid,
        `${p}.bootMACAddress`,
        `${p}.bootMACAddress "${host.bootMACAddress}" is not a MAC address`,
        {
          hint: 'six hex pairs separated by colons, like 52:54:00:aa:bb:01',
        },
      );
    } else hostMacs.push({ mac: host.bootMACAddress.toLowerCase(), path: `${p}.bootMACAddress` });
    host.network?.interfaces.forEach((iface, j) => {
      const ip = `${p}.network.interfaces[${j}].macAddress`;
      if (iface.macAddress === undefined) return;
      if (!isMacAddress(iface.macAddress)) {
        problems.add(SiteErrorCode.Invalid, ip, `${ip} "${iface.macAddress}" is not a MAC address`, {
          hint: 'six hex pairs separated by colons, like 52:54:00:aa:bb:01',
        });
        return;
      }
      const mac = iface.macAddress.toLowerCase();
      if (host.network!.interfaces.some((o, k) => k < j && o.macAddress.toLowerCase() === mac))
        problems.add(SiteErrorCode.Duplicate, ip, `${ip} ${iface.macAddress} is listed twice for this host`);
      else if (!hostMacs.some((x) => x.mac === mac)) hostMacs.push({ mac, path: ip });
    });
    if (host.network && host.network.interfaces.length === 0)
      problems.add(SiteErrorCode.Invalid, `${p}.network.interfaces`, `${p}.network.interfaces is empty`, {
        hint: 'name each interface of the nmstate config with its MAC address',
      });
    for (const { mac, path } of hostMacs) {
      const other = macs.get(mac);
      if (other !== undefined && other.host !== i)
        problems.add(SiteErrorCode.Duplicate, path, `${path} ${mac} is also used by ${other.path}`, {
          hint: 'each MAC belongs to one NIC of one host; check for a copy-paste slip',
        });
      else if (other === undefined) macs.set(mac, { host: i, path });
    }

    const b = host.bmc ?? { disableCertificateVerification: false };
    if (b.url !== undefined) {
      const why = bmcUrlProblem(b.url);
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
    } else {
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
    return {
      name: host.name,
      role: host.role,
      bootMACAddress: host.bootMACAddress,
      bmc: {
        ...(b.vendor !== undefined ? { vendor: b.vendor } : {}),
        ...(b.address !== undefined ? { address: unbracket(b.address) } : {}),
        ...(b.port !== undefined ? { port: b.port } : {}),
        ...(b.systemId !== undefined ? { systemId: b.systemId } : {}),
        ...(b.url !== undefined ? { url: b.url } : {}),
        credentialsFile: abs(b.credentialsFile),
        disableCertificateVerification: b.disableCertificateVerification,
      },
      ...(host.network ? { network: host.network } : {}),
      ...(host.rootDeviceHints ? { rootDeviceHints: host.rootDeviceHints } : {}),
    };
  });

  return {
    apiVersion: SITE_API_VERSION,
    kind: SITE_KIND,
    cluster: {
      name: c.name,
      namespace: c.namespace,
      baseDomain: c.baseDomain,
      release: { image: c.release.image },
      pullSecretFile: abs(c.pullSecretFile),
      sshKeyFile: abs(c.sshKeyFile),
      controlPlaneAvailability: c.controlPlaneAvailability,
      olmCatalogPlacement: c.olmCatalogPlacement,
      infraID: c.infraID ?? c.name,
      etcd: c.etcd,
      services: {
        publishing: svc.publishing,
        ...(svc.publishing === 'nodePort' && svc.apiServerAddress !== undefined
          ? { apiServerAddress: unbracket(svc.apiServerAddress) }
          : {}),
      },
      nodePool: c.nodePool,
      approveAgents: c.approveAgents,
    },
    network: {
      stack: n.stack,
      networkType: n.networkType,
      clusterNetwork,
      serviceNetwork,
      machineNetwork: n.machineNetwork,
    },
    mirror: {
      registry: m.registry,
      caFiles: (m.caFiles ?? []).map(abs),
      ...(m.imageContentSources !== undefined ? { imageContentSources: m.imageContentSources } : {}),
      ...(m.clusterResources !== undefined ? { clusterResources: abs(m.clusterResources) } : {}),
    },
    hub: {
      ...(h.storageClass !== undefined ? { storageClass: h.storageClass } : {}),
      databaseStorage: h.databaseStorage,
      filesystemStorage: h.filesystemStorage,
      imageStorage: h.imageStorage,
      ...(h.osImages !== undefined ? { osImages: h.osImages } : {}),
      ...(h.osImagesFile !== undefined ? { osImagesFile: abs(h.osImagesFile) } : {}),
    },
    hosts,
    source: { file, dir, positions: problems.positions },
    warnings,
  };
}

/** Parse and check a site file's text (`file` names it in messages; paths resolve against `dir`). */
export function parseSite(text: string, file: string, dir = dirname(resolve(file))): Site {
  let loaded: ReturnType<typeof loadYamlWithPositions>;
  try {
    loaded = loadYamlWithPositions(text);
  } catch (e) {
    const mark = (e as { mark?: { line: number; column: number } }).mark;
    const reason = (e as { reason?: string }).reason ?? (e as Error).message.split('\n')[0];
    throw usageError(SiteErrorCode.Yaml, `the site file is not valid YAML: ${reason}`, {
      where: mark ? `${file}:${mark.line + 1}:${mark.column + 1}` : file,
      hint: 'fix the YAML syntax (indentation, a missing ":" or quote)',
    });
  }
  const problems = new SiteProblems(file, loaded.positions);
  const doc = siteDocument(loaded.value, '', { problems, text, codes: SITE_DECODE_CODES });
  // A document that is not even a mapping, or lacks its sections, cannot be checked further.
  if (doc === undefined || !doc.cluster || !doc.network || !doc.mirror) {
    problems.throwIfAny();
    throw usageError(SiteErrorCode.Kind, 'the site file is empty', { where: file });
  }
  const warnings: string[] = [];
  const site = build(doc, problems, file, dir, warnings);
  problems.throwIfAny();
  return site;
}

/** The files and directories a site names, with the field that names each. */
export function siteFiles(site: Site): { field: string; path: string; kind: 'file' | 'directory' }[] {
  const out: { field: string; path: string; kind: 'file' | 'directory' }[] = [
    { field: 'cluster.pullSecretFile', path: site.cluster.pullSecretFile, kind: 'file' },
    { field: 'cluster.sshKeyFile', path: site.cluster.sshKeyFile, kind: 'file' },
    ...site.mirror.caFiles.map((path, i) => ({ field: `mirror.caFiles[${i}]`, path, kind: 'file' as const })),
  ];
  if (site.mirror.clusterResources)
    out.push({ field: 'mirror.clusterResources', path: site.mirror.clusterResources, kind: 'directory' });
  if (site.hub.osImagesFile)
    out.push({ field: 'hub.osImagesFile', path: site.hub.osImagesFile, kind: 'file' });
  site.hosts.forEach((h, i) =>
    out.push({ field: `hosts[${i}].bmc.credentialsFile`, path: h.bmc.credentialsFile, kind: 'file' }),
  );
  return out;
}

/**
 * Read, check and complete a site file. Throws one usage error (exit 2) listing every problem with
 * `file:line:column`, the field, and a hint; unless `checkFiles: false`, files it names must exist.
 */
export async function loadSite(path: string, options: LoadSiteOptions = {}): Promise<Site> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw usageError(SiteErrorCode.Read, `cannot read the site file ${path}: ${unreadableReason(e)}`, {
      hint: 'give the path of a Site YAML file (see docs/site-config.md)',
    });
  }
  const site = parseSite(text, path, dirname(resolve(path)));
  if (options.checkFiles !== false) {
    const problems = new SiteProblems(path, site.source.positions);
    // The CA file field is `mirror.caFiles` when written as one string.
    const caOne = !site.source.positions.has('mirror.caFiles[0]');
    for (const f of siteFiles(site)) {
      const field = caOne && f.field === 'mirror.caFiles[0]' ? 'mirror.caFiles' : f.field;
      await checkPath(problems, field, f.path, f.kind);
    }
    problems.throwIfAny();
  }
  return site;
}

/**
 * A copy of `site` with command-line values in place of the file's. Each is checked like the file's
 * field, and a bad one is a usage error naming the flag.
 */
export function applySiteOverrides(site: Site, overrides: SiteOverrides): Site {
  const bad = (flag: string, why: string) => usageError('FLAG_INVALID', `--${flag}: ${why}`);
  const out: Site = structuredClone({ ...site, source: undefined }) as unknown as Site;
  out.source = site.source;
  if (overrides.name !== undefined) {
    const why = clusterNameProblem(overrides.name);
    if (why) throw bad('name', why);
    if (out.cluster.infraID === site.cluster.name) out.cluster.infraID = overrides.name;
    out.cluster.name = overrides.name;
  }
  if (overrides.namespace !== undefined) {
    const why = namespaceProblem(overrides.namespace);
    if (why) throw bad('namespace', why);
    out.cluster.namespace = overrides.namespace;
  }
  if (`${out.cluster.namespace}-${out.cluster.name}`.length > 63)
    throw bad(
      overrides.name !== undefined ? 'name' : 'namespace',
      `the control plane namespace ${out.cluster.namespace}-${out.cluster.name} is longer than 63 characters`,
    );
  if (overrides.release !== undefined) {
    const why = releaseProblem(overrides.release);
    if (why) throw bad('release', why);
    out.cluster.release = { image: overrides.release };
  }
  if (overrides.baseDomain !== undefined) {
    const why = hostNameProblem(overrides.baseDomain);
    if (why) throw bad('base-domain', why);
    out.cluster.baseDomain = overrides.baseDomain;
  }
  if (overrides.apiServerAddress !== undefined) {
    const why = addressProblem(overrides.apiServerAddress);
    if (why) throw bad('api-server-address', why);
    out.cluster.services = {
      publishing: 'nodePort',
      apiServerAddress: unbracket(overrides.apiServerAddress),
    };
  }
  if (overrides.controlPlaneAvailability !== undefined)
    out.cluster.controlPlaneAvailability = overrides.controlPlaneAvailability;
  if (overrides.approveAgents !== undefined) out.cluster.approveAgents = overrides.approveAgents;
  return out;
}
