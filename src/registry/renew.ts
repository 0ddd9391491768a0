/**
 * `airgap registry renew`: a new leaf certificate for the installed registry, the registry
 * restarted on it with its data, and the trust that depends on the CA re-emitted.
 *
 *   plan        (changes nothing) the names of the current leaf plus --san, the CA that signs (the
 *               directory's own <dir>/pki, --ca-key for the CA in certs/ca.crt, or a new one with
 *               --new-ca), the leaf issued in a private temp directory and verified against the CAs
 *               clients will trust; refused (exit 2, nothing changed) when it would not verify
 *   trust       the CAs in the host's store and certs.d (both during a --new-ca overlap), first
 *   configmaps  registry-config and user-ca-bundle under --output, applied with --kubeconfig
 *   files       certs/tls.crt, tls.key and ca.crt (and pki/ with --new-ca) replaced as one set;
 *               auth/htpasswd and conf/config.yml are not touched
 *   service     systemctl restart <name>.service
 *   checks      the new leaf served (its fingerprint), the password asked for, an image pushed and read back
 *
 * The order makes an interrupted run safe to finish by running renew again: the CAs are trusted
 * before the registry serves anything they sign, and the files name the CA the next run signs with.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createCaFiles,
  describeCertificate,
  issueServerFiles,
  readPrivateKeyFile,
  verifyCertificate,
} from '../certs/index.js';
import { AirgapError, usageError } from '../util/errors.js';
import { statIfExists, writeFilesAtomic } from '../util/fs.js';
import { BastionError } from './errors.js';
import { certifiedAddresses, leafCertificate, pkiDir, readPassword, trustedCas } from './files.js';
import { shellCommand } from './host.js';
import { checkPassword, pemBlocks, pushAndReadBack, waitServing, type ServedCertificate } from './probe.js';
import { emitTrustConfigMaps, trustConfigMapNames } from './renew-configmaps.js';
import {
  checkName,
  readInstall,
  readSetup,
  writeInstall,
  type InstallRecord,
  type RegistrySetup,
} from './state.js';
import { noSystemd, systemctl, systemdHere, unitFile } from './systemd.js';
import { PODMAN_CERTS_D, applyTrust, trustFiles, type HostTrustStore } from './trust.js';

const DAY_MS = 86_400_000;
/** A CA that ends sooner than this cannot carry a renewal: --new-ca. */
const CA_MIN_DAYS = 30;

export interface RenewOptions {
  dir: string;
  name?: string;
  /** The registry password (for the checks; never printed). */
  passwordFile: string;
  /** More names for the new leaf. */
  sans?: string[];
  days?: number;
  newCa?: boolean;
  /** With --new-ca and no kubeconfig: no hub trusts this registry (else refused: the hub would stop trusting it). */
  noHub?: boolean;
  /** The key of the CA in certs/ca.crt (when airgap did not mint it). */
  caKey?: string;
  kubeconfig?: string;
  /** Where the ConfigMaps go (default <dir>/configmaps). */
  output?: string;
  hostedClusterNamespace?: string;
  dryRun?: boolean;
  readyTimeoutMs?: number;
  report?: (step: RenewStep) => void;
}

export interface RenewStep {
  step: 'plan' | 'trust' | 'configmaps' | 'files' | 'service' | 'checks';
  status: 'changed' | 'unchanged' | 'planned';
  message: string;
  commands?: string[];
}

/** A certificate as renew reports it. */
export interface CertificateSummary {
  subject: string;
  issuer: string;
  serial: string;
  notAfter: string;
  sha256Fingerprint: string;
  names: string[];
}

export interface RenewResult {
  registry: string;
  name: string;
  dir: string;
  dryRun: boolean;
  previous: CertificateSummary;
  certificate: CertificateSummary;
  /** The CAs clients trust after the renewal (the signing one first). */
  trustedCas: { subject: string; notAfter: string; sha256Fingerprint: string; new: boolean }[];
  newCa: boolean;
  configMaps: { files: string[]; applied: string[] };
  steps: RenewStep[];
  warnings: string[];
}

/** What renew works from, read and checked before anything changes. */
interface Prepared {
  setup: RegistrySetup;
  record: InstallRecord;
  name: string;
  current: X509Certificate;
  /** The CAs clients trust now (certs/ca.crt). */
  trusted: string[];
  /** The names of the new leaf: the current leaf's, then --san. */
  names: string[];
  /** The CA that signs (absent with --new-ca: minted in the stage). */
  signer?: { cert: string; key: string; pem: string };
  store?: HostTrustStore;
}

