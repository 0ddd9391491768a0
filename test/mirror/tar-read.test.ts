/**
 * The tar reader every site parses through (src/mirror/tar-read.ts): it passes a tar on up to its
 * end (the two zero blocks) and nothing after, following block boundaries exactly as node-tar's
 * Parser does (pax and GNU long names, base-256 and pax sizes), so the parser reads the same
 * archive as before and stops where GNU tar and Go's archive/tar stop.
 */
import { createHash, randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { Header, Parser, Pax, type ReadEntry } from 'tar';
import { describe, expect, it } from 'vitest';
import { writeTar } from '../../src/mirror/openshift/tar-writer.js';
import { openTar, TarEnd, tarUntilEnd } from '../../src/mirror/tar-read.js';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

const MiB = 1024 * 1024;

/** What a strict node-tar Parser reads from these bytes: each entry's path, type, size and content hash. */
async function parse(chunks: AsyncIterable<Buffer> | Buffer[]): Promise<string[]> {
  const out: string[] = [];
  const parser = new Parser({ strict: true });
  let error: unknown;
  parser.on('error', (e: unknown) => (error ??= e));
  parser.on('entry', (e: ReadEntry) => {
    const h = createHash('sha256');
    e.on('data', (c: Buffer) => h.update(c));
    e.on('end', () => out.push(`${e.path} ${e.type} ${e.size} ${h.digest('hex').slice(0, 12)}`));
  });
  for await (const c of chunks) parser.write(c);
  await new Promise<void>((resolve) => parser.end(resolve));
  if (error) throw error;
  return out;
}

/** `bytes` cut into chunks of random sizes (1 byte to 3 blocks). */
function chunked(bytes: Buffer, seed = 1): Buffer[] {
  const out: Buffer[] = [];
  let s = seed;
  for (let i = 0; i < bytes.length;) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const n = 1 + (s % 1536);
    out.push(bytes.subarray(i, i + n));
    i += n;
  }
  return out;
}

/** Everything TarEnd passes on from these chunks, and whether it saw the end. */
function through(chunks: Buffer[]): { passed: Buffer; ended: boolean } {
  const end = new TarEnd();
  const parts = chunks.map((c) => end.take(c));
  return { passed: Buffer.concat(parts), ended: end.ended };
}

/** A 512-byte header block, with `patch` applied before the checksum is written again. */
function headerBlock(fields: ConstructorParameters<typeof Header>[0], patch?: (b: Buffer) => void): Buffer {
  const b = Buffer.alloc(512);
  new Header(fields).encode(b, 0);
  if (patch) {
    patch(b);
    b.fill(0x20, 148, 156);
    let sum = 0;
    for (const x of b) sum += x;
    b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  }
  return b;
}

const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);
const file = (path: string, data: Buffer) => ({ path, type: 'File' as const, data });

describe('TarEnd', () => {
  const tar = writeTar([
    { path: 'a/', type: 'Directory' },
    file('a/one.txt', Buffer.from('one\n')),
    // A name over 100 bytes: a pax header. Its data starts with two zero blocks, as the data of every
    // entry below: a reader that lost the block boundaries would take them for the end.
    file(`a/${'long-name-'.repeat(20)}.json`, Buffer.concat([Buffer.alloc(1024), randomBytes(2000)])),
    file('a/empty', Buffer.alloc(0)),
    file('a/zeros', Buffer.alloc(4096)), // blocks of zeros inside an entry are data, not the end
  ]);

  it('passes a tar up to its two zero blocks and nothing after, however it is cut', async () => {
    const tail = Buffer.concat([Buffer.alloc(10240), randomBytes(5000)]);
    const whole = Buffer.concat([tar, tail]);
    for (const seed of [1, 2, 3]) {
      const { passed, ended } = through(chunked(whole, seed));
      expect(ended).toBe(true);
      expect(passed.equals(tar)).toBe(true);
    }
    expect(
      through(
        whole
          .toString('latin1')
          .split('')
          .map((c) => Buffer.from(c, 'latin1')),
      ).passed,
    ).toEqual(tar);
    // What follows the end is never parsed: random bytes there are no error (GNU tar, Go).
    expect(await parse([through([whole]).passed])).toEqual(await parse([tar]));
  });

  it('follows pax long names, GNU long names, and pax and base-256 sizes as node-tar does', async () => {
    // Two zero blocks first: a reader that lost the block boundaries would take them for the end.
    const data = Buffer.concat([Buffer.alloc(1024), randomBytes(476)]);
    const gnuName = `dir/${'gnu-'.repeat(40)}name`;
    const gnu = Buffer.from(`${gnuName}\0`);
    const entries = Buffer.concat([
      // A GNU long name (`L`): its data is the path of the next entry, whose own name is empty.
      headerBlock({ path: '././@LongLink', type: 'NextFileHasLongPath', size: gnu.length, mode: 0o644 }),
      gnu,
      pad(gnu.length),
      headerBlock({ path: '', type: 'File', size: data.length, mode: 0o644 }),
      data,
      pad(data.length),
      // A pax `size` overrides the header's (0 here).
      new Pax({ path: 'pax-sized', size: data.length } as never).encode(),
      headerBlock({ path: 'pax-sized', type: 'File', size: 0, mode: 0o644 }),
      data,
      pad(data.length),
      // A base-256 size (the form of sizes over 8 GiB): 0x80 then the size, big-endian.
      headerBlock({ path: 'base256', type: 'File', size: 0, mode: 0o644 }, (b) => {
        b.fill(0, 124, 136);
        b[124] = 0x80;
        b.writeUInt32BE(data.length, 132);
      }),
      data,
      pad(data.length),
      Buffer.alloc(1024),
    ]);
    const listing = await parse([entries]);
    expect(listing.map((l) => l.split(' ').slice(0, 3).join(' '))).toEqual([
      `${gnuName} File 1500`,
      'pax-sized File 1500',
      'base256 File 1500',
    ]);
    const withTail = Buffer.concat([entries, randomBytes(2048)]);
    for (const seed of [4, 5]) {
      const { passed, ended } = through(chunked(withTail, seed));
      expect(ended).toBe(true);
      expect(passed.equals(entries)).toBe(true);
    }
    expect(await parse([through([withTail]).passed])).toEqual(listing);
  });

  it('passes a tar without its end blocks whole, and a truncated tar is still the parser’s error', async () => {
    const noEnd = tar.subarray(0, tar.length - 1024);
    expect(through(chunked(noEnd)).passed.equals(noEnd)).toBe(true);
    expect(through(chunked(noEnd)).ended).toBe(false);
    const cut = tar.subarray(0, 4000); // inside the data of the entry with a pax name
    const { passed } = through(chunked(cut));
    expect(passed.equals(cut)).toBe(true);
    await expect(parse([passed])).rejects.toThrow(/Truncated input/);
  });

  it('refuses a tar that is compressed twice (node-tar would inflate the inner one itself, unbounded)', () => {
    expect(() => new TarEnd().take(gzipSync(tar))).toThrow(/compressed twice/);
  });

  it('tarUntilEnd passes the tar on and consumes what follows', async () => {
    const seen: Buffer[] = [];
    const tail = Buffer.alloc(3 * MiB);
    await pipeline(Readable.from(chunked(Buffer.concat([tar, tail]))), tarUntilEnd(), async (src) => {
      for await (const c of src as AsyncIterable<Buffer>) seen.push(c);
    });
    expect(Buffer.concat(seen).equals(tar)).toBe(true);
  });
});

