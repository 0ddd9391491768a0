/**
 * Every decompression of input airgap did not make itself is bounded by what may come out of it:
 * an absolute limit and a ratio limit, both named by the kind of input ({@link INFLATE_LIMITS}). A
 * decompression that goes past either stops there (nothing past the limit is ever held) with
 * MIRROR_INFLATE_LIMIT, whose message names the input and says which limit it went past:
 *
 *   layer sha256:… of quay.io/x/y:1 inflates past 8 GiB (the limit for an image layer)
 *   layer sha256:… of quay.io/x/y:1 inflates more than 200× its first 320 KiB (the limit for an image layer)
 *
 * The ratio limit only applies once `ratioFrom` bytes have come out: a small input may inflate far,
 * proportionally, without costing anything. Three ways in, one set of limits and one error:
 * {@link inflating} (a gzip stream, read as it inflates), {@link inflateSync} (a gzip buffer held
 * in memory) and {@link inflateCap} (a decompressor that only takes a size limit, as OpenPGP.js).
 */
import { createGunzip, gunzipSync } from 'node:zlib';
import { AirgapError } from '../util/errors.js';
import { MirrorError } from './errors.js';

/** The kinds of compressed input airgap reads. */
export type InflateKind = 'layer' | 'graph-data' | 'chart' | 'signature' | 'inventory';

export interface InflateLimit {
  /** The kind as messages name it: "the limit for an image layer". */
  label: string;
  /** The most it may inflate to, in bytes. */
  max: number;
  /** The most it may inflate per compressed byte, once past `ratioFrom`. */
  ratio: number;
  /** How much may come out before the ratio applies. */
  ratioFrom: number;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/**
 * The limits, by kind. The ratios: deflate cannot pass ~1032× (a run of zeros); binaries and OS
 * layers inflate 2–5×, JSON and YAML 10–30×, a tar of many small files up to ~50× (each file is
 * padded to 512 bytes). 200× leaves room over all of these and stops a stream of zeros within its
 * first megabytes past `ratioFrom`. The absolute limits follow what each input really is.
 */
export const INFLATE_LIMITS: Readonly<Record<InflateKind, Readonly<InflateLimit>>> = {
  /**
   * A layer of a release payload, of a catalog image (hundreds of MiB of FBC JSON, the opm binary,
   * the RHEL base) or of a graph-data image. 8 GiB is far above any of these; the ratio is what
   * stops a bomb early. A layer that is mostly zeros (a sparse file stored whole) would also be
   * refused, and the images read here have none.
   */
  layer: { label: 'an image layer', max: 8 * GiB, ratio: 200, ratioFrom: 64 * MiB },
  /** The update service's graph-data tarball (a few MiB compressed, tens of MiB as a tar). */
  'graph-data': { label: 'the graph data', max: 1 * GiB, ratio: 200, ratioFrom: 64 * MiB },
  /** A Helm chart archive: the 100 MiB a chart may unpack to with its subcharts (helm/archive.ts). */
  chart: { label: 'a chart archive', max: 100 * MiB, ratio: 200, ratioFrom: 8 * MiB },
  /**
   * A GPG signature's OpenPGP message, whose literal data (a simple-signing document of ~1 KiB) is
   * compressed: 1 MiB is a thousand times what one holds.
   */
  signature: { label: 'a signature', max: 1 * MiB, ratio: 200, ratioFrom: 64 * KiB },
  /**
   * A registry inventory (mirror/inventory/format.ts): digests compress about 2×, the JSON around
   * them more; 512 MiB is the limit of the file itself.
   */
  inventory: { label: 'a registry inventory', max: 512 * MiB, ratio: 200, ratioFrom: 8 * MiB },
};

/** `256 KiB`, `1 MiB`, `1.5 GiB`. */
function sizeText(n: number): string {
  const units: [number, string][] = [
    [GiB, 'GiB'],
    [MiB, 'MiB'],
    [KiB, 'KiB'],
  ];
  for (const [u, name] of units) if (n >= u) return `${Number((n / u).toFixed(1))} ${name}`;
  return `${n} bytes`;
}

/** Options of a bound: a tighter absolute limit than the kind's, and why (for the message). */
export interface BoundOptions {
  /** A tighter absolute limit (what is left of a budget shared with other inputs). */
  max?: number;
  /** What that tighter limit is, for the message ("what is left of the 100 MiB a chart may unpack to"). */
  maxWhy?: string;
}

/** Counts what goes into and comes out of one decompression, and refuses past the limits. */
class InflateBound {
  /** Compressed bytes read so far. */
  in = 0;
  /** Bytes that came out so far. */
  out = 0;
  readonly limit: Readonly<InflateLimit>;
  private readonly max: number;

  constructor(
    readonly kind: InflateKind,
    /** The input, as messages name it: `layer sha256:… of quay.io/x/y:1`. */
    readonly what: string,
    private readonly opts: BoundOptions = {},
  ) {
    this.limit = INFLATE_LIMITS[kind];
    this.max = Math.min(this.limit.max, opts.max ?? Infinity);
  }

