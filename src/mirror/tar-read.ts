/**
 * Reading tar streams that may be hostile: every tar airgap parses (image layers, the graph data,
 * chart archives, archive parts) goes through here, so that
 *
 * - a tar stops at its end: node-tar's Parser keeps every byte written after the two zero blocks
 *   that end an archive, growing one buffer by concatenation (quadratic: a small gzip layer of a
 *   valid tar and 512 MiB of zeros kept a plan busy for hours). {@link TarEnd} follows the block
 *   boundaries as the parser does and passes on nothing past the end, as GNU tar and Go's
 *   archive/tar stop there;
 * - a compressed tar is inflated with the bounds of its kind (inflate.ts), and only up to the
 *   tar's end: what a blob holds past it is read (for the caller's digest) but never inflated;
 * - compression is found from the first bytes, not trusted from a media type, and a tar that is
 *   itself compressed again is refused (node-tar would inflate it itself, unbounded).
 */
import { Transform, type TransformCallback } from 'node:stream';
import { Header, Pax, type HeaderData } from 'tar';
import { inflating, type InflateKind, type Inflater } from './inflate.js';

const BLOCK = 512;
/** node-tar's default maxMetaEntrySize: a pax or GNU long-name entry larger than this is skipped, not applied. */
const MAX_META = 1024 * 1024;
const META_TYPES = new Set([
  'ExtendedHeader',
  'OldExtendedHeader',
  'GlobalExtendedHeader',
  'NextFileHasLongPath',
  'OldGnuLongPath',
  'NextFileHasLongLinkpath',
]);
const EMPTY: Buffer = Buffer.alloc(0);
const GZIP_MAGIC = [0x1f, 0x8b];
const ZSTD_MAGIC = [0x28, 0xb5, 0x2f, 0xfd];

function startsWith(b: Buffer, magic: number[]): boolean {
  return b.length >= magic.length && magic.every((m, i) => b[i] === m);
}

/**
 * Where a tar stream ends: fed the bytes in order, it returns the part of each chunk that belongs
 * to the archive, up to and including the two zero blocks that end it, and nothing after. The
 * boundaries are followed as node-tar's Parser follows them, with its own Header and Pax classes
 * (a header block, then the entry's size rounded up to 512 bytes; the size octal or base-256, and
 * overridden by a pax `size`; pax and GNU long-name entries are entries like the others, whose data
 * is read to apply what they say to the next header; a block that is not a valid header is skipped
 * alone), so that the parser sees exactly the archive it would have read, and stops where it would
 * have stopped. A stream without the two zero blocks passes whole (node-tar, like Go, accepts it).
 */
export class TarEnd {
  /** The archive's end was seen: nothing more is passed on. */
  ended = false;
  /** Bytes passed on so far. */
  bytes = 0;
  /** A header block begun in one chunk and finished in the next. */
  private carry: Buffer | undefined;
  /** Bytes of the current entry's data (with its padding) still to pass. */
  private body = 0;
  /** The data of a pax or GNU long-name entry, collected to apply it to the next header. */
  private meta: { type: string; size: number; parts: Buffer[] } | undefined;
  /** Pending pax (`x`) or GNU long-name (`L`, `K`) values, and global pax (`g`) ones, as node-tar keeps them. */
  private ex: HeaderData | undefined;
  private gex: HeaderData | undefined;
  private sawZero = false;

  /** The part of `chunk` that belongs to the archive (all of it, or up to its end, or nothing after). */
  take(chunk: Buffer): Buffer {
    if (this.ended || chunk.length === 0) return EMPTY;
    if (this.bytes === 0 && !this.carry && (startsWith(chunk, GZIP_MAGIC) || startsWith(chunk, ZSTD_MAGIC)))
      throw new Error('it is compressed twice: the tar inside is itself gzip or zstd');
    let pos = 0;
    while (pos < chunk.length && !this.ended) {
      if (this.body > 0) {
        const n = Math.min(this.body, chunk.length - pos);
        if (this.meta) this.meta.parts.push(chunk.subarray(pos, pos + n));
        this.body -= n;
        pos += n;
        if (this.body === 0 && this.meta) this.applyMeta();
        continue;
      }
      const have = (this.carry?.length ?? 0) + chunk.length - pos;
      if (have < BLOCK) {
        this.carry = Buffer.concat([this.carry ?? EMPTY, chunk.subarray(pos)]);
        pos = chunk.length;
        break;
      }
      let block: Buffer;
      if (this.carry) {
        const need = BLOCK - this.carry.length;
        block = Buffer.concat([this.carry, chunk.subarray(pos, pos + need)]);
        this.carry = undefined;
        pos += need;
      } else {
        block = chunk.subarray(pos, pos + BLOCK);
        pos += BLOCK;
      }
      this.header(block);
    }
    this.bytes += pos;
    return pos === chunk.length ? chunk : chunk.subarray(0, pos);
  }

