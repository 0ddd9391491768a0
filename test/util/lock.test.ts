/**
 * The workspace lock under contention, with real processes: three runs that start together, many
 * times over (some rounds starting from a stale lock they all race to take over), never hold it at
 * once; a holder killed with -9 is taken over; a pid now used by a later process does not hold it.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CommonError } from '../../src/util/errors.js';
import { lockDirectory, processStart } from '../../src/util/lock.js';
import { tempDir } from '../helpers/fixtures.js';
import { rejection } from '../helpers/realdata.js';

const LOCK = pathToFileURL(resolve('dist/util/lock.js')).href;

/**
 * A child that, at each round's start time, takes the lock, proves it is alone by creating a
 * marker file exclusively, holds it a moment, and lets go. The first child seeds a stale lock (a
 * dead pid) before every other round. It prints how many rounds it held and any overlap.
 */
const CHILD = `
import { openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
const { lockDirectory } = await import(process.argv[2]);
const [dir, rounds, t0, who] = [process.argv[3], Number(process.argv[4]), Number(process.argv[5]), Number(process.argv[6])];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let held = 0, overlaps = 0;
for (let i = 0; i < rounds; i++) {
  const at = t0 + i * 30;
  if (who === 0 && i % 2 === 1) {
    await sleep(Math.max(0, at - 12 - Date.now()));
    try { writeFileSync(dir + '/.airgap.lock', '2147483 1\\n', { flag: 'wx' }); } catch {}
  }
  await sleep(Math.max(0, at - Date.now()));
  let release;
  try { release = await lockDirectory(dir); } catch (e) { if (e.code !== 'WORKSPACE_BUSY') throw e; continue; }
  try { closeSync(openSync(dir + '/holder', 'wx')); } catch { overlaps++; }
  held++;
  await sleep(4);
  rmSync(dir + '/holder', { force: true });
  await release();
}
console.log(JSON.stringify({ held, overlaps }));
`;

async function runChild(script: string, args: string[]): Promise<{ held: number; overlaps: number }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const [code] = await once(child, 'exit');
  expect(code).toBe(0);
  return JSON.parse(out.trim());
}

describe('the workspace lock', () => {
  it('three runs started together, 200 times: never two holders, stale locks taken over once', async () => {
    const dir = await tempDir('airgap-lock-');
    const ws = join(dir, 'ws');
    await mkdir(ws);
    const script = join(dir, 'child.mjs');
    await writeFile(script, CHILD);
    const t0 = Date.now() + 1500; // every child is up before the first round
    const rounds = 200;
    const results = await Promise.all(
      [0, 1, 2].map((who) => runChild(script, [LOCK, ws, String(rounds), String(t0), String(who)])),
    );
    expect(results.map((r) => r.overlaps)).toEqual([0, 0, 0]);
    // Rounds went on: a stale lock never blocks one (a later starter may take it after a release).
    const held = results.reduce((a, r) => a + r.held, 0);
    expect(held).toBeGreaterThanOrEqual(rounds * 0.95);
  }, 60_000);

  it('a holder killed with -9 is taken over; a live holder is named', async () => {
    const dir = await tempDir('airgap-lock-kill-');
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { lockDirectory } = await import(${JSON.stringify(LOCK)}); await lockDirectory(${JSON.stringify(dir)}); console.log('held'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await once(holder.stdout, 'data');
    const busy = await rejection(lockDirectory(dir));
    expect(busy.code).toBe(CommonError.WORKSPACE_BUSY);
    expect(busy.message).toContain(`pid ${holder.pid}`);
    holder.kill('SIGKILL');
    await once(holder, 'exit');
    const release = await lockDirectory(dir);
    expect((await readFile(join(dir, '.airgap.lock'), 'utf8')).split(/\s/)[0]).toBe(String(process.pid));
    await release();
  }, 30_000);

  it('a pid that now belongs to a process started later does not hold the lock', async () => {
    const dir = await tempDir('airgap-lock-reuse-');
    // The parent's pid is alive, but the lock says it started at another time: a reused pid.
    const start = processStart(process.ppid);
    expect(start).toBeDefined();
    await writeFile(join(dir, '.airgap.lock'), `${process.ppid} ${start! + 1}\n`);
    const release = await lockDirectory(dir);
    await release();
    // The same pid with its real start time holds it.
    await writeFile(join(dir, '.airgap.lock'), `${process.ppid} ${start}\n`);
    await expect(lockDirectory(dir)).rejects.toMatchObject({ code: CommonError.WORKSPACE_BUSY });
  });
});
