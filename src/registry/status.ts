/**
 * `airgap registry status`: the bastion registry as it is now, every part read and none changed.
 *
 *   service       the unit's state (and, when it does not run, its last log lines) and the container
 *   addresses     every address the certificate names, resolved, each a real TLS handshake that
 *                 trusts only the registry's CA
 *   certificates  expiry of the leaf (the file and what is served) and of the CA
 *   storage       bytes under the data directory (symlinks not followed) and free on its filesystem
 *   images        tags by repository prefix (needs the password)
 *   deletes       storage.delete.enabled of config.yml
 *   hub           with a kubeconfig: whether the hub's trust ConfigMaps hold this CA
 *
 * A part that cannot be read is an error in its line (and the registry is then not healthy), never
 * read as "nothing there"; only ENOENT and 404 mean absent.
 */
import { X509Certificate } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { EXPIRY_WARNING_DAYS, buildTrustObjects, registryConfigKey } from '../certs/index.js';
import { readHubObject, type HubConnection } from '../cluster/index.js';
import { parseYaml } from '../config/yaml-load.js';
import { RegistryClient } from '../mirror/index.js';
import { AirgapError, messageOf } from '../util/errors.js';
import { isNotFound } from '../util/fs.js';
import { Limiter } from '../util/limit.js';
import { certifiedAddresses, leafCertificate, readPassword, trustedCas } from './files.js';
import { containerRunning } from './podman.js';
import {
  CHECK_REPO,
  daysLeft,
  pemBlocks,
  servedCertificate,
  splitAddress,
  type ServedCertificate,
} from './probe.js';
import { locateRegistry, type RegistrySetup } from './state.js';
import { measureStorage, type StorageStatus } from './status-storage.js';
import { systemdHere, unitLog, unitState, type UnitState } from './systemd.js';

export interface StatusOptions {
  dir: string;
  /** The unit and container (default: installed.json's, else `registry`). */
  name?: string;
  /** The registry password, for the image count (without it the count is skipped). */
  passwordFile?: string;
  hub?: HubConnection;
  /** The namespace of user-ca-bundle (the HostedCluster's; default `clusters`). */
  hostedClusterNamespace?: string;
  /** How long each TLS handshake may take (default 5 s). */
  probeTimeoutMs?: number;
  /** Repositories listed at once (default 4). */
  concurrency?: number;
  now?: Date;
}

export type Expiry = 'ok' | 'expiring' | 'expired';

export interface CertificateStatus {
  subject: string;
  notAfter: string;
  daysLeft: number;
  expiry: Expiry;
  fingerprint256: string;
  file?: string;
}

export interface ServiceStatus {
  unit: Omit<UnitState, 'mainPid'> | null;
  unitError?: string;
  container: boolean | null;
  containerError?: string;
  /** The unit's last log lines, when it or its container does not run. */
  log: string[];
}

export type AddressState = 'answers' | 'not-trusted' | 'refused' | 'no-answer' | 'unresolved' | 'error';

export interface AddressStatus {
  /** host:port, as clients write it. */
  address: string;
  /** The IP connected to. */
  ip?: string;
  state: AddressState;
  why?: string;
  /** The served certificate's SHA-256 fingerprint. */
  fingerprint256?: string;
}

export interface PrefixCount {
  prefix: string;
  repositories: number;
  tags: number;
}

export interface ImageCount {
  /** counted: every listing succeeded; incomplete: some failed (the numbers are a lower bound); skipped: no password. */
  state: 'counted' | 'incomplete' | 'skipped';
  why?: string;
  repositories: number;
  tags: number;
  prefixes: PrefixCount[];
  errors: string[];
}

export type TrustState = 'holds' | 'other-ca' | 'no-key' | 'absent' | 'error';

export interface ConfigMapTrust {
  namespace: string;
  name: string;
  key: string;
  state: TrustState;
  why?: string;
}

export interface RegistryStatus {
  registry: string;
  dir: string;
  name: string;
  /** Whether installed.json is there (airgap registry install ran). */
  installed: boolean;
  healthy: boolean;
  problems: string[];
  warnings: string[];
  service: ServiceStatus;
  addresses: AddressStatus[];
  certificates: {
    leaf: CertificateStatus;
    served: (CertificateStatus & { address: string; sameAsFile: boolean }) | null;
    cas: CertificateStatus[];
  };
  storage: StorageStatus;
  images: ImageCount;
  deletes: { enabled: boolean | null; error?: string };
  hub: { configMaps: ConfigMapTrust[] } | null;
}

