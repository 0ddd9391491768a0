/**
 * chunksOf: a stream read chunk by chunk as it arrives, with backpressure and Node's own ending
 * rules, on real streams (a socket pair on loopback for the backpressure case).
 */
import { once } from 'node:events';
import { createServer, connect, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chunksOf } from '../../src/net/body.js';

describe('chunksOf', () => {
  it('yields each chunk as written, the same buffers, none joined', async () => {
    const s = new PassThrough();
    const parts = [Buffer.from('one'), Buffer.from('two'), Buffer.from('three')];
    for (const p of parts) s.write(p);
    s.end();
    const got: Buffer[] = [];
    for await (const c of chunksOf(s)) got.push(c);
    // Node's own iterator would hand back one joined buffer ("onetwothree") here.
    expect(got.map(String)).toEqual(['one', 'two', 'three']);
  });

  it('throws the stream error, and a premature close like Node does', async () => {
    const failing = new PassThrough();
    failing.write('x');
    setImmediate(() => failing.destroy(new Error('connection reset')));
    const it = chunksOf(failing);
    expect(String((await it.next()).value)).toBe('x');
    await expect(it.next()).rejects.toThrow('connection reset');

    const cut = new PassThrough();
    setImmediate(() => cut.destroy());
    await expect(chunksOf(cut).next()).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });

  it('return() destroys the stream (the connection is let go)', async () => {
    const s = new PassThrough();
    s.write('a');
    const it = chunksOf(s);
    await it.next();
    await it.return!();
    expect(s.destroyed).toBe(true);
  });

  it('stops reading the socket while the consumer does not pull (backpressure reaches the sender)', async () => {
    const server = createServer();
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const accepted = once(server, 'connection') as Promise<[Socket]>;
    const client = connect(port, '127.0.0.1');
    const [peer] = await accepted;
    try {
      const it = chunksOf(client);
      // The sender writes 64 MiB; nobody pulls after the first chunk.
      const block = Buffer.alloc(1024 * 1024, 7);
      for (let i = 0; i < 64; i++) peer.write(block);
      await it.next();
      await new Promise((r) => setTimeout(r, 300));
      // Paused: the reader took about its 1 MiB (plus what one read brings) off the socket; the
      // rest waits in the kernel and the sender. Unpaused, all 64 MiB would be in memory by now.
      expect(client.isPaused()).toBe(true);
      expect(client.bytesRead).toBeLessThan(8 * 1024 * 1024);
      // Pulling drains it again.
      let got = 0;
      peer.end();
      for await (const c of it) got += c.length;
      expect(client.bytesRead).toBe(64 * 1024 * 1024);
      expect(got).toBeGreaterThan(60 * 1024 * 1024);
    } finally {
      client.destroy();
      peer.destroy();
      server.close();
    }
  });
});
