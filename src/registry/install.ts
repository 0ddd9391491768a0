/**
 * `airgap registry install`: the bastion's mirror registry installed, started and checked from the
 * outside, idempotently. Every check that needs no change runs first (podman, systemd as PID 1,
 * root, the image or what to load it from, the files); then each step changes the host only where
 * it differs from what is wanted, and says whether it did. A second run changes nothing and says so.
 *
 *   files    the registry directory (airgap certs registry's files, or written now)
 *   image    the registry image in podman's storage (loaded from an OCI archive or layout, never pulled)
 *   unit     /etc/systemd/system/<name>.service, then systemctl daemon-reload
 *   trust    the CA in the host's trust store and in /etc/containers/certs.d/<host:port>/
 *   service  systemctl enable --now (or restart, when the unit or the files changed)
 *   checks   TLS with the CA and the name, the password required, an image pushed and read back
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { registryRunCommand, registryUnit } from '../certs/index.js';
import { AirgapError, usageError } from '../util/errors.js';
import { isNotFound, writeFileAtomic } from '../util/fs.js';
import { BastionError } from './errors.js';
import {
  certifiedAddresses,
  hasSetup,
  leafCertificate,
  trustedCas,
  writeNewSetup,
  type NewRegistryFiles,
  readPassword,
} from './files.js';
import { shellCommand } from './host.js';
import { ensureImage, imageSource, type ImageSource } from './image.js';
import { checkPassword, pushAndReadBack, waitServing, type Access } from './probe.js';
import {
  checkName,
  readInstall,
  readSetup,
  writeInstall,
  type InstallRecord,
  type RegistrySetup,
} from './state.js';
import { noSystemd, systemctl, systemdHere, unitFile, unitState } from './systemd.js';
import { applyTrust, hostTrustStore, trustFiles, type HostTrustStore } from './trust.js';

export interface InstallOptions extends Omit<NewRegistryFiles, 'passwordFile'> {
  dir: string;
  name: string;
  passwordFile: string;
  imageArchive?: string;
  imageLayout?: string;
  trustHost?: boolean;
  trustPodman?: boolean;
  dryRun?: boolean;
  /** How long the registry may take to answer after a start (default 60 s). */
  readyTimeoutMs?: number;
  report?: (step: InstallStep) => void;
}

export type StepName = 'files' | 'image' | 'unit' | 'trust' | 'service' | 'checks';

export interface InstallStep {
  step: StepName;
  /** changed: done now; unchanged: already so; planned: --dry-run. */
  status: 'changed' | 'unchanged' | 'planned';
  message: string;
  /** The commands it runs (--dry-run) or ran. */
  commands?: string[];
}

export interface InstallResult {
  registry: string;
  name: string;
  dir: string;
  addresses: string[];
  dryRun: boolean;
  changed: boolean;
  steps: InstallStep[];
  /** The manifest digest of the check image read back. */
  checkImage?: string;
  certificate?: { subject: string; notAfter: string };
}

/** What install works from, read and checked before anything changes. */
interface Prepared {
  o: InstallOptions;
  name: string;
  /** The directory's setup, or undefined when it is written by this run. */
  setup?: RegistrySetup;
  source?: ImageSource;
  store?: HostTrustStore;
  /** --dry-run: why systemd cannot run the unit here, when it cannot. */
  noSystemd?: string;
}

/** Checks that change nothing: the name, root, podman, systemd, the image source, the files. */
async function prepare(o: InstallOptions): Promise<Prepared> {
  const name = checkName(o.name);
  const setup = (await hasSetup(o.dir)) ? await readSetup(o.dir) : undefined;
  if (setup && o.hostname && o.hostname !== setup.hostname)
    throw usageError(
      BastionError.STATE_INVALID,
      `${setup.dir} holds the registry ${setup.address}, not ${o.hostname}`,
      {
        where: setup.dir,
        hint: 'leave out --hostname to install the directory as it is, or give another --dir (renew changes names: airgap registry renew --san)',
      },
    );
  const image = setup?.image ?? o.image;
  const source = await imageSource(image, o.imageArchive, o.imageLayout);
  const store = o.trustHost === false ? undefined : await hostTrustStore();
  const sd = await systemdHere();
  if (!o.dryRun) {
    if (typeof process.getuid === 'function' && process.getuid() !== 0)
      throw usageError(BastionError.NOT_ROOT, 'airgap registry install changes the host: run it as root', {
        hint: 'sudo airgap registry install …',
      });
    if (!sd.ok) throw noSystemd(sd.said, shellCommand(runCommand(name, setup, o)));
  }
  return {
    o,
    name,
    ...(setup ? { setup } : {}),
    ...(source ? { source } : {}),
    ...(store ? { store } : {}),
    ...(sd.ok ? {} : { noSystemd: sd.said }),
  };
}