const DAY_MS = 86_400_000;

/** ok, expiring (under {@link EXPIRY_WARNING_DAYS} days) or expired. */
export function expiryOf(notAfter: Date, now = new Date()): Expiry {
  const left = notAfter.getTime() - now.getTime();
  if (left <= 0) return 'expired';
  return left < EXPIRY_WARNING_DAYS * DAY_MS ? 'expiring' : 'ok';
}

function certificateStatus(x: X509Certificate, now: Date, file?: string): CertificateStatus {
  const notAfter = new Date(x.validTo);
  return {
    subject: x.subject.replace(/\n/g, ', '),
    notAfter: notAfter.toISOString(),
    daysLeft: daysLeft(notAfter, now),
    expiry: expiryOf(notAfter, now),
    fingerprint256: x.fingerprint256,
    ...(file ? { file } : {}),
  };
}

/** Tags per repository, grouped by the first path component (`openshift/release` → `openshift`), largest first. */
export function groupByPrefix(counts: readonly { repository: string; tags: number }[]): PrefixCount[] {
  const by = new Map<string, PrefixCount>();
  for (const { repository, tags } of counts) {
    const prefix = repository.split('/')[0]!;
    const g = by.get(prefix) ?? { prefix, repositories: 0, tags: 0 };
    g.repositories++;
    g.tags += tags;
    by.set(prefix, g);
  }
  return [...by.values()].sort((a, b) => b.tags - a.tags || a.prefix.localeCompare(b.prefix));
}

/** A usage error (a kubeconfig that cannot be read) stops status; any other error is its line's. */
function lineError(e: unknown): string {
  if (e instanceof AirgapError && e.exitCode === 2) throw e;
  return oneLine(e);
}

/** An error's message on one line (without the hint an AirgapError adds on the next). */
function oneLine(e: unknown): string {
  return (e instanceof AirgapError ? e.message : messageOf(e)).replace(/\s*\n\s*/g, ' ');
}

async function serviceStatus(name: string): Promise<ServiceStatus> {
  const out: ServiceStatus = { unit: null, container: null, log: [] };
  const unit = async () => {
    const sd = await systemdHere();
    if (!sd.ok) out.unitError = `systemd is not running as PID 1 here (${sd.said})`;
    else {
      try {
        const { mainPid: _, ...state } = await unitState(name);
        out.unit = state;
      } catch (e) {
        out.unitError = oneLine(e);
      }
    }
  };
  const container = async () => {
    try {
      out.container = await containerRunning(name);
    } catch (e) {
      out.containerError = oneLine(e);
    }
  };
  await Promise.all([unit(), container()]);
  if (out.unit && (out.unit.active !== 'active' || out.container === false))
    out.log = (await unitLog(name, 15)).filter((l) => l !== '-- No entries --');
  return out;
}

function serviceProblems(name: string, s: ServiceStatus, problems: string[]): void {
  const u = `${name}.service`;
  if (s.unitError) problems.push(`the unit ${u} could not be read: ${s.unitError}`);
  else if (s.unit?.load === 'not-found')
    problems.push(`there is no unit ${u}: install it with airgap registry install`);
  else if (s.unit && s.unit.active !== 'active')
    problems.push(
      `${u} is ${s.unit.active} (${s.unit.sub}${s.unit.result && s.unit.result !== 'success' ? `, result ${s.unit.result}` : ''}): start it with systemctl start ${u}, see why with journalctl -u ${u}`,
    );
  if (s.containerError) problems.push(`podman could not say whether ${name} runs: ${s.containerError}`);
  else if (s.unit?.active === 'active' && s.container === false)
    problems.push(`${u} is active but no container ${name} runs: restart it with systemctl restart ${u}`);
  else if (s.unit && s.unit.active !== 'active' && s.container === true)
    problems.push(
      `a container ${name} runs although ${u} is ${s.unit.active}: it was started by hand or outlived its unit (podman stop ${name}, then systemctl start ${u})`,
    );
}

/** Every IP `host` resolves to (IPv4 and IPv6), or the host itself when it is an IP. */
async function resolveHost(host: string): Promise<string[]> {
  if (/^[\d.]+$/.test(host) || host.includes(':')) return [host];
  const found = await lookup(host, { all: true, verbatim: true });
  return [...new Set(found.map((a) => a.address))];
}

