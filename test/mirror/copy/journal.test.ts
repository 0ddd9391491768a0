import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../../../src/mirror/copy/journal.js';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const D3 = `sha256:${'3'.repeat(64)}`;

let root: string;
let n = 0;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'airgap-journal-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});
const fresh = () => join(root, `w${n++}`, 'working-dir', 'journal.jsonl');
/** A journal path whose directory exists, for writing a file by hand. */
const existing = () => {
  const path = fresh();
  mkdirSync(join(path, '..'), { recursive: true });
  return path;
};

describe('Journal', () => {
  it('creates its directory and remembers finished images across runs', () => {
    const path = fresh();
    const j = new Journal(path);
    expect(j.images.size).toBe(0);
    j.recordImage('mirror:5000/org/app:v1', D1);
    j.recordImage('mirror:5000/org/base:v2', D2);
    expect(existsSync(path)).toBe(true);
    const again = new Journal(path);
    expect([...again.images]).toEqual([
      ['mirror:5000/org/app:v1', D1],
      ['mirror:5000/org/base:v2', D2],
    ]);
  });

  it('keeps the latest digest when an image is recorded twice', () => {
    const path = fresh();
    const j = new Journal(path);
    j.recordImage('mirror:5000/org/app:v1', D1);
    j.recordImage('mirror:5000/org/app:v1', D2);
    expect(new Journal(path).images.get('mirror:5000/org/app:v1')).toBe(D2);
  });

  it('loads everything before a torn last line (kill -9 mid-append)', () => {
    const path = fresh();
    const j = new Journal(path);
    j.recordImage('m/a:1', D1);
    j.recordUpload('m/a@' + D2, 'https://m/v2/a/blobs/uploads/u1');
    j.recordImage('m/b:1', D2);
    const full = JSON.stringify({ image: 'm/c:1', digest: D3 });
    appendFileSync(path, full.slice(0, full.length - 9)); // no closing quote, brace or newline
    const loaded = new Journal(path);
    expect([...loaded.images.keys()]).toEqual(['m/a:1', 'm/b:1']);
    expect(loaded.uploadFor('m/a@' + D2)).toBe('https://m/v2/a/blobs/uploads/u1');
  });

  it('does not lose the first record written after a torn last line', () => {
    const path = fresh();
    new Journal(path).recordImage('m/a:1', D1);
    appendFileSync(path, '{"image":"m/torn:1","dig');
    const resumed = new Journal(path);
    resumed.recordImage('m/b:1', D2);
    resumed.recordUpload('m/b@' + D3, 'https://m/up/2');
    const next = new Journal(path);
    expect([...next.images]).toEqual([
      ['m/a:1', D1],
      ['m/b:1', D2],
    ]);
    expect(next.uploadFor('m/b@' + D3)).toBe('https://m/up/2');
    // The torn fragment stays on a line of its own.
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines).toContain('{"image":"m/torn:1","dig');
  });

  it('ignores blank lines and a garbled line in the middle', () => {
    const path = existing();
    writeFileSync(
      path,
      [
        JSON.stringify({ image: 'm/a:1', digest: D1 }),
        '',
        '   ',
        '\u0000\u0000garbage',
        JSON.stringify({ image: 'm/b:1', digest: D2 }),
        '',
      ].join('\n'),
    );
    expect([...new Journal(path).images.keys()]).toEqual(['m/a:1', 'm/b:1']);
  });

  it('ignores an image line without a digest', () => {
    const path = existing();
    writeFileSync(path, `${JSON.stringify({ image: 'm/a:1' })}\n`);
    expect(new Journal(path).images.size).toBe(0);
  });

  it('records an upload session, replaces it, and clears it, across reloads', () => {
    const path = fresh();
    const key = `mirror:5000/org/app@${D1}`;
    const j = new Journal(path);
    expect(j.uploadFor(key)).toBeUndefined();
    j.recordUpload(key, 'https://mirror:5000/v2/org/app/blobs/uploads/first');
    expect(j.uploadFor(key)).toBe('https://mirror:5000/v2/org/app/blobs/uploads/first');
    expect(new Journal(path).uploadFor(key)).toBe('https://mirror:5000/v2/org/app/blobs/uploads/first');

    j.recordUpload(key, 'https://mirror:5000/v2/org/app/blobs/uploads/second');
    expect(new Journal(path).uploadFor(key)).toBe('https://mirror:5000/v2/org/app/blobs/uploads/second');

    j.recordUpload(key, undefined);
    expect(j.uploadFor(key)).toBeUndefined();
    expect(new Journal(path).uploadFor(key)).toBeUndefined();
  });

  it('keeps uploads for different blobs apart', () => {
    const path = fresh();
    const j = new Journal(path);
    j.recordUpload(`m/a@${D1}`, 'https://m/up/1');
    j.recordUpload(`m/a@${D2}`, 'https://m/up/2');
    j.recordUpload(`m/a@${D1}`, undefined);
    const loaded = new Journal(path);
    expect(loaded.uploadFor(`m/a@${D1}`)).toBeUndefined();
    expect(loaded.uploadFor(`m/a@${D2}`)).toBe('https://m/up/2');
  });

  it('writes nothing when clearing an upload it never had', () => {
    const path = fresh();
    const j = new Journal(path);
    j.recordImage('m/a:1', D1);
    const before = readFileSync(path, 'utf8');
    j.recordUpload(`m/a@${D2}`, undefined);
    expect(readFileSync(path, 'utf8')).toBe(before);
  });

  it('writes one JSON object per line', () => {
    const path = fresh();
    const j = new Journal(path);
    j.recordUpload('k', 'https://m/up/1');
    j.recordImage('m/a:1', D1);
    j.recordUpload('k', undefined);
    const lines = readFileSync(path, 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { upload: 'k', location: 'https://m/up/1' },
      { image: 'm/a:1', digest: D1 },
      { upload: 'k' },
    ]);
  });
  it('compacts a long journal to what is still true when it is opened', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airgap-journal-'));
    const path = join(dir, 'journal.jsonl');
    const j = new Journal(path);
    for (let i = 0; i < 300; i++) {
      j.recordUpload(`r/a@sha256:${i}`, `https://r/v2/a/blobs/uploads/${i}`);
      j.recordUpload(`r/a@sha256:${i}`, undefined);
    }
    j.recordUpload('r/a@sha256:open', 'https://r/v2/a/blobs/uploads/open');
    j.recordImage('r/a:v1', `sha256:${'a'.repeat(64)}`);
    expect(readFileSync(path, 'utf8').trim().split('\n').length).toBe(602);
    const again = new Journal(path);
    expect(readFileSync(path, 'utf8').trim().split('\n').length).toBe(2);
    expect(again.uploadFor('r/a@sha256:open')).toBe('https://r/v2/a/blobs/uploads/open');
    expect(again.uploadFor('r/a@sha256:7')).toBeUndefined();
    expect(again.images.get('r/a:v1')).toBe(`sha256:${'a'.repeat(64)}`);
  });

  it('a journal that came with an archive cannot name a malformed digest or send an upload to another host', () => {
    const dir = mkdtempSync(join(tmpdir(), 'airgap-journal-'));
    const path = join(dir, 'journal.jsonl');
    const lines = [
      { image: 'r/a:v1', digest: 'sha256:../../etc/passwd' },
      { image: 'r/a:v2', digest: `sha256:${'b'.repeat(64)}` },
      { upload: 'r/a@sha256:x', location: 'https://elsewhere.example/v2/a/blobs/uploads/1' },
      { upload: 'r/a@sha256:y', location: 'https://r/v2/a/blobs/uploads/2' },
    ];
    writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const j = new Journal(path);
    expect([...j.images.keys()]).toEqual(['r/a:v2']);
    expect(j.uploadFor('r/a@sha256:x')).toBeUndefined();
    expect(j.uploadFor('r/a@sha256:y')).toBe('https://r/v2/a/blobs/uploads/2');
  });
});