  /** One header block, decided as node-tar's Parser decides it (parse.js CONSUMEHEADER). */
  private header(block: Buffer): void {
    let h: Header;
    try {
      h = new Header(block, 0, this.ex, this.gex);
    } catch {
      return; // the parser skips the block (an error in strict mode)
    }
    if (h.nullBlock) {
      if (this.sawZero) this.ended = true;
      this.sawZero = true;
      return;
    }
    this.sawZero = false;
    if (!h.cksumValid || !h.path) return; // skipped alone, as the parser does
    const link = /^(Symbolic)?Link$/.test(h.type);
    if (link && !h.linkpath) return;
    if (!link && !/^(Global)?ExtendedHeader$/.test(h.type) && h.linkpath) return;
    const size = h.size ?? 0;
    this.body = BLOCK * Math.ceil(size / BLOCK);
    if (!META_TYPES.has(h.type)) this.ex = undefined;
    else if (size > 0 && size <= MAX_META) this.meta = { type: h.type, size, parts: [] };
  }

  /** What a pax or GNU long-name entry says about the next header (parse.js EMITMETA). */
  private applyMeta(): void {
    const { type, size, parts } = this.meta!;
    this.meta = undefined;
    const text = Buffer.concat(parts).subarray(0, size).toString('utf8');
    if (type === 'ExtendedHeader' || type === 'OldExtendedHeader') this.ex = Pax.parse(text, this.ex, false);
    else if (type === 'GlobalExtendedHeader') this.gex = Pax.parse(text, this.gex, true);
    else {
      const ex: HeaderData = this.ex ?? {};
      if (type === 'NextFileHasLongLinkpath') ex.linkpath = text.replace(/\0.*/, '');
      else ex.path = text.replace(/\0.*/, '');
      this.ex = ex;
    }
  }
}

/** A Transform passing a tar stream up to its end ({@link TarEnd}) and consuming, not passing, the rest. */
export function tarUntilEnd(): Transform {
  const end = new TarEnd();
  return new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
      let part: Buffer;
      try {
        part = end.take(chunk);
      } catch (e) {
        return cb(e as Error);
      }
      cb(null, part.length > 0 ? part : undefined);
    },
  });
}

/** A tar opened by {@link openTar}. */
export interface OpenedTar {
  /** The archive's bytes, inflated when the input is gzip, up to its end. */
  tar: AsyncIterable<Buffer>;
  gzip: boolean;
  /** The input had no bytes at all. */
  empty: boolean;
  /**
   * Once `tar` was read to its end: read what the input holds past the archive, neither inflated
   * nor parsed, so that whoever hashes the input (a layer's digest) sees all of it. Rejects with
   * the input's error.
   */
  rest(): Promise<void>;
  /** Stop reading (the input is closed). */
  destroy(): void;
}

/** Options of {@link openTar}. */
export interface OpenTarOptions {
  /** The limits a compressed input is inflated with. */
  kind: InflateKind;
  /** The input as messages name it (`layer sha256:… of quay.io/x/y:1`). */
  what: string;
  /** The error for a zstd-compressed input (not readable yet). */
  zstd: () => Error;
}

/**
 * Open a tar stream: gzip (inflated within the limits of `o.kind`) or plain, found from the first
 * bytes; zstd throws `o.zstd()`. Its `tar` ends at the archive's end; the caller feeds it to a
 * node-tar Parser, then calls `rest()` to read what follows when the whole input must be read.
 */
export async function openTar(input: AsyncIterable<Buffer>, o: OpenTarOptions): Promise<OpenedTar> {
  const it = input[Symbol.asyncIterator]();
  // Enough of the first bytes to tell gzip and zstd (a server may send them one at a time).
  let head: Buffer = EMPTY;
  let inputDone = false;
  while (head.length < ZSTD_MAGIC.length) {
    const n = await it.next();
    if (n.done) {
      inputDone = true;
      break;
    }
    head = head.length ? Buffer.concat([head, n.value]) : n.value;
  }
  if (startsWith(head, ZSTD_MAGIC)) {
    void it.return?.();
    throw o.zstd();
  }
  const gzip = startsWith(head, GZIP_MAGIC);
  let pending: Buffer | undefined = head.length > 0 ? head : undefined;
  const source: AsyncIterator<Buffer> = {
    next: async () => {
      if (pending) {
        const value = pending;
        pending = undefined;
        return { done: false, value };
      }
      if (inputDone) return { done: true, value: undefined };
      const n = await it.next();
      if (n.done) inputDone = true;
      return n;
    },
  };
  const inflater: Inflater | undefined = gzip ? inflating(source, o.kind, o.what) : undefined;
  const bytes = inflater ? inflater.out[Symbol.asyncIterator]() : source;
  const end = new TarEnd();
  async function* tar(): AsyncGenerator<Buffer> {
    while (!end.ended) {
      const n = await bytes.next();
      if (n.done) return;
      const part = end.take(n.value);
      if (part.length > 0) yield part;
    }
  }
  return {
    tar: tar(),
    gzip,
    empty: head.length === 0,
    async rest() {
      await inflater?.stop();
      while (!(await source.next()).done) {
        // read on, so that the caller's hash sees the whole input
      }
    },
    destroy() {
      inflater?.stop().catch(() => undefined); // moot: the input is closed
      void it.return?.()?.catch(() => undefined);
    },
  };
}
