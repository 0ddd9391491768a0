/**
 * `airgap registry uninstall`: take back what `registry install` put on the host. The unit stopped,
 * disabled and removed (then daemon-reload), its container removed if one is left, the trust files
 * installed.json lists removed (the host bundle rebuilt once when a host store file went), and
 * installed.json removed. The registry directory (files, certificates, the CA airgap minted) is
 * kept, and so are the images, unless --delete-data is given and confirmed. A second run finds
 * nothing installed and says so.
 */
import { lstat, readdir, rm, rmdir, stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { AirgapError, usageError } from '../util/errors.js';
import { isNotFound, statIfExists } from '../util/fs.js';
import { BastionError } from './errors.js';
import { runHost, shellWords } from './host.js';
import { removeContainer } from './podman.js';
import { INSTALLED_FILE, locateRegistry, type RegistrySetup } from './state.js';
import { systemctl, systemdHere, unitFile, unitState } from './systemd.js';
import { PODMAN_CERTS_D, rebuildBundle, withTrustLock } from './trust.js';

export interface UninstallOptions {
  dir: string;
  /** The unit and container (default: installed.json's name, else `registry`). */
  name?: string;
  /** Remove the data directory (the images) too. */
  deleteData?: boolean;
  /** The data may go without asking. */
  yes?: boolean;
  /** Ask a person at a terminal to type `expected`; true when they did. Absent: nobody to ask. */
  confirm?: (question: string, expected: string) => Promise<boolean>;
  dryRun?: boolean;
  report?: (step: UninstallStep) => void;
}

export interface UninstallStep {
  step: 'unit' | 'container' | 'trust' | 'record' | 'data';
  /** changed: done now; planned: --dry-run. */
  status: 'changed' | 'planned';
  message: string;
  commands?: string[];
}

export interface UninstallResult {
  registry: string;
  name: string;
  dir: string;
  dataDir: string;
  dryRun: boolean;
  /** Nothing of the registry was on the host (a second run). */
  nothingInstalled: boolean;
  steps: UninstallStep[];
  /** Whether the data directory is still there afterwards. */
  dataKept: boolean;
}

/** What of the registry is on the host now. */
interface Found {
  setup: RegistrySetup;
  name: string;
  unitLoaded: boolean;
  unitFileThere: boolean;
  container: boolean;
  trustFiles: string[];
  hostStore?: { dir: string; update: string[] };
  record: boolean;
  /** The data directory, when it exists and --delete-data asks for it. */
  data?: string;
}

const exists = async (path: string) => (await statIfExists(path)) !== undefined;

/** Whether a container `name` exists (running or not). */
async function containerExists(name: string): Promise<boolean> {
  const r = await runHost('podman', ['container', 'exists', name], BastionError.PODMAN_FAILED, {
    okCodes: [1],
  });
  return r.exitCode === 0;
}

/**
 * Refuse to delete a data directory that may not be the registry's store: `/`, the registry
 * directory or one holding it, a symbolic link, or a non-empty directory without distribution's
 * docker/registry/v2. Returns the path, or undefined when there is none.
 */
async function checkDataDir(dataDirIn: string, registryDir: string): Promise<string | undefined> {
  const dataDir = resolve(dataDirIn);
  const refuse = (why: string, hint: string) =>
    usageError(BastionError.DATA_DIR_UNSAFE, `refusing to delete the data directory ${dataDir}: ${why}`, {
      where: dataDir,
      hint,
    });
  const fix = 'nothing was changed; delete what you mean to delete by hand, or fix dataDir in registry.json';
  if (dataDir === sep) throw refuse('it is /', fix);
  const reg = resolve(registryDir);
  if (reg === dataDir || reg.startsWith(`${dataDir}${sep}`))
    throw refuse(`it holds the registry directory ${reg} (certificates, keys, config)`, fix);
  let st;
  try {
    st = await lstat(dataDir);
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
  if (st.isSymbolicLink()) throw refuse('it is a symbolic link', `${fix} (delete its target yourself)`);
  if (!st.isDirectory()) throw refuse('it is not a directory', fix);
  if ((await statIfExists(join(dataDir, 'docker', 'registry', 'v2'))) === undefined) {
    if ((await readdir(dataDir)).length > 0)
      throw refuse(
        'it is not empty and has no docker/registry/v2 below it: it may not be a registry store',
        fix,
      );
  }
  return dataDir;
}

/** systemd is not PID 1: stop before changing anything, saying what would be run on the bastion. */
function refuseNoSystemd(said: string, name: string): AirgapError {
  const commands = [
    `systemctl disable --now ${name}.service`,
    `rm ${unitFile(name)}`,
    'systemctl daemon-reload',
    `podman rm --force --ignore ${name}`,
  ].join('; ');
  return new AirgapError(
    BastionError.NO_SYSTEMD,
    `systemd is not running as PID 1 on this host (${said}); nothing was changed`,
    {
      hint: `run airgap registry uninstall on the bastion itself (systemd as PID 1), where it runs: ${commands}`,
      details: { command: commands },
    },
  );
}

async function survey(o: UninstallOptions): Promise<Found> {
  const { setup, record, name } = await locateRegistry(o.dir, o.name);
  // Before asking systemd anything: without it, systemctl show fails, and nothing may change.
  const sd = await systemdHere();
  if (!sd.ok && !o.dryRun) throw refuseNoSystemd(sd.said, name);
  const unitFileThere = await exists(unitFile(name));
  const trustFiles: string[] = [];
  for (const f of record?.trustFiles ?? []) if (await exists(f)) trustFiles.push(f);
  const data = o.deleteData ? await checkDataDir(setup.dataDir, setup.dir) : undefined;
  return {
    setup,
    name,
    // --dry-run where systemd is not PID 1: the unit counts as loaded when its file is there.
    unitLoaded: sd.ok ? (await unitState(name)).load !== 'not-found' : unitFileThere,
    unitFileThere,
    container: await containerExists(name),
    trustFiles,
    ...(record?.hostStore ? { hostStore: record.hostStore } : {}),
    record: record !== undefined,
    ...(data ? { data } : {}),
  };
}

/** The steps that would take back what `f` found, each with its commands. */
function plan(f: Found): UninstallStep[] {
  const u = `${f.name}.service`;
  const steps: UninstallStep[] = [];
  const planned = (step: UninstallStep['step'], message: string, commands?: string[]) =>
    steps.push({ step, status: 'planned', message, ...(commands ? { commands } : {}) });
  if (f.unitLoaded || f.unitFileThere)
    planned('unit', `stop and remove ${u} (${unitFile(f.name)})`, [
      ...(f.unitLoaded ? [`systemctl disable --now ${u}`] : []),
      `rm ${unitFile(f.name)}`,
      'systemctl daemon-reload',
    ]);
  if (f.container) planned('container', `remove the container ${f.name}`, [`podman rm --force ${f.name}`]);
  if (f.trustFiles.length) {
    const host = f.hostStore && f.trustFiles.some((p) => p.startsWith(`${f.hostStore!.dir}/`));
    planned('trust', `remove the trust files: ${f.trustFiles.join(', ')}`, [
      `rm ${f.trustFiles.join(' ')}`,
      ...(host ? [shellWords(f.hostStore!.update[0]!, f.hostStore!.update.slice(1))] : []),
    ]);
  }
  if (f.record) planned('record', `remove ${join(f.setup.dir, INSTALLED_FILE)}`);
  if (f.data)
    planned('data', `delete the data directory ${f.data} (every image of the registry)`, [
      `rm -rf ${f.data}`,
    ]);
  return steps;
}

/** Uninstall (or, with dryRun, say how); see the file comment. */
export async function uninstallRegistry(o: UninstallOptions): Promise<UninstallResult> {
  const f = await survey(o);
  const steps = plan(f);
  const result = (done: UninstallStep[], dataKept: boolean): UninstallResult => ({
    registry: f.setup.address,
    name: f.name,
    dir: f.setup.dir,
    dataDir: f.setup.dataDir,
    dryRun: !!o.dryRun,
    nothingInstalled: steps.length === 0,
    steps: done,
    dataKept,
  });
  if (steps.length === 0) return result([], true);
  if (o.dryRun) {
    for (const s of steps) o.report?.(s);
    return result(steps, !f.data);
  }
  if (typeof process.getuid === 'function' && process.getuid() !== 0)
    throw usageError(
      BastionError.SYSTEMCTL_FAILED,
      'airgap registry uninstall changes the host: run it as root',
      {
        hint: 'sudo airgap registry uninstall …',
      },
    );
  if (f.data) await confirmDelete(o, f);

  const done: UninstallStep[] = [];
  const add = (s: UninstallStep) => {
    const c = { ...s, status: 'changed' as const };
    done.push(c);
    o.report?.(c);
  };
  for (const s of steps) {
    await act(s, f);
    add(s);
  }
  return result(done, !f.data);
}

/** --delete-data: --yes, or the registry's address typed at a terminal; else CONFIRM_REQUIRED, nothing changed. */
async function confirmDelete(o: UninstallOptions, f: Found): Promise<void> {
  if (o.yes) return;
  const question = `This deletes ${f.data}, every image of the registry ${f.setup.address}. Type ${f.setup.address} to go on: `;
  if (!o.confirm)
    throw usageError(
      BastionError.CONFIRM_REQUIRED,
      `--delete-data removes ${f.data} (every image of ${f.setup.address}) and nobody is at a terminal to confirm it; nothing was changed`,
      { hint: 'add --yes to delete the data, or leave out --delete-data to keep it' },
    );
  if (!(await o.confirm(question, f.setup.address)))
    throw usageError(
      BastionError.CONFIRM_REQUIRED,
      `not confirmed (the registry address was not typed): nothing was changed`,
      { hint: `type ${f.setup.address} exactly, or add --yes` },
    );
}

/** Carry out one planned step. */
async function act(s: UninstallStep, f: Found): Promise<void> {
  const u = `${f.name}.service`;
  switch (s.step) {
    case 'unit':
      if (f.unitLoaded) await systemctl('disable', '--now', u);
      await rm(unitFile(f.name), { force: true });
      await systemctl('daemon-reload');
      return;
    case 'container':
      return removeContainer(f.name);
    case 'trust':
      return removeTrust(f);
    case 'record':
      return rm(join(f.setup.dir, INSTALLED_FILE), { force: true });
    case 'data': {
      // Checked again just before: the directory may have changed since the survey.
      const data = await checkDataDir(f.setup.dataDir, f.setup.dir);
      if (data) await rm(data, { recursive: true, force: true });
      return;
    }
  }
}

/**
 * Remove the trust files (and certs.d directories left empty); rebuild the host bundle once if one
 * was there, in the same turn of the trust lock.
 */
async function removeTrust(f: Found): Promise<void> {
  await withTrustLock(async () => {
    let host = false;
    for (const path of f.trustFiles) {
      await rm(path, { force: true });
      if (f.hostStore && path.startsWith(`${f.hostStore.dir}/`)) host = true;
      const parent = dirname(path);
      if (dirname(parent) === PODMAN_CERTS_D) await removeIfEmpty(parent);
    }
    if (host && f.hostStore) {
      const [bin, ...args] = f.hostStore.update;
      if (!bin)
        throw new AirgapError(
          BastionError.STATE_INVALID,
          `installed.json names no command to rebuild ${f.hostStore.dir}`,
        );
      await rebuildBundle({ dir: f.hostStore.dir, update: [bin, ...args] });
    }
  });
}

async function removeIfEmpty(dir: string): Promise<void> {
  try {
    if ((await stat(dir)).isDirectory() && (await readdir(dir)).length === 0) await rmdir(dir);
  } catch (e) {
    if (!isNotFound(e)) throw e;
  }
}