/** What OpenSSL's verification codes mean for a registry's client (the code kept for searching). */
const VERIFY_WORDS: Record<string, string> = {
  SELF_SIGNED_CERT_IN_CHAIN: "its chain ends in a CA that the registry's CA file does not hold",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "it was not issued by the registry's CA",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "it was not issued by the registry's CA",
  DEPTH_ZERO_SELF_SIGNED_CERT: "it is self-signed and is not the registry's CA",
  CERT_HAS_EXPIRED: 'it has expired',
  CERT_NOT_YET_VALID: 'it is not valid yet (check the clock)',
};

function verifyWords(why: string): string {
  const words = VERIFY_WORDS[why];
  return words ? `${words} (${why})` : why;
}

function probeFailure(address: string, ip: string, e: unknown): AddressStatus {
  const code = (e as NodeJS.ErrnoException).code;
  const why = oneLine(e);
  if (code === 'ECONNREFUSED') return { address, ip, state: 'refused', why };
  if (/no TLS answer within/.test(why) || code === 'ETIMEDOUT' || code === 'EHOSTUNREACH')
    return { address, ip, state: 'no-answer', why };
  return { address, ip, state: 'error', why };
}

/** Each certified address on each IP it resolves to: a TLS handshake trusting only `cas`. */
async function probeAddresses(
  addresses: string[],
  cas: string[],
  timeoutMs: number,
): Promise<{ results: AddressStatus[]; served?: { address: string; cert: ServedCertificate } }> {
  type Probe = { status: AddressStatus; cert?: ServedCertificate };
  const probeIp = async (address: string, ip: string): Promise<Probe> => {
    try {
      const cert = await servedCertificate(address, cas, ip, timeoutMs);
      const status: AddressStatus = cert.trusted
        ? { address, ip, state: 'answers', fingerprint256: cert.fingerprint256 }
        : {
            address,
            ip,
            state: 'not-trusted',
            why: verifyWords(cert.why ?? ''),
            fingerprint256: cert.fingerprint256,
          };
      return { status, cert };
    } catch (e) {
      return { status: probeFailure(address, ip, e) };
    }
  };
  // Every address at once (an address that does not answer costs its timeout once, not once per address).
  const probes = (
    await Promise.all(
      addresses.map(async (address): Promise<Probe[]> => {
        let ips: string[];
        try {
          ips = await resolveHost(splitAddress(address).host);
        } catch (e) {
          return [{ status: { address, state: 'unresolved', why: oneLine(e) } }];
        }
        return Promise.all(ips.map((ip) => probeIp(address, ip)));
      }),
    )
  ).flat();
  // What is served: as the registry's own address (listed first) shows it, else the first that answered.
  const first = probes.find((p) => p.cert);
  return {
    results: probes.map((p) => p.status),
    ...(first?.cert ? { served: { address: first.status.address, cert: first.cert } } : {}),
  };
}

function addressProblems(results: AddressStatus[], problems: string[]): void {
  for (const r of results) {
    const at = r.ip && r.ip !== splitAddress(r.address).host ? `${r.address} (${r.ip})` : r.address;
    if (r.state === 'answers') continue;
    if (r.state === 'not-trusted')
      problems.push(`${at} serves a certificate that the registry's CA file does not verify: ${r.why}`);
    else if (r.state === 'unresolved') problems.push(`${at} does not resolve: ${r.why}`);
    else
      problems.push(`${at} ${r.state === 'refused' ? 'refuses connections' : 'does not answer'}: ${r.why}`);
  }
}

function certificateProblems(
  certs: RegistryStatus['certificates'],
  problems: string[],
  warnings: string[],
): void {
  const each: [string, CertificateStatus][] = [
    ['the certificate file', certs.leaf],
    ...(certs.served && !certs.served.sameAsFile
      ? [[`the certificate served on ${certs.served.address}`, certs.served] as [string, CertificateStatus]]
      : []),
    ...certs.cas.map((c): [string, CertificateStatus] => [`the CA ${c.subject}`, c]),
  ];
  for (const [what, c] of each) {
    if (c.expiry === 'expired')
      problems.push(`${what} expired on ${c.notAfter.slice(0, 10)}: renew it with airgap registry renew`);
    else if (c.expiry === 'expiring')
      warnings.push(
        `${what} expires in ${c.daysLeft} day(s), on ${c.notAfter.slice(0, 10)}: renew it with airgap registry renew`,
      );
  }
  if (certs.served && !certs.served.sameAsFile)
    warnings.push(
      `the registry serves another certificate than ${certs.leaf.file ?? 'its file'} (renewed without a restart?): systemctl restart the unit`,
    );
}

