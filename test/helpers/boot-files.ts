/**
 * Boot-image test material: a small HTTP(S) file server that honours Range and can drop a
 * connection halfway, ignore Range, or serve bytes that do not match, logging what it was asked
 * and what it sent; and a generated CoreOS stream shaped like the real sample
 * `realdata('samples', 'coreos', 'installer-coreos-rhel-9.stream.json')` (the same keys and nesting),
 * whose locations point at that server and whose sha256 are those of small generated files.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { CoreosStream } from '../../src/mirror/openshift/payload.js';

export interface ServedRequest {
  method: string;
  path: string;
  range?: string;
  status?: number;
  /** Body bytes written for this request. */
  sent: number;
}

/** What the server does with the next requests for one path. */
export interface FileFault {
  /** Send the headers of the whole answer, then this many body bytes, then reset the connection. */
  dropAfter?: number;
  /** Send the headers of the whole answer, then this many body bytes, then nothing (until close). */
  stallAfter?: number;
  /** Answer with this status (and no body). */
  status?: number;
  /** Serve these bytes instead (a corrupted or different file). */
  body?: Buffer;
  /** Ignore Range: answer 200 with the whole file. */
  ignoreRange?: boolean;
  /** How many requests it applies to; default 1 (Infinity: always). */
  times?: number;
}

export interface FileServer {
  /** `http://127.0.0.1:port` (https:// with tls). */
  base: string;
  files: Map<string, Buffer>;
  log: ServedRequest[];
  /** Install a fault for a path (replacing the one there). */
  fault(path: string, f: FileFault): void;
  /** GET requests for a path. */
  gets(path: string): ServedRequest[];
  /** Body bytes sent for a path, over all requests. */
  sent(path: string): number;
  close(): Promise<void>;
}