/** The command the unit runs, for the dry run and the no-systemd stop. */
function runCommand(name: string, setup: RegistrySetup | undefined, o: InstallOptions): string[] {
  return registryRunCommand({
    name,
    outDir: setup?.dir ?? resolve(o.dir),
    dataDir: setup?.dataDir ?? resolve(o.dataDir ?? '/var/lib/registry'),
    image: setup?.image ?? o.image ?? 'docker.io/library/registry:2',
  });
}

/** Install (or, with dryRun, say how); see the file comment. */
export async function installRegistry(o: InstallOptions): Promise<InstallResult> {
  const p = await prepare(o);
  const steps: InstallStep[] = [];
  const add = (s: InstallStep) => {
    steps.push(s);
    o.report?.(s);
  };
  if (o.dryRun) return dryRun(p, add, steps);

  let setup = p.setup;
  if (!setup) {
    setup = await writeNewSetup(o.dir, o);
    add({
      step: 'files',
      status: 'changed',
      message: `wrote the registry files for ${setup.address} into ${setup.dir}`,
    });
  } else
    add({ step: 'files', status: 'unchanged', message: `${setup.dir} holds the registry ${setup.address}` });
  const filesWritten = !p.setup;

  add(await ensureImage(setup.image, p.source));
  const unitChanged = await installUnit(p.name, setup, add);
  const leaf = await leafCertificate(setup);
  const addresses = certifiedAddresses(leaf, setup);
  const cas = await trustedCas(setup);
  await installTrust(p, setup, addresses, cas, add);
  await startService(p.name, unitChanged || filesWritten, add);

  const password = await readPassword(o.passwordFile);
  const access: Access = { address: setup.address, caFiles: [], username: setup.username, password };
  const served = await waitServing(setup.address, cas, o.readyTimeoutMs ?? 60_000);
  if (!served.trusted)
    throw new AirgapError(
      BastionError.CHECK_FAILED,
      `the registry ${setup.address} serves a certificate its CA does not verify for that name: ${served.why}`,
      {
        hint: `it serves ${served.subject}; write the files again (airgap certs registry --force) or renew (airgap registry renew)`,
      },
    );
  await checkPassword({ ...access, caFiles: [] }).catch((e: unknown) => rethrowTrust(e, setup));
  const digest = await pushAndReadBack(access);
  add({
    step: 'checks',
    status: 'unchanged',
    message: `${setup.address} serves ${served.subject} (valid until ${served.notAfter.toISOString().slice(0, 10)}) trusted by the host, asks for the password, and gave back the image it was sent (${digest.slice(0, 19)}…)`,
  });
  const changed = steps.some((s) => s.status === 'changed');
  return {
    registry: setup.address,
    name: p.name,
    dir: setup.dir,
    addresses,
    dryRun: false,
    changed,
    steps,
    checkImage: digest,
    certificate: { subject: served.subject, notAfter: served.notAfter.toISOString() },
  };
}

/** A TLS failure of the checks, which trust only the host's store: the trust step did not take. */
function rethrowTrust(e: unknown, setup: RegistrySetup): never {
  if (e instanceof AirgapError && /TLS|certificate/i.test(`${e.code} ${e.message}`))
    throw new AirgapError(
      BastionError.TRUST_FAILED,
      `the host does not trust the registry ${setup.address} after the CA was added: ${e.message}`,
      {
        hint: 'check the system trust store (update-ca-trust extract / update-ca-certificates) and SSL_CERT_FILE',
        cause: e,
      },
    );
  throw e;
}

