/**
 * A disconnected site on one machine, as far as `airgap install` needs one: an upstream registry
 * with a synthetic release (and a small catalog), a mirror registry (TLS, htpasswd) filled from it by
 * the real mirror engine (which also writes cluster-resources), and the site file with everything it
 * names: the mirror CA, a pull secret holding the mirror's credentials, an SSH public key, BMC
 * credentials, osImages (and, when asked, the release-signature ConfigMap). Pair it with the hub simulator (hub/index.ts) for an install end to end.
 */
import { generateKeyPairSync } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dump } from 'js-yaml';
import { RegistryClient } from '../src/mirror/registry/client.js';
import { runMirror } from '../src/mirror/run.js';
import { startRegistry, type TestRegistry } from './registry.js';
import { buildUpstream, type Upstream } from './upstream.js';

export type LabStack = 'ipv4' | 'ipv6' | 'dual';

export interface LabSiteOptions {
  dir: string;
  stack: LabStack;
  /**
   * Where the registries listen (default 127.0.0.1). `::` listens on IPv6 and IPv4: the site then
   * names the mirror `localhost:<port>`, as an IPv6 site names its mirror by DNS name (an IPv6
   * literal cannot be a key of the registry-config ConfigMap).
   */
  host?: string;
  /** Hosted cluster name (default `lab`). */
  name?: string;
  /** Bare-metal hosts (default 2). */
  hosts?: number;
  /** Release version (default 4.17.3). */
  version?: string;
  /** A later release mirrored too (the site still installs `version`): what an update goes to. */
  upgradeTo?: string;
  /** Skip the operator catalog (faster). */
  noCatalog?: boolean;
  /**
   * Add `signature-configmap.yaml` to the cluster-resources, as `airgap mirror` writes it when it
   * found release signatures (the lab's signature bytes are placeholders: nothing here verifies them).
   */
  signatureConfigMap?: boolean;
  /**
   * Mirror the update graph data too (`platform.graph: true`): the graph image, built on the
   * upstream's ubi9, lands at `<mirror>/openshift/graph-image:latest` (graph-image.ts).
   */
  graph?: boolean;
}

export interface LabSite {
  siteFile: string;
  dir: string;
  name: string;
  version: string;
  mirror: TestRegistry;
  /** How the site names the mirror: its host:port, or localhost:port for one listening on `::`. */
  mirrorName: string;
  upstream: TestRegistry;
  up: Upstream;
  /** `<mirror>/openshift/release-images:<version>-x86_64`. */
  releaseTag: string;
  /** The release image's digest (the same upstream and in the mirror). */
  releaseDigest: string;
  /** The cluster-resources directory `airgap mirror` wrote (absolute). */
  clusterResources: string;
  pullSecretFile: string;
  hostNames: string[];
  /** With `graph`: `<mirror>/openshift/graph-image:latest`. */
  graphImage?: string;
  /**
   * Run the same mirror again, after the upstream changed (its update service's graphs or
   * graph-data tarball): what is there already is skipped, the graph image is built anew.
   */
  mirrorAgain(): Promise<void>;
  stop(): Promise<void>;
}

/** An OpenSSH `ssh-ed25519 AAAA… comment` public key line, freshly generated. */
function sshPublicKey(comment = 'airgap-lab'): string {
  const { publicKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  // SSH wire format: each field is a uint32 length and the bytes.
  const field = (b: Buffer) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(b.length, 0);
    return Buffer.concat([len, b]);
  };
  const blob = Buffer.concat([field(Buffer.from('ssh-ed25519')), field(raw)]);
  return `ssh-ed25519 ${blob.toString('base64')} ${comment}`;
}

const STACK_ADDR: Record<LabStack, { bmc: string; api: string; machine: string[] }> = {
  ipv4: { bmc: '192.168.125.1', api: '192.168.125.10', machine: ['192.168.125.0/24'] },
  ipv6: { bmc: 'fd00:1101::1', api: 'fd00:1101::10', machine: ['fd00:1101::/64'] },
  dual: { bmc: '192.168.125.1', api: '192.168.125.10', machine: ['192.168.125.0/24', 'fd00:1101::/64'] },
};

/** A dual-stack static nmstate configuration for one NIC. */
function staticNetwork(mac: string): Record<string, unknown> {
  return {
    interfaces: [{ name: 'eno1', macAddress: mac }],
    config: {
      interfaces: [
        {
          name: 'eno1',
          type: 'ethernet',
          state: 'up',
          'mac-address': mac,
          ipv4: { enabled: true, dhcp: false, address: [{ ip: '192.168.125.31', 'prefix-length': 24 }] },
          ipv6: {
            enabled: true,
            dhcp: false,
            autoconf: false,
            address: [{ ip: 'fd00:1101::31', 'prefix-length': 64 }],
          },
        },
      ],
      'dns-resolver': { config: { server: ['192.168.125.1', 'fd00:1101::1'] } },
      routes: {
        config: [
          { destination: '0.0.0.0/0', 'next-hop-address': '192.168.125.1', 'next-hop-interface': 'eno1' },
          { destination: '::/0', 'next-hop-address': 'fd00:1101::1', 'next-hop-interface': 'eno1' },
        ],
      },
    },
  };
}