/** Start a file server on 127.0.0.1 serving `files` (path → bytes). */
export async function startFileServer(
  files: Map<string, Buffer> = new Map(),
  opts: { tls?: { certPem: string; keyPem: string } } = {},
): Promise<FileServer> {
  const log: ServedRequest[] = [];
  const faults = new Map<string, FileFault & { left: number }>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    const range = typeof req.headers.range === 'string' ? req.headers.range : undefined;
    const entry: ServedRequest = { method: req.method ?? 'GET', path, ...(range ? { range } : {}), sent: 0 };
    log.push(entry);
    let fault: FileFault | undefined;
    const f = faults.get(path);
    if (f && f.left > 0) {
      f.left--;
      fault = f;
    }
    if (fault?.status) {
      entry.status = fault.status;
      res.writeHead(fault.status, { 'content-length': 0 }).end();
      return;
    }
    const data = fault?.body ?? files.get(path);
    if (!data) {
      entry.status = 404;
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    let start = 0;
    let status = 200;
    const headers: http.OutgoingHttpHeaders = {
      'content-type': path.endsWith('.json') ? 'application/json' : 'application/octet-stream',
      'accept-ranges': 'bytes',
    };
    const m = range && !fault?.ignoreRange ? /^bytes=(\d+)-$/.exec(range) : null;
    if (m) {
      start = Number(m[1]);
      if (start >= data.length) {
        entry.status = 416;
        res.writeHead(416, { 'content-range': `bytes */${data.length}` }).end();
        return;
      }
      status = 206;
      headers['content-range'] = `bytes ${start}-${data.length - 1}/${data.length}`;
    }
    const body = data.subarray(start);
    headers['content-length'] = body.length;
    entry.status = status;
    res.writeHead(status, headers);
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    if (fault?.dropAfter !== undefined) {
      const head = body.subarray(0, fault.dropAfter);
      entry.sent += head.length;
      res.write(head, () => {
        setTimeout(() => {
          const s = req.socket as Socket;
          if (typeof s.resetAndDestroy === 'function') s.resetAndDestroy();
          else s.destroy();
        }, 20);
      });
      return;
    }
    if (fault?.stallAfter !== undefined) {
      const head = body.subarray(0, fault.stallAfter);
      entry.sent += head.length;
      res.write(head);
      return;
    }
    entry.sent += body.length;
    res.end(body);
  };
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.certPem, key: opts.tls.keyPem }, handler)
    : http.createServer(handler);
  const sockets = new Set<Socket>();
  server.on(opts.tls ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.on('clientError', (_e, s: Socket) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    base: `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    files,
    log,
    fault: (path, f) => faults.set(path, { ...f, left: f.times ?? 1 }),
    gets: (path) => log.filter((e) => e.path === path && e.method === 'GET'),
    sent: (path) => log.filter((e) => e.path === path).reduce((n, e) => n + e.sent, 0),
    close: async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

export const sha256Hex = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Sizes of the generated artifacts: small, but several TCP chunks each. */
export const ARTIFACT_SIZES = {
  iso: 384 * 1024,
  rootfs: 256 * 1024,
  kernel: 48 * 1024,
  initramfs: 96 * 1024,
};

export interface SyntheticStream {
  stream: CoreosStream;
  /** URL path → bytes, for {@link startFileServer}. */
  files: Map<string, Buffer>;
  /** arch → artifact → { path on the server, file name, bytes }. */
  artifacts: Record<string, Record<string, { path: string; file: string; data: Buffer }>>;
}

/**
 * A CoreOS stream shaped like installer-coreos-rhel-9.stream.json (stream, metadata, and per
 * architecture `artifacts` (metal with 4k.raw.gz, iso, pxe and raw.gz; qemu), `images.kubevirt` and
 * `rhel-coreos-extensions`), with every metal artifact a generated file on `base`. Real names:
 * `rhcos-<release>-live-iso.<arch>.iso`, `-live-rootfs.<arch>.img`, `-live-kernel.<arch>`,
 * `-live-initramfs.<arch>.img`.
 */
export function syntheticStream(
  base: string,
  opts: { name?: string; release?: string; arches?: string[]; rhel?: string } = {},
): SyntheticStream {
  const release = opts.release ?? '9.6.20250402-0';
  const rhel = opts.rhel ?? '9.6';
  const name = opts.name ?? 'rhcos-4.18';
  const files = new Map<string, Buffer>();
  const artifacts: SyntheticStream['artifacts'] = {};
  const architectures: Record<string, unknown> = {};
  for (const arch of opts.arches ?? ['aarch64', 'ppc64le', 's390x', 'x86_64']) {
    const dir = `/art/storage/prod/streams/rhel-${rhel}/builds/${release}/${arch}`;
    const make = (kind: string, file: string, size: number) => {
      const data = randomBytes(size);
      const path = `${dir}/${file}`;
      files.set(path, data);
      (artifacts[arch] ??= {})[kind] = { path, file, data };
      return { location: `${base}${path}`, sha256: sha256Hex(data) };
    };
    const fake = (file: string) => ({
      location: `${base}${dir}/${file}`,
      sha256: sha256Hex(Buffer.from(file)),
      'uncompressed-sha256': sha256Hex(Buffer.from(`${file}.raw`)),
    });
    architectures[arch] = {
      artifacts: {
        metal: {
          release,
          formats: {
            '4k.raw.gz': { disk: fake(`rhcos-${release}-metal4k.${arch}.raw.gz`) },
            iso: { disk: make('iso', `rhcos-${release}-live-iso.${arch}.iso`, ARTIFACT_SIZES.iso) },
            pxe: {
              kernel: make('kernel', `rhcos-${release}-live-kernel.${arch}`, ARTIFACT_SIZES.kernel),
              initramfs: make(
                'initramfs',
                `rhcos-${release}-live-initramfs.${arch}.img`,
                ARTIFACT_SIZES.initramfs,
              ),
              rootfs: make('rootfs', `rhcos-${release}-live-rootfs.${arch}.img`, ARTIFACT_SIZES.rootfs),
            },
            'raw.gz': { disk: fake(`rhcos-${release}-metal.${arch}.raw.gz`) },
          },
        },
        qemu: { release, formats: { 'qcow2.gz': { disk: fake(`rhcos-${release}-qemu.${arch}.qcow2.gz`) } } },
      },
      images: {
        kubevirt: {
          release,
          image: `quay.io/openshift-release-dev/ocp-v4.0-art-dev:${release}-kubevirt`,
          'digest-ref': `quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:${sha256Hex(Buffer.from(arch))}`,
        },
      },
      'rhel-coreos-extensions': {
        'azure-disk': {
          release,
          url: `https://rhcos.blob.core.windows.net/imagebucket/rhcos-${release}-azure.${arch}.vhd`,
        },
      },
    };
  }
  return {
    stream: {
      stream: name,
      metadata: { 'last-modified': '2025-04-02T12:00:00Z', generator: 'plume cosa2stream b23d8cf' },
      architectures,
    },
    files,
    artifacts,
  };
}
