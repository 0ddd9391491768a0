/**
 * The one bound on decompression (src/mirror/inflate.ts): a ratio limit and an absolute limit per
 * kind of input, the error saying which was exceeded and naming the input, and nothing inflated
 * (nor read) far past the limit.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/mirror/errors.js';
import {
  INFLATE_LIMITS,
  inflateCap,
  inflateSync,
  inflating,
  type InflateKind,
} from '../../src/mirror/inflate.js';
import { AirgapError } from '../../src/util/errors.js';

const MiB = 1024 * 1024;
/** One gzip member of 1 MiB of zeros (~1 KiB): members concatenated are one gzip stream. */
const ZEROS = gzipSync(Buffer.alloc(MiB));

/** `n` bytes that gzip about 4× (random letters of four): never near a ratio limit. */
function dna(n: number): Buffer {
  const b = randomBytes(n);
  for (let i = 0; i < n; i++) b[i] = 'ACGT'.charCodeAt(b[i]! & 3);
  return b;
}

/** Inflate `source` with `kind`'s limits; what came out, and the error if it stopped. */
async function run(
  source: AsyncIterable<Buffer> | Buffer[],
  kind: InflateKind,
): Promise<{ out: number; error?: AirgapError }> {
  const it = Array.isArray(source) ? Readable.from(source) : source;
  const inflater = inflating(it[Symbol.asyncIterator](), kind, 'layer sha256:abc of x/y:1');
  let out = 0;
  try {
    for await (const c of inflater.out) out += c.length;
    await inflater.stop();
    return { out };
  } catch (e) {
    await inflater.stop().catch(() => undefined);
    return { out, error: e as AirgapError };
  }
}

describe('inflating (a gzip stream)', () => {
  it('stops a stream of zeros at the ratio limit, and says so, naming the input', async () => {
    let read = 0;
    async function* bomb() {
      for (;;) {
        read += ZEROS.length;
        yield ZEROS; // never ends: 1 MiB of zeros per KiB read
      }
    }
    const { out, error } = await run(bomb(), 'layer');
    expect(error).toBeInstanceOf(AirgapError);
    expect(error!.code).toBe(MirrorError.MIRROR_INFLATE_LIMIT);
    expect(error!.message).toMatch(
      /^layer sha256:abc of x\/y:1 inflates more than 200× its first \d+(\.\d)? KiB \(the limit for an image layer\)$/,
    );
    expect(error!.details).toMatchObject({ kind: 'layer', limit: 'ratio', maxRatio: 200 });
    // The ratio applies past 64 MiB; nothing much past it came out, or was read: what 64 MiB took
    // (64 chunks) and at most what the streams buffer ahead (Node 22+: 64 KiB each side).
    expect(out).toBeGreaterThanOrEqual(64 * MiB);
    expect(out).toBeLessThan(65 * MiB);
    expect(read).toBeLessThan(64 * ZEROS.length + 2 * 64 * 1024);
  });

  it('stops at the absolute limit when the ratio is fine, and says that', async () => {
    const data = gzipSync(dna(2 * MiB));
    const { out, error } = await run([data], 'signature');
    expect(error!.code).toBe(MirrorError.MIRROR_INFLATE_LIMIT);
    expect(error!.message).toBe('layer sha256:abc of x/y:1 inflates past 1 MiB (the limit for a signature)');
    expect(error!.details).toMatchObject({ limit: 'size', maxBytes: MiB });
    expect(out).toBeLessThanOrEqual(MiB + 64 * 1024);
  });

  it('passes what real content inflates to (JSON ~30×) whole', async () => {
    const json = Buffer.from(
      JSON.stringify(
        Array.from({ length: 20000 }, (_, i) => ({ schema: 'olm.bundle', name: `op.v${i}`, package: 'op' })),
      ),
    );
    const gz = gzipSync(json);
    expect(json.length / gz.length).toBeGreaterThan(20);
    const { out, error } = await run([gz], 'layer');
    expect(error).toBeUndefined();
    expect(out).toBe(json.length);
  });

  it('says the error of the source, and of a corrupt gzip', async () => {
    async function* broken() {
      yield ZEROS.subarray(0, 100);
      throw new Error('the connection was reset');
    }
    expect((await run(broken(), 'layer')).error?.message).toBe('the connection was reset');
    const corrupt = Buffer.from(ZEROS);
    corrupt.fill(0xff, 20, 60);
    expect((await run([corrupt], 'layer')).error?.message).toMatch(/invalid|incorrect|unknown/i);
  });
});

describe('inflateSync (a gzip buffer)', () => {
  it('refuses past the ratio and past the absolute limit, saying which', () => {
    const zeros = Buffer.concat(Array<Buffer>(16).fill(ZEROS)); // 16 MiB from 16 KiB
    const e = (() => {
      try {
        inflateSync(zeros, 'chart', 'the chart archive x.tgz');
      } catch (err) {
        return err as AirgapError;
      }
    })();
    expect(e?.code).toBe(MirrorError.MIRROR_INFLATE_LIMIT);
    expect(e?.message).toMatch(
      /^the chart archive x\.tgz inflates more than 200× its 16(\.\d)? KiB \(the limit for a chart archive\)$/,
    );
    expect(() => inflateSync(gzipSync(dna(2 * MiB)), 'signature', 'sig')).toThrow(
      'sig inflates past 1 MiB (the limit for a signature)',
    );
    expect(() =>
      inflateSync(gzipSync(dna(2 * MiB)), 'chart', 'c', { max: MiB, maxWhy: 'what is left of the budget' }),
    ).toThrow('c inflates past 1 MiB (what is left of the budget)');
    expect(inflateSync(gzipSync(Buffer.from('hello')), 'chart', 'c').toString()).toBe('hello');
  });
});

describe('inflateCap (a decompressor that takes a size only)', () => {
  it('turns the ratio into a size for this input, and its error says which limit', () => {
    // A real signature (~1 KiB): 200× it; at least 64 KiB.
    expect(inflateCap('signature', 'it', 100).max).toBe(INFLATE_LIMITS.signature.ratioFrom);
    expect(inflateCap('signature', 'it', 1024).max).toBe(200 * 1024);
    expect(inflateCap('signature', 'it', 1024).refused().message).toBe(
      'it inflates more than 200× its 1 KiB (the limit for a signature)',
    );
    // A quarter MiB: the 1 MiB limit applies first.
    expect(inflateCap('signature', 'it', 256 * 1024).max).toBe(MiB);
    expect(inflateCap('signature', 'it', 256 * 1024).refused().message).toBe(
      'it inflates past 1 MiB (the limit for a signature)',
    );
  });
});