export interface LabSiteFilesOptions {
  dir: string;
  stack: LabStack;
  name: string;
  hosts: number;
  /** The mirror registry: host, CA file, and its pull-secret `auths` entries. */
  mirror: { host: string; caFile: string; auths: Record<string, unknown> };
  /** The release in the mirror, by tag. */
  releaseTag: string;
  releaseVersion: string;
  /** `airgap mirror`'s cluster-resources directory (relative to `dir`, or absolute). */
  clusterResources: string;
}

/**
 * The site file and what it names, in `dir`: a pull secret with the mirror's credentials (0600), an
 * SSH public key, BMC credentials per host (0600), and `site.yaml` (Redfish virtual-media BMCs on the
 * stack's lab addresses, inline osImages).
 */
export async function writeLabSiteFiles(
  o: LabSiteFilesOptions,
): Promise<{ siteFile: string; pullSecretFile: string; hostNames: string[] }> {
  await mkdir(join(o.dir, 'bmc'), { recursive: true });
  const pullSecretFile = join(o.dir, 'pull-secret.json');
  await writeFile(pullSecretFile, JSON.stringify({ auths: o.mirror.auths }), { mode: 0o600 });
  await writeFile(join(o.dir, 'id_ed25519.pub'), `${sshPublicKey()}\n`);
  const addr = STACK_ADDR[o.stack];
  const hostNames = Array.from({ length: o.hosts }, (_, i) => `${o.name}-worker-${i}`);
  for (const h of hostNames)
    await writeFile(
      join(o.dir, 'bmc', `${h}.yaml`),
      dump({ username: 'admin', password: `bmc-${h}-secret` }),
      { mode: 0o600 },
    );
  const minor = o.releaseVersion.split('.').slice(0, 2).join('.');
  const site = {
    apiVersion: 'airgap.openshift.io/v1alpha1',
    kind: 'Site',
    cluster: {
      name: o.name,
      baseDomain: 'lab.example.com',
      release: { image: o.releaseTag },
      pullSecretFile: 'pull-secret.json',
      sshKeyFile: 'id_ed25519.pub',
      controlPlaneAvailability: 'SingleReplica',
      services: { publishing: 'nodePort', apiServerAddress: addr.api },
    },
    network: { stack: o.stack, machineNetwork: addr.machine },
    mirror: { registry: o.mirror.host, caFiles: [o.mirror.caFile], clusterResources: o.clusterResources },
    hub: {
      osImages: [
        {
          openshiftVersion: minor,
          version: '9.6.20250101-0',
          url: `http://${o.stack === 'ipv6' ? '[fd00:1101::1]' : '192.168.125.1'}:8080/images/rhcos-9.6.20250101-0-live-iso.x86_64.iso`,
          cpuArchitecture: 'x86_64',
        },
      ],
    },
    hosts: hostNames.map((h, i) => ({
      name: h,
      bootMACAddress: `52:54:00:aa:01:${(i + 1).toString(16).padStart(2, '0')}`,
      bmc: {
        vendor: 'redfish-virtualmedia',
        address: addr.bmc,
        port: 8000,
        systemId: `system-${i}`,
        credentialsFile: `bmc/${h}.yaml`,
        disableCertificateVerification: true,
      },
      rootDeviceHints: { deviceName: '/dev/sda' },
      // The dual-stack site gives its first host static addresses (an NMStateConfig).
      ...(o.stack === 'dual' && i === 0 ? { network: staticNetwork('52:54:00:aa:01:01') } : {}),
    })),
  };
  const siteFile = join(o.dir, 'site.yaml');
  await writeFile(siteFile, dump(site, { lineWidth: -1 }));
  return { siteFile, pullSecretFile, hostNames };
}

/** Where the lab mirrors releases to, below the mirror registry (oc-mirror v2's naming). */
export const LAB_RELEASE_REPO = 'openshift/release-images';

/**
 * The release-signature ConfigMap as `airgap mirror` writes it: one `sha256-<hex>-<n>` key per
 * signature. The values are base64 of `signatures` (default: one placeholder, not a GPG signature).
 */
function labSignatureConfigMap(
  releaseDigest: string,
  signatures: Buffer[] = [Buffer.from(`airgap lab: not a signature of ${releaseDigest}`)],
): Record<string, unknown> {
  const hex = releaseDigest.replace(/^sha256:/, '');
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'mirrored-release-signatures',
      namespace: 'openshift-config-managed',
      labels: { 'release.openshift.io/verification-signatures': '' },
    },
    binaryData: Object.fromEntries(
      signatures.map((b, i) => [`sha256-${hex}-${i + 1}`, b.toString('base64')]),
    ),
  };
}