/** The catalog and each repository's tags, at most `concurrency` listings at once. */
async function countImages(
  setup: RegistrySetup,
  password: string | undefined,
  concurrency: number,
): Promise<ImageCount> {
  const empty = { repositories: 0, tags: 0, prefixes: [], errors: [] };
  if (password === undefined)
    return { state: 'skipped', why: 'the count needs the password: give --password-file', ...empty };
  const client = new RegistryClient(setup.address, {
    caFiles: [await caFile(setup)],
    certDirs: [],
    connections: concurrency,
    retry: { attempts: 2 },
    credentials: {
      credential: { username: setup.username, password, source: '--password-file' },
    },
  });
  try {
    let repositories: string[];
    try {
      repositories = await client.listRepositories(CHECK_REPO);
    } catch (e) {
      const error = oneLine(e);
      return { state: 'incomplete', why: 'the catalog could not be listed', ...empty, errors: [error] };
    }
    const limiter = new Limiter(concurrency);
    const errors: string[] = [];
    const counts: { repository: string; tags: number }[] = [];
    await Promise.all(
      repositories.map((repository) =>
        limiter.run(async () => {
          try {
            counts.push({ repository, tags: (await client.listTags(repository)).length });
          } catch (e) {
            errors.push(`${repository}: ${oneLine(e)}`);
          }
        }),
      ),
    );
    const prefixes = groupByPrefix(counts);
    return {
      state: errors.length ? 'incomplete' : 'counted',
      ...(errors.length
        ? { why: `${errors.length} of ${repositories.length} repositories could not be listed` }
        : {}),
      repositories: repositories.length,
      tags: counts.reduce((n, c) => n + c.tags, 0),
      prefixes,
      errors: errors.sort(),
    };
  } finally {
    await client.close();
  }
}

/** The file holding the CA a client trusts: certs/ca.crt, else the (self-signed) certificate. */
async function caFile(setup: RegistrySetup): Promise<string> {
  try {
    await readFile(setup.files.ca);
    return setup.files.ca;
  } catch (e) {
    if (!isNotFound(e)) throw e;
    return setup.files.certificate;
  }
}

/** storage.delete.enabled of config.yml (distribution's default: off). */
async function deletesEnabled(setup: RegistrySetup): Promise<RegistryStatus['deletes']> {
  try {
    const doc = parseYaml(await readFile(setup.files.config, 'utf8'), { source: setup.files.config });
    const storage = (doc as { storage?: { delete?: { enabled?: unknown } } } | undefined)?.storage;
    return { enabled: storage?.delete?.enabled === true };
  } catch (e) {
    return { enabled: null, error: oneLine(e) };
  }
}

/** The fingerprints of the PEM certificates in `text` (unparsable blocks are skipped). */
function fingerprints(text: string): Set<string> {
  const out = new Set<string>();
  for (const pem of pemBlocks(text)) {
    try {
      out.add(new X509Certificate(pem).fingerprint256);
    } catch {
      // Not a certificate a client could use either: it holds no CA.
    }
  }
  return out;
}

/** Whether each trust ConfigMap airgap writes for this registry holds its CA(s) on the hub. */
async function hubTrust(
  hub: HubConnection,
  setup: RegistrySetup,
  cas: string[],
  namespace: string,
): Promise<ConfigMapTrust[]> {
  let key: string;
  try {
    key = registryConfigKey(setup.address, `the registry ${setup.address}`);
  } catch (e) {
    // An IPv6 literal cannot be a key of registry-config: nothing on the hub can hold it there.
    return [
      {
        namespace: 'openshift-config',
        name: 'registry-config',
        key: setup.address,
        state: 'error',
        why: oneLine(e),
      },
    ];
  }
  const objects = buildTrustObjects({
    registryConfigData: { [key]: cas.join('') },
    caBundle: cas.join(''),
    mappings: [],
    hostedClusterNamespace: namespace,
  });
  const want = [...fingerprints(cas.join(''))];
  const checks = [
    { cm: objects.registryConfig, key },
    { cm: objects.userCaBundle, key: 'ca-bundle.crt' },
  ];
  return Promise.all(
    checks.map(async ({ cm, key }): Promise<ConfigMapTrust> => {
      const at = { namespace: cm.metadata.namespace, name: cm.metadata.name, key };
      try {
        const obj = await readHubObject(hub, { apiVersion: 'v1', kind: 'ConfigMap', ...at });
        if (!obj) return { ...at, state: 'absent' };
        const value = (obj as { data?: Record<string, unknown> }).data?.[key];
        if (typeof value !== 'string') return { ...at, state: 'no-key' };
        const have = fingerprints(value);
        const missing = want.filter((f) => !have.has(f));
        return missing.length
          ? {
              ...at,
              state: 'other-ca',
              why: `it holds ${have.size} other certificate(s), not ${missing.join(', ')}`,
            }
          : { ...at, state: 'holds' };
      } catch (e) {
        return { ...at, state: 'error', why: lineError(e) };
      }
    }),
  );
}