/** The new leaf (and CA), issued and verified, held in memory. */
interface Staged {
  leafPem: string;
  keyPem: string;
  /** The signing CA's PEM. */
  caPem: string;
  /** With --new-ca: the new CA's key. */
  caKeyPem?: string;
  /** The CAs clients trust after the switch, the signing one first. */
  trustedAfter: string[];
  leaf: X509Certificate;
  warnings: string[];
}

const summary = (x: X509Certificate): CertificateSummary => {
  const d = describeCertificate(x);
  return {
    subject: d.subject,
    issuer: d.issuer,
    serial: d.serial,
    notAfter: d.notAfter,
    sha256Fingerprint: d.sha256Fingerprint,
    names: [...d.dnsNames, ...d.ipAddresses],
  };
};

const untrusted = (message: string, hint: string, where?: string) =>
  usageError(BastionError.RENEW_UNTRUSTED, message, { hint, ...(where ? { where } : {}) });

/** The CA to sign with, checked: a CA clients trust now, whose key is the one given, not expiring. */
async function signingCa(
  o: RenewOptions,
  setup: RegistrySetup,
  trusted: string[],
): Promise<Prepared['signer']> {
  if (o.newCa) {
    if (!o.kubeconfig && !o.noHub)
      throw untrusted(
        `--new-ca without --kubeconfig: a hub that trusts the registry's CA now would not trust the new one when the registry switches to it`,
        'give --kubeconfig so the hub trusts the new CA before the switch, or --no-hub when no cluster pulls from this registry yet (then apply the ConfigMaps renew writes wherever it is needed)',
      );
    return undefined;
  }
  const pki = pkiDir(setup.dir);
  const own = !o.caKey;
  const cert = own ? join(pki, 'ca.crt') : setup.files.ca;
  const key = o.caKey ?? join(pki, 'ca.key');
  if (own && !(await statIfExists(key)))
    throw usageError(
      BastionError.RENEW_UNTRUSTED,
      `${setup.dir} holds no CA key (${key}): airgap did not mint the registry's CA`,
      {
        where: key,
        hint: 'give the key of the CA in certs/ca.crt with --ca-key, or make a new CA with --new-ca',
      },
    );
  if (!own && !(await statIfExists(cert)))
    throw untrusted(
      `--ca-key needs the CA's certificate in ${cert}, and there is none`,
      'the registry certificate is self-signed: renew with --new-ca',
      cert,
    );
  const pem = pemBlocks(await readFile(cert, 'utf8'))[0];
  if (!pem)
    throw untrusted(`${cert} holds no certificate`, 'write it again with airgap registry install', cert);
  const ca = new X509Certificate(pem);
  const { key: k } = await readPrivateKeyFile(key, own ? undefined : '--ca-key');
  if (!ca.checkPrivateKey(k))
    throw untrusted(
      `${own ? key : `--ca-key ${key}`} is not the key of the CA ${ca.subject.replace(/\n/g, ', ')} (${cert}): a certificate it signed would not be trusted by the clients that trust the registry now`,
      'give the ca.key written together with that CA, or make a new CA with --new-ca',
      key,
    );
  if (!trusted.some((t) => new X509Certificate(t).fingerprint256 === ca.fingerprint256))
    throw untrusted(
      `the CA ${cert} (${ca.subject.replace(/\n/g, ', ')}) is not among the CAs clients trust for the registry (${setup.files.ca}): a certificate it signed would not be trusted`,
      'give --ca-key for the CA in certs/ca.crt, or make a new CA with --new-ca (it is trusted before the registry switches)',
      cert,
    );
  const daysLeft = Math.floor((Date.parse(ca.validTo) - Date.now()) / DAY_MS);
  if (daysLeft < CA_MIN_DAYS)
    throw untrusted(
      `the CA ${ca.subject.replace(/\n/g, ', ')} expires in ${daysLeft} day(s) (${new Date(ca.validTo).toISOString()}): a certificate it signs stops being trusted then`,
      'make a new CA with --new-ca: both are trusted while clients move to it',
      cert,
    );
  return { cert, key, pem };
}