/**
 * Give the lab's mirrored release a Sigstore signature tag (`sha256-<hex>.sig` in the release
 * repository), as the release preflight of 4.21 and later looks for. Its content is the release
 * manifest itself, not a cosign signature: the preflight checks only that the tag is there.
 * Returns the tag.
 */
export async function pushReleaseSignatureTag(lab: LabSite): Promise<string> {
  const tag = `${lab.releaseDigest.replace(':', '-')}.sig`;
  const client = new RegistryClient(lab.mirror.host, {
    caFiles: [lab.mirror.caFile],
    certDirs: [],
    credentials: { authFile: lab.mirror.authFile },
  });
  try {
    const manifest = await client.getManifest(LAB_RELEASE_REPO, lab.releaseDigest);
    await client.putManifest(LAB_RELEASE_REPO, tag, manifest);
  } finally {
    await client.close();
  }
  return tag;
}

export async function buildLabSite(o: LabSiteOptions): Promise<LabSite> {
  const host = o.host ?? '127.0.0.1';
  const name = o.name ?? 'lab';
  const version = o.version ?? '4.17.3';
  // The upstream stands in for quay.io: always on 127.0.0.1 (IDMS sources cannot be IPv6 literals).
  const [upstream, mirror] = await Promise.all([startRegistry(), startRegistry({ host })]);
  try {
    await mkdir(o.dir, { recursive: true });
    const up = await buildUpstream({
      registry: upstream,
      dir: join(o.dir, 'upstream'),
      versions: o.upgradeTo ? [version, o.upgradeTo] : [version],
      risk: false,
      packages: 1,
      channelsPerPackage: 1,
      bundlesPerChannel: 1,
    });
    const mirrorName =
      host === '::' ? `localhost:${mirror.host.slice(mirror.host.lastIndexOf(':') + 1)}` : mirror.host;
    // The bastion's auth file: both registries.
    const a = JSON.parse(await readFile(upstream.authFile, 'utf8')) as { auths: Record<string, unknown> };
    const b = JSON.parse(await readFile(mirror.authFile, 'utf8')) as { auths: Record<string, unknown> };
    b.auths = { [mirrorName]: Object.values(b.auths)[0] };
    const authFile = join(o.dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths: { ...a.auths, ...b.auths } }), { mode: 0o600 });
    const isc = join(o.dir, 'imageset-config.yaml');
    await writeFile(
      isc,
      dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: {
          platform: {
            channels: [{ name: up.channel, minVersion: version, maxVersion: o.upgradeTo ?? version }],
            graph: !!o.graph,
          },
          ...(o.noCatalog
            ? {}
            : { operators: [{ catalog: up.catalogRef, packages: [{ name: 'lab-operator-000' }] }] }),
        },
      }),
    );
    const mirrorOnce = async () => {
      const report = await runMirror({
        config: isc,
        destination: `docker://${mirrorName}`,
        workspace: `file://${join(o.dir, 'mirror-workspace')}`,
        authFile,
        caFiles: [upstream.caFile, mirror.caFile],
        certDir: '/nonexistent',
        graphUrl: up.graph.url,
        ...(o.graph ? { graphBaseImage: up.ubiRef } : {}),
        signatureUrl: up.signatureStore.url,
      });
      if (report.summary && report.summary.failed > 0)
        throw new Error(`lab mirror: ${report.summary.failed} images failed`);
    };
    await mirrorOnce();

    const releaseTag = `${mirrorName}/${LAB_RELEASE_REPO}:${version}-x86_64`;
    const releaseDigest = up.releases.find((r) => r.version === version)!.digest;
    const clusterResources = join(o.dir, 'mirror-workspace', 'cluster-resources');
    if (o.signatureConfigMap)
      await writeFile(
        join(clusterResources, 'signature-configmap.yaml'),
        dump(labSignatureConfigMap(releaseDigest), { lineWidth: -1 }),
      );
    const { siteFile, pullSecretFile, hostNames } = await writeLabSiteFiles({
      dir: o.dir,
      stack: o.stack,
      name,
      hosts: o.hosts ?? 2,
      mirror: { host: mirrorName, caFile: mirror.caFile, auths: b.auths },
      releaseTag,
      releaseVersion: version,
      clusterResources: 'mirror-workspace/cluster-resources',
    });
    return {
      siteFile,
      dir: o.dir,
      name,
      version,
      mirror,
      mirrorName,
      upstream,
      up,
      releaseTag,
      releaseDigest,
      clusterResources,
      pullSecretFile,
      hostNames,
      ...(o.graph ? { graphImage: `${mirrorName}/openshift/graph-image:latest` } : {}),
      mirrorAgain: mirrorOnce,
      async stop() {
        await Promise.all([mirror.stop(), upstream.stop(), up.stop()]);
      },
    };
  } catch (e) {
    await Promise.all([mirror.stop(), upstream.stop()]);
    throw e;
  }
}