function hubProblems(maps: ConfigMapTrust[], problems: string[]): void {
  for (const m of maps) {
    const where = `the hub's ConfigMap ${m.namespace}/${m.name}`;
    if (m.state === 'holds') continue;
    if (m.state === 'error') problems.push(`${where} could not be read: ${m.why}`);
    else
      problems.push(
        `${where} ${m.state === 'absent' ? 'does not exist' : m.state === 'no-key' ? `has no key ${m.key}` : `does not hold this registry's CA under ${m.key}`}: apply it again (airgap certs configmaps --ca …, or airgap registry renew --kubeconfig …)`,
      );
  }
}

/** Read every part of the registry's status (see the file comment). */
export async function registryStatus(o: StatusOptions): Promise<RegistryStatus> {
  const now = o.now ?? new Date();
  const { setup, record, name } = await locateRegistry(o.dir, o.name);
  const password = o.passwordFile ? await readPassword(o.passwordFile) : undefined;
  const leaf = await leafCertificate(setup);
  const cas = await trustedCas(setup);
  const problems: string[] = [];
  const warnings: string[] = [];

  const [service, probed, storage, images, deletes, hub] = await Promise.all([
    serviceStatus(name),
    probeAddresses(certifiedAddresses(leaf, setup), cas, o.probeTimeoutMs ?? 5000),
    measureStorage(setup.dataDir),
    countImages(setup, password, o.concurrency ?? 4),
    deletesEnabled(setup),
    o.hub ? hubTrust(o.hub, setup, cas, o.hostedClusterNamespace ?? 'clusters') : Promise.resolve(null),
  ]);
  const servedCert = probed.served ? new X509Certificate(probed.served.cert.pem) : undefined;
  const certificates: RegistryStatus['certificates'] = {
    leaf: certificateStatus(leaf, now, setup.files.certificate),
    served:
      servedCert && probed.served
        ? {
            ...certificateStatus(servedCert, now),
            address: probed.served.address,
            sameAsFile: servedCert.fingerprint256 === leaf.fingerprint256,
          }
        : null,
    cas: cas.map((pem) => certificateStatus(new X509Certificate(pem), now)),
  };

  serviceProblems(name, service, problems);
  addressProblems(probed.results, problems);
  certificateProblems(certificates, problems, warnings);
  if (!storage.exists) problems.push(`the data directory ${storage.dataDir} does not exist`);
  if (storage.error) problems.push(`the storage ${storage.dataDir} could not be measured: ${storage.error}`);
  if (storage.freeError)
    problems.push(`the free space under ${storage.dataDir} could not be read: ${storage.freeError}`);
  if (storage.free && storage.free.availableBytes < storage.free.totalBytes * 0.1)
    warnings.push(`the filesystem of ${storage.dataDir} is over 90% full`);
  if (images.state === 'incomplete')
    problems.push(
      `the image count is incomplete: ${images.why}${images.errors[0] ? ` (${images.errors[0]}${images.errors.length > 1 ? ', …' : ''})` : ''}`,
    );
  if (deletes.error) problems.push(`${setup.files.config} could not be read: ${deletes.error}`);
  if (hub) hubProblems(hub, problems);

  return {
    registry: setup.address,
    dir: setup.dir,
    name,
    installed: record !== undefined,
    healthy: problems.length === 0,
    problems,
    warnings,
    service,
    addresses: probed.results,
    certificates,
    storage,
    images,
    deletes,
    hub: hub ? { configMaps: hub } : null,
  };
}