  /** The most that may come out of `compressed` bytes of input. */
  allowed(compressed = this.in): number {
    return Math.min(this.max, Math.max(this.limit.ratioFrom, this.limit.ratio * compressed));
  }

  read(n: number): void {
    this.in += n;
  }

  /** Count bytes that came out; throws MIRROR_INFLATE_LIMIT once past the limits. */
  wrote(n: number): void {
    this.out += n;
    if (this.out > this.allowed()) throw this.refused(false);
  }

  /**
   * The error for an output past the limits (`this.out`, or more than {@link allowed} when the
   * decompressor only says it stopped): the absolute limit when it was the one reached, else the
   * ratio. `whole`: the input was read whole (not "its first …").
   */
  refused(whole: boolean): AirgapError {
    const out = Math.max(this.out, this.allowed() + 1);
    const l = this.limit;
    const absolute = this.allowed() >= this.max;
    const why = absolute
      ? this.max < l.max
        ? `past ${sizeText(this.max)} (${this.opts.maxWhy ?? `what is left of the ${sizeText(l.max)} limit for ${l.label}`})`
        : `past ${sizeText(this.max)} (the limit for ${l.label})`
      : `more than ${l.ratio}× its ${whole ? '' : 'first '}${sizeText(this.in)} (the limit for ${l.label})`;
    return new AirgapError(MirrorError.MIRROR_INFLATE_LIMIT, `${this.what} inflates ${why}`, {
      hint: `no real ${l.label.replace(/^(an?|the) /, '')} comes near this: the source does not serve what it claims (a decompression bomb?); check where it comes from`,
      details: {
        kind: this.kind,
        limit: absolute ? 'size' : 'ratio',
        compressedBytes: this.in,
        inflatedBytes: out,
        maxBytes: this.max,
        maxRatio: l.ratio,
      },
    });
  }
}

/** A gzip stream being inflated: see {@link inflating}. */
export interface Inflater {
  /** The inflated bytes. Throws MIRROR_INFLATE_LIMIT past the limits, and the source's errors. */
  out: AsyncIterable<Buffer>;
  /**
   * Stop inflating. Resolves once nothing here reads the source any more (the caller may read on
   * from it: what it holds past this point is never inflated), or rejects with the source's error.
   */
  stop(): Promise<void>;
}

/** Resolves on the stream's 'drain' or 'close', whichever comes first. */
function drainedOrClosed(s: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      s.off('drain', done).off('close', done);
      resolve();
    };
    s.on('drain', done).on('close', done);
  });
}

/**
 * Inflate the gzip bytes of `source` as they are read, bounded by the limits of `kind`. The source
 * is read with `next()` only, never closed here, so a caller that stops early (the tar ended) can
 * read the rest of it on (to hash it) once {@link Inflater.stop} resolves. Backpressure holds: no
 * more is inflated than the reader of `out` takes, and nothing past the limit is ever produced.
 */
export function inflating(source: AsyncIterator<Buffer>, kind: InflateKind, what: string): Inflater {
  const bound = new InflateBound(kind, what);
  const z = createGunzip();
  z.on('error', () => undefined); // reaches the reader of `out` (or stop()), never the process
  let failed: { error: unknown } | undefined;
  const pump = (async () => {
    try {
      for (;;) {
        if (z.destroyed) return;
        const next = await source.next();
        if (z.destroyed) return;
        if (next.done) return void z.end();
        bound.read(next.value.length);
        if (!z.write(next.value)) await drainedOrClosed(z);
      }
    } catch (e) {
      failed = { error: e };
      z.destroy(e as Error);
    }
  })();
  async function* out(): AsyncGenerator<Buffer> {
    try {
      for await (const chunk of z as AsyncIterable<Buffer>) {
        bound.wrote(chunk.length);
        yield chunk;
      }
    } finally {
      z.destroy();
    }
  }
  return {
    out: out(),
    async stop() {
      z.destroy();
      await pump;
      if (failed) throw failed.error;
    },
  };
}

/** Inflate a gzip buffer held in memory, bounded by the limits of `kind` (and `opts.max`). */
export function inflateSync(bytes: Buffer, kind: InflateKind, what: string, opts: BoundOptions = {}): Buffer {
  const bound = new InflateBound(kind, what, opts);
  bound.read(bytes.length);
  try {
    return gunzipSync(bytes, { maxOutputLength: Math.max(1, bound.allowed()) });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError)
      throw bound.refused(true);
    throw e;
  }
}

/**
 * For a decompressor that takes only a size limit (OpenPGP.js's `maxDecompressedMessageSize`):
 * the limit for `compressed` bytes of input (the ratio made absolute), and the error to give when
 * the decompressor says it was reached.
 */
export function inflateCap(
  kind: InflateKind,
  what: string,
  compressed: number,
): { max: number; refused(): AirgapError } {
  const bound = new InflateBound(kind, what);
  bound.read(compressed);
  return { max: bound.allowed(), refused: () => bound.refused(true) };
}