describe('openTar', () => {
  const manifests = writeTar([file('release-manifests/image-references', Buffer.from('{}'))]);
  /** A gzip stream of `tar` and `tailMiB` MiB of zeros after it (members of 1 MiB of zeros each). */
  const withZeros = (tar: Buffer, tailMiB: number) => {
    const zeros = gzipSync(Buffer.alloc(MiB));
    return Buffer.concat([gzipSync(tar), ...Array<Buffer>(tailMiB).fill(zeros)]);
  };
  const noZstd = () => new Error('zstd');

  it('stops inflating a gzip layer at the end of its tar: 16 MiB of zeros after it cost nothing', async () => {
    // Before tar-read.ts, node-tar's Parser fed the 16 MiB tail took 2.6 s (quadratic: 64 MiB took
    // ten minutes); through openTar the tail is read (16 KiB of gzip) but never inflated.
    const blob = withZeros(manifests, 16);
    let read = 0;
    async function* source() {
      for (const c of chunked(blob, 7)) {
        read += c.length;
        yield c;
      }
    }
    const started = Date.now();
    const opened = await openTar(source(), { kind: 'layer', what: 'layer x', zstd: noZstd });
    expect(opened.gzip).toBe(true);
    const listing = await parse(opened.tar);
    await opened.rest();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(listing).toEqual([expect.stringMatching(/^release-manifests\/image-references File 2 /)]);
    expect(read).toBe(blob.length); // read whole, for the caller's digest
  });

  it('reads a plain tar the same way, and says zstd and an empty input', async () => {
    const opened = await openTar(Readable.from([Buffer.concat([manifests, randomBytes(4096)])]), {
      kind: 'layer',
      what: 'layer x',
      zstd: noZstd,
    });
    expect(opened.gzip).toBe(false);
    const got: Buffer[] = [];
    for await (const c of opened.tar) got.push(c);
    expect(Buffer.concat(got).equals(manifests)).toBe(true);
    await opened.rest();
    await expect(
      openTar(Readable.from([Buffer.from([0x28]), Buffer.from([0xb5, 0x2f, 0xfd, 0])]), {
        kind: 'layer',
        what: 'x',
        zstd: noZstd,
      }),
    ).rejects.toThrow('zstd');
    const empty = await openTar(Readable.from([]), { kind: 'layer', what: 'x', zstd: noZstd });
    expect(empty.empty).toBe(true);
  });

  it('the error of the input is said, even when it comes past the tar (an error is never read as the end)', async () => {
    async function* failing() {
      yield withZeros(manifests, 1);
      throw new Error('the connection was reset');
    }
    const opened = await openTar(failing(), { kind: 'layer', what: 'x', zstd: noZstd });
    // Read ahead, the error may come while the tar is parsed, or from rest(): never not at all.
    const outcome = await (async () => {
      await parse(opened.tar);
      await opened.rest();
    })().then(
      () => 'read to the end',
      (e: unknown) => (e as Error).message,
    );
    expect(outcome).toBe('the connection was reset');
  });
});
