/**
 * The progress total of a copy is the run's from its start: every image is resolved before most
 * bytes move, so the bar does not sit full with "ETA 0s" while the total keeps growing; and what
 * the total ends at is what the summary says was moved. Real registries; the engine's own events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../../lab/images.js';
import { RegistryEndpoint } from '../../../src/mirror/copy/endpoints.js';
import { CopyEngine, type CopyPair } from '../../../src/mirror/copy/engine.js';
import type { ProgressEvent } from '../../../src/util/progress.js';
import { clientFor, seedRegistry } from '../../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../../helpers/registry.js';

const MiB = 1024 * 1024;

describe('copy progress', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let built: BuiltImage[];

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    built = await seedRegistry(
      src,
      Array.from({ length: 24 }, (_, i) => ({
        repo: `prog/app${i}`,
        tag: 'v1',
        layers: [{ id: 'base', size: 256 * 1024 }, { size: MiB + i }],
      })),
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop()]);
  });

  it('knows the whole total before most bytes move, and ends at the bytes the summary moved', async () => {
    const s = new RegistryEndpoint(clientFor(src));
    const d = new RegistryEndpoint(clientFor(dst));
    // (bytes moved, total known) after every event.
    const seen: [number, number][] = [];
    let planned = 0;
    let moved = 0;
    const engine = new CopyEngine({
      parallel: 2, // few transfers at once: 24 images take many rounds of them
      progress: (e: ProgressEvent) => {
        if (e.type === 'bytes-planned') planned += e.bytes;
        if (e.type === 'bytes') moved += e.bytes;
        seen.push([moved, planned]);
      },
    });
    const pairs: CopyPair[] = built.map((b) => ({
      source: { endpoint: s, repo: b.repo, ref: b.tag! },
      dest: { endpoint: d, repo: b.repo, ref: b.tag! },
    }));
    const summary = await engine.run(pairs);
    expect(summary.failed).toBe(0);
    expect(planned).toBe(summary.bytes);
    // By the time a quarter of the bytes had moved, the whole total was known.
    const quarter = seen.find(([m]) => m >= planned / 4)!;
    expect(quarter[1]).toBe(planned);
    await Promise.all([s.close(), d.close()]);
  }, 60_000);
});