/** Read and check everything; changes nothing. */
async function prepare(o: RenewOptions): Promise<Prepared> {
  const setup = await readSetup(o.dir);
  const record = await readInstall(setup.dir);
  if (!record)
    throw usageError(
      BastionError.NOT_INSTALLED,
      `the registry in ${setup.dir} was never installed (no installed.json)`,
      {
        where: setup.dir,
        hint: `install it first: airgap registry install --dir ${setup.dir} --password-file …`,
      },
    );
  const name = checkName(o.name ?? record.name);
  if (name !== record.name)
    throw usageError(
      BastionError.NAME_INVALID,
      `--name ${name}: the registry in ${setup.dir} runs as ${record.name}`,
      {
        hint: `leave out --name, or give --name ${record.name}`,
      },
    );
  const current = await leafCertificate(setup);
  const trusted = await trustedCas(setup);
  const d = describeCertificate(current);
  const names = [...new Set([setup.hostname, ...d.dnsNames, ...d.ipAddresses, ...(o.sans ?? [])])];
  const signer = await signingCa(o, setup, trusted);
  if (!o.dryRun) {
    if (typeof process.getuid === 'function' && process.getuid() !== 0)
      throw usageError(BastionError.NOT_ROOT, 'airgap registry renew changes the host: run it as root', {
        hint: 'sudo airgap registry renew …',
      });
    const sd = await systemdHere();
    if (!sd.ok) throw noSystemd(sd.said, shellCommand(['systemctl', 'restart', `${name}.service`]));
  }
  const store = record.hostStore
    ? { dir: record.hostStore.dir, update: record.hostStore.update as HostTrustStore['update'] }
    : undefined;
  return {
    setup,
    record,
    name,
    current,
    trusted,
    names,
    ...(signer ? { signer } : {}),
    ...(store ? { store } : {}),
  };
}

/** The CAs the current leaf chains to (kept trusted after a --new-ca), else every trusted one. */
function issuersOf(current: X509Certificate, trusted: string[]): string[] {
  const mine = trusted.filter((t) => {
    const ca = new X509Certificate(t);
    return current.checkIssued(ca) && current.verify(ca.publicKey);
  });
  return mine.length ? mine : trusted;
}

/**
 * Issue the new leaf (and the new CA) in a private temp directory, verify it against the CAs
 * clients will trust and for every name; read it into memory; remove the directory.
 */
