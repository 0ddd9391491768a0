import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, renderProgress } from '../../src/util/progress.js';

function fakeStream(isTTY: boolean) {
  const chunks: string[] = [];
  const s = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  Object.assign(s, { isTTY, columns: 160 });
  return { s, chunks };
}

describe('progress rendering', () => {
  it('redraws one line on a TTY with bytes, rate, ETA and image counts, and clears it at the end', async () => {
    const { s, chunks } = fakeStream(true);
    const p = renderProgress(s, { intervalMs: 20 });
    p.sink({ type: 'items-total', total: 4 });
    p.sink({ type: 'bytes-planned', bytes: 10 * 1024 * 1024 });
    p.sink({ type: 'bytes', bytes: 5 * 1024 * 1024 });
    p.sink({ type: 'item-done', ok: true, name: 'a' });
    p.sink({ type: 'item-done', ok: false, name: 'b', message: 'boom' });
    await new Promise((r) => setTimeout(r, 60));
    p.stop();
    const drawn = chunks.filter((c) => c.startsWith('\r['));
    expect(drawn.length).toBeGreaterThan(0);
    expect(drawn.every((c) => !c.includes('\n'))).toBe(true); // one line, redrawn in place
    expect(drawn.at(-1)).toMatch(/5\.0 MiB \/ 10\.0 MiB at .*\/s ETA \d+s .*images 2\/4 · 1 failed/);
    expect(chunks.at(-1)).toMatch(/^\r\s+\r$/);
  });

  it('fits the line to the terminal: fields are dropped, least needed first, never wrapped; redrawn on resize', async () => {
    const { s, chunks } = fakeStream(true);
    Object.assign(s, { columns: 80 });
    const p = renderProgress(s, { intervalMs: 20 });
    p.sink({ type: 'items-total', total: 1234 });
    p.sink({ type: 'bytes-planned', bytes: 123.4 * 1024 ** 3 });
    p.sink({ type: 'bytes', bytes: 45.6 * 1024 ** 3 });
    for (let i = 0; i < 200; i++) p.sink({ type: 'blob-done', how: 'uploaded', size: 1 });
    p.sink({ type: 'item-done', ok: false, name: 'x', message: 'boom' });
    await new Promise((r) => setTimeout(r, 50));
    const wide = chunks.filter((c) => c.startsWith('\r[')).at(-1)!;
    expect(wide.slice(1).trimEnd().length).toBeLessThanOrEqual(79);
    expect(wide).toMatch(/45\.6 GiB \/ 123\.4 GiB/);
    expect(wide).toContain('1 failed');
    // Narrower: the bar and the least needed fields go, the bytes and the failure stay.
    Object.assign(s, { columns: 40 });
    s.emit('resize');
    await new Promise((r) => setTimeout(r, 50));
    p.stop();
    const narrow = chunks.filter((c) => c.startsWith('\r') && c.includes('GiB')).at(-1)!;
    const text = narrow
      .slice(1)
      .replace(/^\s*\r/, '')
      .trimEnd();
    expect(text.length).toBeLessThanOrEqual(39);
    expect(text).toMatch(/^45\.6 GiB \/ 123\.4 GiB/);
    expect(text).toContain('1 failed');
    expect(text).not.toContain('blobs');
    expect(chunks.every((c) => !c.includes('\n'))).toBe(true);
  });

  it('prints plain lines when not a TTY, and warnings on their own line', async () => {
    const { s, chunks } = fakeStream(false);
    const p = renderProgress(s, { intervalMs: 20 });
    p.sink({ type: 'warning', message: 'retrying blob sha256:abc' });
    await new Promise((r) => setTimeout(r, 50));
    p.stop();
    expect(chunks[0]).toBe('warning: retrying blob sha256:abc\n');
    expect(chunks.slice(1).every((c) => c.startsWith('progress: ') && c.endsWith('\n'))).toBe(true);
    expect(chunks.join('')).not.toContain('\r');
  });

  it('formats sizes and durations for people', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(1.22 * 1024 ** 3)).toBe('1.2 GiB');
    expect(formatDuration(9_500)).toBe('10s');
    expect(formatDuration(125_000)).toBe('2m05s');
    expect(formatDuration(3_700_000)).toBe('1h01m');
  });
});
