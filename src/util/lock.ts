import { open, readFile, rm } from 'node:fs/promises';
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
 * Take `<dir>/.airgap.lock` for this process, so two runs never write one workspace at once. A
 * lock left by a process that no longer exists (kill -9) is taken over. Returns the release function.
 */
export async function lockDirectory(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, '.airgap.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(path, 'wx');
      await fh.writeFile(String(process.pid));
      await fh.close();
      return () => rm(path, { force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const pid = Number((await readFile(path, 'utf8').catch(() => '')).trim());
      if (pid > 0 && pid !== process.pid && processAlive(pid)) {
        throw usageError(CommonError.WORKSPACE_BUSY, `another airgap run (pid ${pid}) is using ${dir}`, {
          hint: 'wait for it to finish, or give this run its own --workspace / destination directory',
        });
      }
      await rm(path, { force: true }); // stale: its owner is gone
    }
  }
  throw usageError(CommonError.WORKSPACE_BUSY, `cannot lock ${dir}`, {
    hint: `remove ${path} if no airgap run is active`,
  });
}