async function stage(p: Prepared, o: RenewOptions): Promise<Staged> {
  const tmp = await mkdtemp(join(tmpdir(), 'airgap-renew-'));
  try {
    let caCert = p.signer?.cert;
    let caKey = p.signer?.key;
    if (!p.signer) {
      const stamp = new Date().toISOString().slice(0, 16).replace('T', ' ');
      await createCaFiles({
        out: join(tmp, 'ca'),
        commonName: `airgap registry CA (${p.setup.hostname}, ${stamp})`,
      });
      caCert = join(tmp, 'ca', 'ca.crt');
      caKey = join(tmp, 'ca', 'ca.key');
    }
    const issued = await issueServerFiles({
      caCert: caCert!,
      caKey: caKey!,
      names: p.names,
      commonName: p.setup.hostname,
      ...(o.days ? { days: o.days } : {}),
      out: join(tmp, 'leaf'),
      force: true,
    });
    const caPem = pemBlocks(await readFile(caCert!, 'utf8'))[0]!;
    const trustedAfter = p.signer ? p.trusted : [caPem, ...issuersOf(p.current, p.trusted)];
    const trustFile = join(tmp, 'trusted.crt');
    await writeFile(trustFile, trustedAfter.join(''));
    const v = await verifyCertificate({
      certFile: issued.files.certificate,
      keyFile: issued.files.key,
      caFile: trustFile,
      hosts: p.names,
    });
    if (!v.ok)
      throw untrusted(
        `the new certificate would not be trusted by the clients of ${p.setup.address}: ${v.problems.join('; ')}`,
        'nothing was changed; check the CA (certs/ca.crt, --ca-key) or renew with --new-ca',
      );
    const leafPem = await readFile(issued.files.certificate, 'utf8');
    return {
      leafPem,
      keyPem: await readFile(issued.files.key, 'utf8'),
      caPem,
      ...(p.signer ? {} : { caKeyPem: await readFile(caKey!, 'utf8') }),
      trustedAfter,
      leaf: new X509Certificate(leafPem),
      warnings: [...issued.warnings, ...v.warnings],
    };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** Trust the CAs of `after` on the host and for podman, under every address the new leaf names. */
async function renewTrust(p: Prepared, s: Staged, add: (st: RenewStep) => void): Promise<void> {
  const podman = p.record.trustFiles.some((f) => f.startsWith(`${PODMAN_CERTS_D}/`));
  const addresses = certifiedAddresses(s.leaf, p.setup);
  const files = trustFiles(p.store, p.name, podman ? addresses : [], s.trustedAfter);
  const changed = await applyTrust(p.store, files, p.record.trustFiles);
  const record: InstallRecord = { ...p.record, addresses, trustFiles: files.map((f) => f.path) };
  if (JSON.stringify(record) !== JSON.stringify(p.record)) await writeInstall(p.setup.dir, record);
  add({
    step: 'trust',
    status: changed.length ? 'changed' : 'unchanged',
    message: changed.length
      ? `trusted ${s.trustedAfter.length} CA(s): ${changed.join(', ')}${p.store ? ` (then ${p.store.update.join(' ')})` : ''}`
      : `the CA is trusted already (${files.length} file(s))`,
  });
}

/** The registry's certificate files (and, with --new-ca, its pki) replaced as one set. */
async function renewFiles(p: Prepared, s: Staged, add: (st: RenewStep) => void): Promise<void> {
  const { files } = p.setup;
  const set = [
    { path: files.certificate, data: `${s.leafPem}${s.caPem}`, mode: 0o644 },
    { path: files.key, data: s.keyPem, mode: 0o600 },
    { path: files.ca, data: s.trustedAfter.join(''), mode: 0o644 },
  ];
  if (s.caKeyPem) {
    const pki = pkiDir(p.setup.dir);
    const previous = (await statIfExists(join(pki, 'ca.crt')))
      ? await readFile(join(pki, 'ca.crt'), 'utf8')
      : issuersOf(p.current, p.trusted).join('');
    set.push(
      { path: join(pki, 'ca-previous.crt'), data: previous, mode: 0o644 },
      { path: join(pki, 'ca.crt'), data: s.caPem, mode: 0o644 },
      { path: join(pki, 'ca.key'), data: s.caKeyPem, mode: 0o600 },
    );
  }
  await writeFilesAtomic(set, { force: true });
  add({
    step: 'files',
    status: 'changed',
    message: `replaced ${set.map((f) => f.path).join(', ')} (auth/htpasswd and conf/config.yml kept)`,
  });
}

/** Wait until the registry serves the new leaf (the old process may answer for a moment). */
async function waitNewLeaf(address: string, s: Staged, timeoutMs: number): Promise<ServedCertificate> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const served = await waitServing(address, s.trustedAfter, Math.max(1000, deadline - Date.now()));
    if (served.fingerprint256 === s.leaf.fingerprint256) return served;
    if (Date.now() > deadline)
      throw new AirgapError(
        BastionError.CHECK_FAILED,
        `the registry ${address} still serves ${served.subject} (SHA-256 ${served.fingerprint256}), not the new certificate, after the restart`,
        { hint: 'see why with airgap registry status; run airgap registry renew again to finish' },
      );
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Restart on the new files; check the served leaf, the password and the storage. */
async function restartAndCheck(
  p: Prepared,
  s: Staged,
  o: RenewOptions,
  add: (st: RenewStep) => void,
): Promise<void> {
  const unit = `${p.name}.service`;
  await systemctl('restart', unit).catch((e: unknown) => {
    if (!(e instanceof AirgapError)) throw e;
    throw new AirgapError(e.code, e.message, {
      hint: `the new certificate files are in place and their CAs trusted, the registry still serves the old certificate; see why the unit does not restart (systemctl status ${unit}, journalctl -u ${unit}), then run airgap registry renew again to finish`,
      cause: e,
    });
  });
  add({
    step: 'service',
    status: 'changed',
    message: `${unit} restarted`,
    commands: [`systemctl restart ${unit}`],
  });
  const password = await readPassword(o.passwordFile);
  const served = await waitNewLeaf(p.setup.address, s, o.readyTimeoutMs ?? 60_000);
  if (!served.trusted)
    throw new AirgapError(
      BastionError.CHECK_FAILED,
      `the registry ${p.setup.address} serves the new certificate, but it does not verify: ${served.why}`,
      { hint: 'check certs/ca.crt and the trust files; run airgap registry renew again' },
    );
  const access = { address: p.setup.address, caFiles: [], username: p.setup.username, password };
  await checkPassword(access);
  const digest = await pushAndReadBack(access);
  add({
    step: 'checks',
    status: 'unchanged',
    message: `${p.setup.address} serves the new certificate (SHA-256 ${served.fingerprint256.slice(0, 23)}…, valid until ${served.notAfter.toISOString().slice(0, 10)}), trusted by the host, asks for the password, and gave back the image it was sent (${digest.slice(0, 19)}…)`,
  });
}

function planMessage(p: Prepared, s: Staged, o: RenewOptions): string {
  const d = describeCertificate(s.leaf);
  const cas = s.trustedAfter.map((pem) => new X509Certificate(pem).subject.replace(/\n/g, ', '));
  return [
    `a new certificate for ${d.dnsNames.concat(d.ipAddresses).join(', ')}, valid until ${d.notAfter.slice(0, 10)} (${d.daysLeft} days), signed by ${d.issuer}`,
    o.newCa ? `a new CA, trusted beside the old one: ${cas.join(' | ')}` : `the CA kept: ${cas.join(' | ')}`,
  ].join('; ');
}

/** Renew (or, with dryRun, say how); see the file comment. */
export async function renewRegistry(o: RenewOptions): Promise<RenewResult> {
  const p = await prepare(o);
  const s = await stage(p, o);
  const steps: RenewStep[] = [];
  const add = (st: RenewStep) => {
    steps.push(st);
    o.report?.(st);
  };
  const output = o.output ?? join(p.setup.dir, 'configmaps');
  const namespace = o.hostedClusterNamespace ?? 'clusters';
  add({ step: 'plan', status: o.dryRun ? 'planned' : 'unchanged', message: planMessage(p, s, o) });
  let configMaps = { files: [] as string[], applied: [] as string[] };
  if (o.dryRun) dryRunSteps(p, o, output, namespace, add);
  else {
    await renewTrust(p, s, add);
    configMaps = await emitTrustConfigMaps({
      address: p.setup.address,
      cas: s.trustedAfter,
      hostedClusterNamespace: namespace,
      output,
      ...(o.kubeconfig ? { kubeconfig: o.kubeconfig } : {}),
    });
    add({
      step: 'configmaps',
      status: 'changed',
      message: `wrote ${configMaps.files.join(', ')}${configMaps.applied.length ? `; applied to the hub: ${configMaps.applied.join(', ')}` : ' (no --kubeconfig: apply them with oc apply -f)'}`,
    });
    await renewFiles(p, s, add);
    await restartAndCheck(p, s, o, add);
  }
  const warnings = [...s.warnings];
  if (o.newCa && !o.kubeconfig)
    warnings.push(
      `--no-hub: a hub trusts the new CA only once the ConfigMaps in ${output} are applied there`,
    );
  return {
    registry: p.setup.address,
    name: p.name,
    dir: p.setup.dir,
    dryRun: !!o.dryRun,
    previous: summary(p.current),
    certificate: summary(s.leaf),
    trustedCas: s.trustedAfter.map((pem) => {
      const d = describeCertificate(new X509Certificate(pem));
      return {
        subject: d.subject,
        notAfter: d.notAfter,
        sha256Fingerprint: d.sha256Fingerprint,
        new: !p.trusted.includes(pem),
      };
    }),
    newCa: !!o.newCa,
    configMaps,
    steps,
    warnings,
  };
}

/** --dry-run: every step that would run; nothing changes. */
function dryRunSteps(
  p: Prepared,
  o: RenewOptions,
  output: string,
  namespace: string,
  add: (st: RenewStep) => void,
): void {
  const unit = `${p.name}.service`;
  add({
    step: 'trust',
    status: 'planned',
    message: `trust the CA(s) in ${[p.store?.dir, p.record.trustFiles.some((f) => f.startsWith(PODMAN_CERTS_D)) ? PODMAN_CERTS_D : undefined].filter(Boolean).join(' and ') || 'no trust store (install trusted none)'}`,
  });
  add({
    step: 'configmaps',
    status: 'planned',
    message: `write ${trustConfigMapNames(namespace, !!o.kubeconfig).join(', ')} into ${output}${o.kubeconfig ? ' and apply them to the hub' : ''}`,
  });
  add({
    step: 'files',
    status: 'planned',
    message: `replace ${p.setup.files.certificate}, ${p.setup.files.key}, ${p.setup.files.ca}${o.newCa ? `, ${pkiDir(p.setup.dir)}/ca.crt, ca.key (the old CA kept as ca-previous.crt)` : ''}`,
  });
  add({
    step: 'service',
    status: 'planned',
    message: `restart ${unit} (${unitFile(p.name)})`,
    commands: [`systemctl restart ${unit}`],
  });
  add({
    step: 'checks',
    status: 'planned',
    message: `check ${p.setup.address} serves the new certificate, asks for the password, and keeps its images`,
  });
}