/** Write the unit when it differs, then daemon-reload. Returns whether it changed. */
async function installUnit(
  name: string,
  setup: RegistrySetup,
  add: (s: InstallStep) => void,
): Promise<boolean> {
  const path = unitFile(name);
  const text = registryUnit({
    name,
    outDir: setup.dir,
    dataDir: setup.dataDir,
    image: setup.image,
    address: setup.address,
  });
  let have: string | undefined;
  try {
    have = await readFile(path, 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
  if (have === text) {
    add({ step: 'unit', status: 'unchanged', message: `${path} is up to date` });
    return false;
  }
  await writeFileAtomic(path, text, { mode: 0o644 });
  await systemctl('daemon-reload');
  add({
    step: 'unit',
    status: 'changed',
    message: `${have ? 'updated' : 'wrote'} ${path}`,
    commands: ['systemctl daemon-reload'],
  });
  return true;
}

/** Trust the CAs on the host and for podman; record what was written. */
async function installTrust(
  p: Prepared,
  setup: RegistrySetup,
  addresses: string[],
  cas: string[],
  add: (s: InstallStep) => void,
): Promise<void> {
  const before = await readInstall(setup.dir);
  const files = trustFiles(p.store, p.name, p.o.trustPodman === false ? [] : addresses, cas);
  const changed = await applyTrust(p.store, files, before?.trustFiles ?? []);
  const record: InstallRecord = {
    apiVersion: 'airgap/v1',
    kind: 'InstalledRegistry',
    name: p.name,
    unitFile: unitFile(p.name),
    addresses,
    trustFiles: files.map((f) => f.path),
    ...(p.store ? { hostStore: { dir: p.store.dir, update: [...p.store.update] } } : {}),
  };
  if (JSON.stringify(before) !== JSON.stringify(record)) await writeInstall(setup.dir, record);
  add({
    step: 'trust',
    status: changed.length ? 'changed' : 'unchanged',
    message: changed.length
      ? `trusted the registry CA: ${changed.join(', ')}${p.store ? ` (then ${p.store.update.join(' ')})` : ''}`
      : `the CA is trusted already (${files.length} file(s))`,
  });
}

/** Enable and start the unit, or restart it when what it runs changed. */
async function startService(name: string, restart: boolean, add: (s: InstallStep) => void): Promise<void> {
  const u = `${name}.service`;
  const state = await unitState(name);
  const commands: string[] = [];
  if (state.enabled !== 'enabled' || state.active !== 'active') {
    await systemctl('enable', '--now', u);
    commands.push(`systemctl enable --now ${u}`);
  }
  if (restart && state.active === 'active') {
    await systemctl('restart', u);
    commands.push(`systemctl restart ${u}`);
  }
  add(
    commands.length
      ? { step: 'service', status: 'changed', message: `${u} started`, commands }
      : { step: 'service', status: 'unchanged', message: `${u} is enabled and running` },
  );
}

/** --dry-run: every step with the commands it would run; nothing changes. */
function dryRun(p: Prepared, add: (s: InstallStep) => void, steps: InstallStep[]): InstallResult {
  const { o, name, setup } = p;
  const dir = setup?.dir ?? resolve(o.dir);
  const address = setup?.address ?? `${o.hostname ?? '<hostname>'}:${o.port ?? 5000}`;
  const u = `${name}.service`;
  add({
    step: 'files',
    status: setup ? 'unchanged' : 'planned',
    message: setup
      ? `${dir} holds the registry ${address}`
      : `write the registry files for ${address} into ${dir}`,
  });
  add({
    step: 'image',
    status: p.source ? 'planned' : 'unchanged',
    message: p.source
      ? `load ${p.source.ref} from ${p.source.path}`
      : `podman has ${setup?.image ?? o.image} already`,
    ...(p.source ? { commands: [p.source.command] } : {}),
  });
  add({
    step: 'unit',
    status: 'planned',
    message: `write ${unitFile(name)} (runs: ${shellCommand(runCommand(name, setup, o))})`,
    commands: ['systemctl daemon-reload'],
  });
  add({
    step: 'trust',
    status: 'planned',
    message: `trust the CA: ${[p.store ? `${p.store.dir} (${p.store.update.join(' ')})` : '', o.trustPodman === false ? '' : `/etc/containers/certs.d/${address}/ca.crt`].filter(Boolean).join(', ') || 'nothing (--no-trust-host --no-trust-podman)'}`,
  });
  add({
    step: 'service',
    status: 'planned',
    message: `start ${u}`,
    commands: [`systemctl enable --now ${u}`],
  });
  add({
    step: 'checks',
    status: 'planned',
    message: `check ${address}: TLS with the CA, the password required, an image pushed and read back`,
  });
  return { registry: address, name, dir, addresses: [address], dryRun: true, changed: false, steps };
}
