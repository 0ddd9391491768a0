/**
 * `airgap registry gc`: give back the disk `airgap mirror delete` freed. Distribution's garbage
 * collector must not run while the registry takes pushes, so the unit is stopped, `registry
 * garbage-collect <config>` runs once in the registry's own image with the same mounts (no network),
 * and the unit is started again, also when the collection failed, and waited for until it answers.
 *
 * Never `--delete-untagged`: in distribution 2.x it deletes every manifest no tag names, which are
 * the platform manifests of a multi-arch index (distribution issue #3178) and every image pushed by
 * digest only, both of which airgap mirrors. Plain garbage-collect removes only the blobs no
 * manifest references, which is what `mirror delete` leaves behind after deleting manifests.
 *
 * The storage is measured before and after (bytes of its files, blob count), and the result set
 * beside what `airgap mirror delete --generate` predicted in delete-images.yaml.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { IN_CONTAINER, registryMounts } from '../certs/index.js';
import { AirgapError, usageError } from '../util/errors.js';
import { isNotFound } from '../util/fs.js';
import { BastionError } from './errors.js';
import { trustedCas } from './files.js';
import { shellCommand } from './host.js';
import { containerRunning, runOnce } from './podman.js';
import { waitServing } from './probe.js';
import { locateRegistry, type RegistrySetup } from './state.js';
import { measureStorage, sizeOf, type StorageStats } from './storage.js';
import { systemctl, systemdHere, unitState } from './systemd.js';

export type { StorageStats } from './storage.js';

export interface GcOptions {
  dir: string;
  /** The unit and container (default: installed.json's name, else `registry`). */
  name?: string;
  /** The delete-images.yaml whose first line holds the prediction. */
  deleteYamlFile?: string;
  /** A mirror workspace (`file://DIR` or DIR): its delete/delete-images.yaml. */
  workspace?: string;
  /** `garbage-collect --dry-run` while the registry keeps serving; nothing is stopped or removed. */
  dryRun?: boolean;
  /** How long the registry may take to answer after the start (default 60 s). */
  readyTimeoutMs?: number;
  /** How long the collection itself may take (default 2 h). */
  gcTimeoutMs?: number;
  report?: (line: string) => void;
}

/** What `airgap mirror delete --generate` said a collection would reclaim. */
export interface GcPrediction {
  file: string;
  manifests: number;
  blobs: number;
  bytes: number;
}

export interface GcResult {
  registry: string;
  name: string;
  dataDir: string;
  dryRun: boolean;
  /** The storage held no repositories: distribution's collector had nothing to mark. */
  nothingToCollect: boolean;
  /** What the collector found no manifest references (deleted, or with --dry-run to be deleted). */
  eligible: { blobs: number; bytes: number; manifests: number };
  before: StorageStats;
  after?: StorageStats;
  /** before − after (not with --dry-run). */
  reclaimed?: { bytes: number; diskBytes: number; blobs: number };
  prediction?: GcPrediction;
  /** Why there is no prediction to compare with. */
  predictionNote?: string;
  /** Whether the unit was running before (then it was stopped and started again). */
  wasRunning: boolean;
  /** The command the collector ran. */
  command: string;
  notes: string[];
}

/** The first line `mirror delete --generate` writes (src/mirror/delete.ts). */
const PREDICTION_RE =
  /^# airgap mirror delete --generate: (\d+) manifest\(s\) to delete; (\d+) blob\(s\), (\d+) bytes, /;

