/**
 * Sources that stop answering, through the real CLI: a registry that accepts requests and never
 * answers, one whose blob stops after a few bytes, one that drip-feeds a byte at a time. Each run
 * uses `--stall-timeout 1`, so what takes minutes with the defaults takes seconds here. The user
 * must see which source is not answering, the run must end in bounded time with a non-zero exit,
 * and the images of other registries must still be mirrored.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/mirror/errors.js';
import { airgap } from '../helpers/cli.js';
import { tempDir, writeIsc } from '../helpers/fixtures.js';
import { startHostileRegistry, type HostileRegistry } from '../helpers/hostile-registry.js';

interface Report {
  summary?: { images: { source: string; status: string; error?: { code: string; message: string } }[] };
}

describe('sources that stop answering', () => {
  let good: HostileRegistry;
  let bad: HostileRegistry;
  let dir: string;
  const layer = Buffer.alloc(64 * 1024, 'L');

  beforeAll(async () => {
    [good, bad] = await Promise.all([startHostileRegistry(), startHostileRegistry()]);
    dir = await tempDir();
    good.image('fine/app', 'v1', Buffer.from('a layer that arrives'));
    // Never answers its manifest, nor its blob: the registry goes silent.
    bad.manifest('silent/app', 'v1', { stall: true });
    bad.image('silent/blob', 'v1', layer, { stall: true });
    // Sends the headers and a few bytes of the layer, then nothing.
    bad.image('stops/app', 'v1', layer, { trickle: { bytes: layer, fast: 1000, intervalMs: 3_600_000 } });
    // A byte every 100 ms: never silent long enough for a deadline, far below the minimum rate.
    bad.image('drip/app', 'v1', layer, { trickle: { bytes: layer, intervalMs: 100 } });
  });

  afterAll(async () => {
    await Promise.all([good?.stop(), bad?.stop()]);
  });

  /** Mirror the fine image and `refs` of the bad registry to disk; the report and what was printed. */
  const mirror = async (name: string, refs: string[]) => {
    const isc = await writeIsc(
      dir,
      [`${good.host}/fine/app:v1`, ...refs.map((r) => `${bad.host}/${r}`)],
      [],
      `${name}.yaml`,
    );
    const started = Date.now();
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      `file://${join(dir, name)}`,
      '--stall-timeout',
      '1',
      '--ca-file',
      good.caFile,
      '--json',
    ]);
    const elapsed = Date.now() - started;
    const images = (JSON.parse(r.stdout) as Report).summary?.images ?? [];
    const bySource = (s: string) => images.find((i) => i.source.startsWith(s));
    return { r, elapsed, images, bySource };
  };

  it('a blob that stops after its first bytes fails its image alone, naming the source; the others are mirrored', async () => {
    const { r, elapsed, bySource } = await mirror('stops', ['stops/app:v1']);
    expect(r.exitCode).toBe(1);
    expect(bySource(`${good.host}/fine/app`)?.status).not.toBe('failed');
    const failed = bySource(`${bad.host}/stops/app`);
    expect(failed?.status).toBe('failed');
    expect(failed?.error?.code).toBe(MirrorError.MIRROR_SOURCE_STALLED);
    expect(failed?.error?.message).toContain(`${bad.host}/stops/app`);
    expect(failed?.error?.message).toContain('no bytes for 1 s');
    // The user was told, while it happened, which registry is not answering.
    expect(r.stderr).toContain(`${bad.host} is not answering`);
    // Two stalls of 1 s and a short backoff, not minutes.
    expect(elapsed).toBeLessThan(20_000);
  }, 60_000);

  it('a drip-feeding source is cut off below the minimum rate', async () => {
    const { r, elapsed, bySource } = await mirror('drip', ['drip/app:v1']);
    expect(r.exitCode).toBe(1);
    expect(bySource(`${good.host}/fine/app`)?.status).not.toBe('failed');
    const failed = bySource(`${bad.host}/drip/app`);
    expect(failed?.error?.code).toBe(MirrorError.MIRROR_SOURCE_STALLED);
    expect(failed?.error?.message).toMatch(/below the minimum 1(\.0)? KiB\/s/);
    expect(elapsed).toBeLessThan(20_000);
  }, 60_000);

  it('a registry that answers nothing is given up after three stalls; each of its images says so', async () => {
    const { r, elapsed, images, bySource } = await mirror('silent', ['silent/app:v1', 'silent/blob:v1']);
    expect(r.exitCode).toBe(1);
    expect(bySource(`${good.host}/fine/app`)?.status).not.toBe('failed');
    const out = `${r.stdout}\n${r.stderr}`;
    expect(out).toContain(`gave up on ${bad.host}: it stopped answering`);
    expect(out).toContain('--stall-timeout');
    const theirs = images.filter((i) => i.source.startsWith(bad.host));
    expect(theirs.length).toBe(2);
    expect(theirs.every((i) => i.status === 'failed')).toBe(true);
    expect(elapsed).toBeLessThan(20_000);
  }, 60_000);
});
