/**
 * One validator per section of a decoded site file (the header, cluster, network, mirror, hub):
 * each checks what the schema alone cannot (names, references, stacks and CIDRs, settings that
 * exclude or need each other), records every problem, and returns the section with its defaults
 * applied and its paths made absolute. The hosts are checked in hosts.ts.
 */
import { hostNameProblem, parseHostPort, scopeProblem } from '../../certs/index.js';
import { clusterNameProblem, DNS1123_LABEL, namespaceProblem, releaseProblem } from './names.js';
import { addressProblem, parseCidr, unbracket } from './net.js';
import { namedHeader } from '../../config/decode.js';
import { SiteErrorCode, type SiteProblems } from './problems.js';
import type { SiteDocument } from './schema.js';
import {
  SITE_API_VERSION,
  SITE_KIND,
  STACK_DEFAULTS,
  type NetworkStack,
  type SiteCluster,
  type SiteHub,
  type SiteMirror,
  type SiteNetwork,
} from './types.js';

/** What a section validator needs: where problems and warnings go, and how paths resolve. */
export interface SectionContext {
  problems: SiteProblems;
  warnings: string[];
  /** A path as written, made absolute against the site file's directory. */
  abs: (path: string) => string;
}

/** `apiVersion` and `kind` name a Site. */
export function checkHeader(doc: SiteDocument, problems: SiteProblems): void {
  const hint = `start the file with apiVersion: ${SITE_API_VERSION} and kind: ${SITE_KIND}`;
  if (doc.apiVersion !== SITE_API_VERSION)
    problems.add(
      SiteErrorCode.Kind,
      'apiVersion',
      doc.apiVersion === undefined
        ? 'apiVersion is missing'
        : `${namedHeader('apiVersion', doc.apiVersion)} is not ${SITE_API_VERSION}`,
      { hint },
    );
  if (doc.kind !== SITE_KIND)
    problems.add(
      SiteErrorCode.Kind,
      'kind',
      doc.kind === undefined ? 'kind is missing' : `${namedHeader('kind', doc.kind)} is not ${SITE_KIND}`,
      { hint },
    );
}

// ---- cluster --------------------------------------------------------------------------------

/** The cluster's names, base domain, release and infra ID. */
function checkClusterNames(c: SiteDocument['cluster'], problems: SiteProblems): void {
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
}

/** `publishing: nodePort` needs the API server address; the address means nothing without it. */
function checkServices(svc: SiteDocument['cluster']['services'], ctx: SectionContext): void {
  const { problems } = ctx;
  if (svc.publishing !== 'nodePort') {
    if (svc.apiServerAddress !== undefined)
      ctx.warnings.push('cluster.services.apiServerAddress is only used with publishing: nodePort; ignored');
    return;
  }
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
    return;
  }
  const why = addressProblem(svc.apiServerAddress);
  if (why)
    problems.add(
      SiteErrorCode.Invalid,
      'cluster.services.apiServerAddress',
      `cluster.services.apiServerAddress: ${why}`,
    );
}

/** The `cluster` section: checked, with the infra ID defaulted and the files made absolute. */
export function clusterSection(c: SiteDocument['cluster'], ctx: SectionContext): SiteCluster {
  checkClusterNames(c, ctx.problems);
  checkServices(c.services, ctx);
  const svc = c.services;
  return {
    name: c.name,
    namespace: c.namespace,
    baseDomain: c.baseDomain,
    // Absent only when the decoder reported it missing (the Site is then thrown away).
    release: { image: c.release?.image },
    pullSecretFile: ctx.abs(c.pullSecretFile),
    sshKeyFile: ctx.abs(c.sshKeyFile),
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
  };
}

// ---- network --------------------------------------------------------------------------------

/**
 * Each CIDR parses and is of the stack's family. With `exactFamilies` (cluster and service
 * networks), a dual stack has one IPv4 then one IPv6 network, and a single stack at least one.
 */
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

/** The `network` section: CIDRs checked against the stack, the stack's defaults filled in. */
export function networkSection(n: SiteDocument['network'], ctx: SectionContext): SiteNetwork {
  const { problems } = ctx;
  const defaults = STACK_DEFAULTS[n.stack ?? 'ipv4'];
  if (n.clusterNetwork && n.stack)
    checkCidrs(problems, 'network.clusterNetwork', n.clusterNetwork, n.stack, { exactFamilies: true });
  if (n.serviceNetwork && n.stack)
    checkCidrs(problems, 'network.serviceNetwork', n.serviceNetwork, n.stack, { exactFamilies: true });
  if (n.stack)
    checkCidrs(problems, 'network.machineNetwork', n.machineNetwork, n.stack, { exactFamilies: false });
  return {
    stack: n.stack,
    networkType: n.networkType,
    clusterNetwork: n.clusterNetwork ?? defaults.clusterNetwork,
    serviceNetwork: n.serviceNetwork ?? defaults.serviceNetwork,
    machineNetwork: n.machineNetwork,
  };
}

// ---- mirror ---------------------------------------------------------------------------------

/** `mirror.registry` is `host[:port]` with a DNS name (it keys the registry-config ConfigMap). */
function checkRegistry(registry: string | undefined, problems: SiteProblems): void {
  const reg = registry === undefined ? { host: '', ipv6: false } : parseHostPort(registry);
  if ('error' in reg) {
    problems.add(SiteErrorCode.Invalid, 'mirror.registry', `mirror.registry "${registry}": ${reg.error}`, {
      hint: 'write it as host[:port], e.g. registry.example.com:8443',
    });
  } else if (reg.ipv6) {
    problems.add(
      SiteErrorCode.Invalid,
      'mirror.registry',
      `mirror.registry ${registry}: an IPv6 literal cannot be a key of the registry-config ConfigMap`,
      {
        hint: 'give the registry a DNS name (in its certificate too) and mirror to that name',
      },
    );
  }
}

/** Exactly one of `clusterResources` and `imageContentSources`, and each mapping well formed. */
function checkMirrorSources(m: SiteDocument['mirror'], problems: SiteProblems): void {
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
}

/** The `mirror` section: checked, with its files and directory made absolute. */
export function mirrorSection(m: SiteDocument['mirror'], ctx: SectionContext): SiteMirror {
  const { problems } = ctx;
  checkRegistry(m.registry, problems);
  checkMirrorSources(m, problems);
  if (m.caFiles?.length === 0)
    problems.add(SiteErrorCode.Required, 'mirror.caFiles', 'mirror.caFiles is empty', {
      hint: 'give the CA PEM the registry certificate chains to',
    });
  return {
    registry: m.registry,
    caFiles: (m.caFiles ?? []).map(ctx.abs),
    ...(m.imageContentSources !== undefined ? { imageContentSources: m.imageContentSources } : {}),
    ...(m.clusterResources !== undefined ? { clusterResources: ctx.abs(m.clusterResources) } : {}),
  };
}

// ---- hub ------------------------------------------------------------------------------------

/** The `hub` section: exactly one of `osImages` and `osImagesFile`, versions as major.minor. */
export function hubSection(h: SiteDocument['hub'], ctx: SectionContext): SiteHub {
  const { problems } = ctx;
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
  return {
    ...(h.storageClass !== undefined ? { storageClass: h.storageClass } : {}),
    databaseStorage: h.databaseStorage,
    filesystemStorage: h.filesystemStorage,
    imageStorage: h.imageStorage,
    ...(h.osImages !== undefined ? { osImages: h.osImages } : {}),
    ...(h.osImagesFile !== undefined ? { osImagesFile: ctx.abs(h.osImagesFile) } : {}),
  };
}
