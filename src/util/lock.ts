import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { usageError, CommonError } from './errors.js';

/** Whether a process exists (EPERM: it exists but belongs to someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When a process started, in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined
 * where /proc does not tell (another system, the process gone). With the pid it names one process:
 * a pid reused by a later process has a later start.
 */
export function processStart(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (e) {
    // Gone, or no /proc here: both mean "cannot tell", which the caller weighs with processAlive.
    if (['ENOENT', 'ESRCH', 'ENOTDIR'].includes((e as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw e;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count from after it.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const start = Number(fields[19]);
  return Number.isFinite(start) ? start : undefined;
}

/** What a lock file holds: its owner, and when that owner started. */
interface LockOwner {
  pid: number;
  start?: number;
}

function ownerText(): string {
  const start = processStart(process.pid);
  return `${process.pid}${start !== undefined ? ` ${start}` : ''}\n`;
}

function parseOwner(text: string): LockOwner | undefined {
  const [pid, start] = text.trim().split(/\s+/).map(Number);
  if (!pid || !Number.isSafeInteger(pid) || pid <= 0) return undefined;
  return { pid, ...(start !== undefined && Number.isFinite(start) ? { start } : {}) };
}

/** Whether the owner a lock names still runs: that pid is alive and (where /proc tells) the same process. */
function ownerAlive(o: LockOwner): boolean {
  if (!processAlive(o.pid)) return false;
  if (o.start === undefined) return true;
  const now = processStart(o.pid);
  return now === undefined || now === o.start;
}

/**
 * Put a file holding `text` at `path` only if nothing is there: written whole to a temp file, then
 * hard-linked into place (atomic: a reader never sees it empty or half written). False when taken.
 */
async function placeExclusive(path: string, text: string): Promise<boolean> {
  const tmp = `${path}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(tmp, text);
  try {
    await link(tmp, path);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  } finally {
    await rm(tmp, { force: true });
  }
}

/** The owner of the lock at `path`; undefined when there is none (ENOENT only). */
async function readOwner(path: string): Promise<{ text: string; owner?: LockOwner } | undefined> {
  try {
    const text = await readFile(path, 'utf8');
    return { text, ...(parseOwner(text) ? { owner: parseOwner(text)! } : {}) };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Remove a stale lock, one taker at a time: the taker holds `<lock>.takeover` (placed the same
 * atomic way), reads the lock again, and removes it only if it is still the stale one it saw. So
 * two runs that both find a lock stale never remove the one the other has just placed.
 */
async function removeStale(path: string, seen: string): Promise<void> {
  const guard = `${path}.takeover`;
  if (!(await placeExclusive(guard, ownerText()))) {
    const g = await readOwner(guard);
    // A taker killed mid-takeover leaves its guard: gone with its owner.
    if (g && (!g.owner || !ownerAlive(g.owner))) await rm(guard, { force: true });
    return;
  }
  try {
    const now = await readOwner(path);
    if (now?.text === seen) await rm(path, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

/**
 * Take `<dir>/.airgap.lock` for this process, so two runs never write one workspace at once. The
 * lock file holds the owner's pid and start time from the moment it exists. A lock whose owner is
 * gone (kill -9), or whose pid now belongs to a process started later, is taken over. Returns the
 * release function.
 */
export async function lockDirectory(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, '.airgap.lock');
  const mine = ownerText();
  for (let attempt = 0; attempt < 50; attempt++) {
    if (await placeExclusive(path, mine)) {
      return async () => {
        // Release only our own lock.
        if ((await readOwner(path))?.text === mine) await rm(path, { force: true });
      };
    }
    const held = await readOwner(path);
    if (!held) continue; // released in between: try again
    if (held.owner && ownerAlive(held.owner) && held.owner.pid !== process.pid) {
      throw usageError(
        CommonError.WORKSPACE_BUSY,
        `another airgap run (pid ${held.owner.pid}) is using ${dir}`,
        {
          hint: 'wait for it to finish, or give this run its own --workspace / destination directory',
        },
      );
    }
    await removeStale(path, held.text);
    await sleep(5 + Math.random() * 20);
  }
  throw usageError(CommonError.WORKSPACE_BUSY, `cannot lock ${dir}`, {
    hint: `remove ${path} if no airgap run is active`,
  });
}