/** The prediction in a delete-images.yaml; `undefined` (with why) when there is none to read. */
async function readPrediction(
  o: Pick<GcOptions, 'deleteYamlFile' | 'workspace'>,
): Promise<{ prediction?: GcPrediction; note?: string }> {
  const explicit = o.deleteYamlFile !== undefined;
  const file = explicit
    ? resolve(o.deleteYamlFile!)
    : o.workspace !== undefined
      ? join(resolve(o.workspace.replace(/^file:\/\//, '')), 'delete', 'delete-images.yaml')
      : undefined;
  if (!file)
    return {
      note: 'no prediction to compare with (give --workspace or --delete-yaml-file of the mirror delete)',
    };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if (!isNotFound(e)) throw e;
    if (explicit)
      throw usageError(BastionError.GC_PREDICTION_INVALID, `--delete-yaml-file ${file} does not exist`, {
        where: file,
        hint: 'give the delete-images.yaml that airgap mirror delete --generate wrote, or leave the flag out',
      });
    return {
      note: `no prediction to compare with: ${file} does not exist (no mirror delete --generate ran)`,
    };
  }
  const m = PREDICTION_RE.exec(text.split('\n', 1)[0] ?? '');
  if (!m)
    throw usageError(
      BastionError.GC_PREDICTION_INVALID,
      `${file} does not start with the line airgap mirror delete --generate writes ("# airgap mirror delete --generate: N manifest(s) to delete; B blob(s), X bytes, …")`,
      {
        where: `${file} line 1`,
        hint: 'give the delete-images.yaml that airgap mirror delete --generate wrote, unchanged in its first line',
      },
    );
  const n = (s: string) => Number(s);
  return { prediction: { file, manifests: n(m[1]!), blobs: n(m[2]!), bytes: n(m[3]!) } };
}

/** The collector's own account: "N blobs marked, B blobs and M manifests eligible for deletion" and each blob. */
function parseGcOutput(text: string): { blobs: string[]; manifests: number; counted?: number } {
  const blobs = [
    ...new Set([...text.matchAll(/blob eligible for deletion: (sha256:[0-9a-f]{64})/g)].map((m) => m[1]!)),
  ];
  const sum = /(\d+) blobs marked, (\d+) blobs and (\d+) manifests eligible for deletion/.exec(text);
  return { blobs, manifests: sum ? Number(sum[3]) : 0, ...(sum ? { counted: Number(sum[2]) } : {}) };
}

/** distribution's words when the storage holds no repository at all (a registry nothing was pushed to). */
const EMPTY_RE = /failed to mark: filesystem: Path not found: \/docker\/registry\/v2\/repositories(?:\n|$)/;

/** Whether the collector failed only because the storage has no repositories directory. */
function emptyStorage(text: string): boolean {
  return EMPTY_RE.test(text);
}

/** `podman run --rm --pull never --net none -v … image garbage-collect [--dry-run] config`. */
function gcCommand(setup: RegistrySetup, name: string, dryRun: boolean): string[] {
  return [
    '--pull',
    'never',
    '--net',
    'none',
    '--name',
    `${name}-gc`,
    ...registryMounts(setup.dir, setup.dataDir).flatMap((m) => ['-v', m]),
    setup.image,
    'garbage-collect',
    ...(dryRun ? ['--dry-run'] : []),
    IN_CONTAINER.config,
  ];
}

/** What one run of the collector named. */
interface Collected {
  blobs: string[];
  manifests: number;
  /** The storage had no repositories (nothing to mark). */
  empty: boolean;
}

/** Run the collector once; the blobs it names and whether the storage was empty. Fails with GC_FAILED. */
async function collect(
  setup: RegistrySetup,
  name: string,
  dryRun: boolean,
  timeoutMs: number,
): Promise<Collected> {
  const args = gcCommand(setup, name, dryRun);
  const r = await runOnce(args, { timeoutMs });
  const text = `${r.stdout}\n${r.stderr}`;
  if (r.exitCode !== 0) {
    if (emptyStorage(r.stderr) || emptyStorage(r.stdout)) return { blobs: [], manifests: 0, empty: true };
    const last = text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean)
      .slice(-5);
    throw new AirgapError(
      BastionError.GC_FAILED,
      `garbage-collect failed (exit ${r.exitCode}): ${last.join(' | ') || 'it printed nothing'}`,
      {
        hint: /name "?[\w.-]+-gc"? is already in use/.test(text)
          ? `a container ${name}-gc is left from an earlier collection: when none runs (podman ps), remove it (podman rm ${name}-gc) and run airgap registry gc again`
          : `see the whole output: ${shellCommand(['podman', 'run', '--rm', ...args])}`,
        details: { lastLines: last },
      },
    );
  }
  const out = parseGcOutput(text);
  return { blobs: out.blobs, manifests: out.manifests, empty: false };
}

/**
 * Whether the registry runs now (its unit active; with --dry-run where systemd is not PID 1, its
 * container). Without systemd, or without the unit, a collection refuses before changing anything.
 */
async function runningBefore(
  setup: RegistrySetup,
  name: string,
  command: string,
  dryRun: boolean,
): Promise<boolean> {
  const sd = await systemdHere();
  if (!sd.ok) {
    if (dryRun) return containerRunning(name);
    throw new AirgapError(
      BastionError.NO_SYSTEMD,
      `systemd is not running as PID 1 on this host (${sd.said}); nothing was changed`,
      {
        hint: `run airgap registry gc on the bastion itself (systemd as PID 1), where it runs: systemctl stop ${name}.service; ${command}; systemctl start ${name}.service (or count only, the registry serving: --dry-run)`,
        details: { command },
      },
    );
  }
  const state = await unitState(name);
  if (state.load === 'not-found' && !dryRun)
    throw usageError(BastionError.NOT_INSTALLED, `there is no unit ${name}.service on this host`, {
      hint: `install the registry first (airgap registry install --dir ${setup.dir}), or give --name of its unit`,
    });
  return ['active', 'activating', 'reloading'].includes(state.active);
}

/** Collect the registry's garbage (see the file comment); with dryRun only count it. */
export async function gcRegistry(o: GcOptions): Promise<GcResult> {
  const { setup, name } = await locateRegistry(o.dir, o.name);
  const { prediction, note } = await readPrediction(o);
  const say = o.report ?? (() => undefined);
  const command = shellCommand(['podman', 'run', '--rm', ...gcCommand(setup, name, !!o.dryRun)]);
  const notes: string[] = [];
  const wasRunning = await runningBefore(setup, name, command, !!o.dryRun);
  const measured = await measureStorage(setup.dataDir);
  const before = measured.stats;
  const timeoutMs = o.gcTimeoutMs ?? 2 * 3600_000;

  let found: Collected;
  let after: StorageStats | undefined;
  let eligibleBytes: number;
  if (o.dryRun) {
    say(`counting what garbage-collect would remove (the registry keeps serving): ${command}`);
    found = await collect(setup, name, true, timeoutMs);
    const sizes = sizeOf(measured.blobSizes, found.blobs);
    eligibleBytes = sizes.bytes;
    if (sizes.missing.length)
      notes.push(
        `${sizes.missing.length} blob(s) the collector named were not in the storage when measured (a push or delete meanwhile?)`,
      );
    notes.push(
      'a snapshot: a push in progress can make its blobs look unreferenced; the real run stops the registry first',
    );
  } else {
    ({ found, after } = await stopCollectStart(setup, name, wasRunning, timeoutMs, o, say));
    // The blobs are gone now: their sizes are those measured before.
    eligibleBytes = sizeOf(measured.blobSizes, found.blobs).bytes;
  }
  if (found.empty) {
    notes.push(`nothing to collect: the storage ${setup.dataDir} holds no repositories`);
    if (before.blobs > 0)
      notes.push(
        `${before.blobs} blob(s) are stored without any repository; distribution's collector cannot mark without one, so they are left`,
      );
  }
  return {
    registry: setup.address,
    name,
    dataDir: setup.dataDir,
    dryRun: !!o.dryRun,
    nothingToCollect: found.empty,
    eligible: { blobs: found.blobs.length, bytes: eligibleBytes, manifests: found.manifests },
    before,
    ...(after
      ? {
          after,
          reclaimed: {
            bytes: before.bytes - after.bytes,
            diskBytes: before.diskBytes - after.diskBytes,
            blobs: before.blobs - after.blobs,
          },
        }
      : {}),
    ...(prediction ? { prediction } : {}),
    ...(note ? { predictionNote: note } : {}),
    wasRunning,
    command,
    notes,
  };
}

/**
 * Stop the unit (and see that its container is gone), collect, measure, and start it again in any
 * case when it ran before; then wait until it answers. A failed start outranks a failed collection.
 */
async function stopCollectStart(
  setup: RegistrySetup,
  name: string,
  wasRunning: boolean,
  timeoutMs: number,
  o: GcOptions,
  say: (line: string) => void,
): Promise<{ found: Collected; after: StorageStats }> {
  const unit = `${name}.service`;
  let failure: unknown;
  let result: Awaited<ReturnType<typeof stopCollectStart>> | undefined;
  try {
    if (wasRunning) {
      say(`stopping ${unit}`);
      await systemctl('stop', unit);
    }
    if (await containerRunning(name))
      throw new AirgapError(
        BastionError.GC_FAILED,
        `the container ${name} ${wasRunning ? `still runs after systemctl stop ${unit}` : `runs though ${unit} is not active`}: the registry would take pushes while its garbage is collected; nothing was collected`,
        {
          hint: `see who runs it (podman ps; systemctl status ${unit}), stop it, and run airgap registry gc again`,
        },
      );
    say(`collecting: ${shellCommand(['podman', 'run', '--rm', ...gcCommand(setup, name, false)])}`);
    const found = await collect(setup, name, false, timeoutMs);
    result = { found, after: (await measureStorage(setup.dataDir)).stats };
  } catch (e) {
    failure = e;
  }
  if (wasRunning) {
    try {
      say(`starting ${unit}`);
      await systemctl('start', unit);
      await waitServing(setup.address, await trustedCas(setup), o.readyTimeoutMs ?? 60_000);
      say(`${setup.address} answers again`);
    } catch (e) {
      throw new AirgapError(
        BastionError.GC_RESTART_FAILED,
        `the registry ${setup.address} did not come back after the garbage collection${failure ? ` (which failed too: ${(failure as Error).message})` : ''}: ${(e as Error).message}`,
        { hint: `start it: systemctl start ${unit}; see why: journalctl -u ${unit}`, cause: e },
      );
    }
  }
  if (failure || !result) throw failure;
  return result;
}
