/**
 * Clients that ask for a download and never read it: a PXE host on a slow link, or a hostile one.
 * Shared by the serve-images tests and the serve benchmark.
 */
import { connect, type Socket } from 'node:net';

/**
 * `n` clients that GET `path` from host:port and never read the answer: a 'readable' listener and
 * no read(), so node buffers up to its high-water mark and stops reading, and the kernel buffers
 * fill up behind it. Resolves once every answer has started, or after `ms`; `started` counts
 * those that did. The caller destroys the sockets.
 */
export async function stalledReaders(
  host: string,
  port: number,
  path: string,
  n: number,
  ms: number,
): Promise<{ sockets: Socket[]; started: number }> {
  const sockets: Socket[] = [];
  let started = 0;
  const waits: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const s = connect({ host, port });
    s.on('error', () => undefined); // torn down by the caller
    sockets.push(s);
    waits.push(
      new Promise<void>((ok) =>
        s.once('readable', () => {
          started++;
          ok();
        }),
      ),
    );
    s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(waits), new Promise((ok) => (timer = setTimeout(ok, ms)))]);
  clearTimeout(timer);
  return { sockets, started };
}
