/**
 * Credentials never follow a redirect to another origin, through the real CLI. The registry is an
 * HTTPS server that wants Basic auth for everything and redirects its blobs: one to plain HTTP on
 * the same host and port (one port speaks both: the first byte of a connection says TLS or not),
 * one to another host name of the same server. Blob storage behind a redirect is normal (S3,
 * CDNs), so the blobs are fetched, but the password must never reach either: over plain HTTP it
 * would cross the network in clear.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { Duplex } from 'node:stream';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { oneLayerManifest } from '../helpers/hostile-registry.js';
import { testCertificates } from '../helpers/tls.js';

const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
const BASIC = `Basic ${Buffer.from('mirror:s3cret-password').toString('base64')}`;

describe('a registry that redirects its blobs', () => {
  let dir: string;
  let port: number;
  let caFile: string;
  let server: net.Server;
  /** Requests that reached the redirect targets, with the Authorization header they carried. */
  const landed: { scheme: string; host: string; path: string; authorization?: string }[] = [];
  const config = Buffer.from('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers"}}');
  const layer = Buffer.from('layer bytes from blob storage');

  beforeAll(async () => {
    dir = await tempDir();
    const { ca, server: cert } = testCertificates();
    caFile = join(dir, 'ca.crt');
    await writeFile(caFile, ca.certPem);
    const manifest = oneLayerManifest(config, layer);
    const blobs = new Map([
      [sha256(config), config],
      [sha256(layer), layer],
    ]);

    // The storage the blobs are redirected to: no auth wanted, every request recorded.
    const storage = (scheme: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
      const path = req.url ?? '';
      landed.push({ scheme, host: req.headers.host ?? '', path, authorization: req.headers.authorization });
      const bytes = blobs.get(path.slice('/storage/'.length));
      res.writeHead(bytes ? 200 : 404, { 'content-length': bytes?.length ?? 0 });
      res.end(bytes);
    };
    const registry = (req: http.IncomingMessage, res: http.ServerResponse) => {
      const path = req.url ?? '';
      if (path.startsWith('/storage/')) return storage('https')(req, res);
      if (req.headers.authorization !== BASIC) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="registry"', 'content-length': 0 });
        return res.end();
      }
      if (path === '/v2/' || path === '/v2') return res.end('{}');
      if (path === '/v2/app/manifests/v1' || path === `/v2/app/manifests/${sha256(manifest)}`) {
        res.writeHead(200, {
          'content-type': 'application/vnd.oci.image.manifest.v1+json',
          'docker-content-digest': sha256(manifest),
          'content-length': Buffer.byteLength(manifest),
        });
        return res.end(req.method === 'HEAD' ? undefined : manifest);
      }
      const blob = /^\/v2\/app\/blobs\/(sha256:[a-f0-9]{64})$/.exec(path)?.[1];
      if (blob && blobs.has(blob)) {
        // The config goes to plain HTTP on this very host and port; the layer to another host name.
        const to =
          blob === sha256(config)
            ? `http://127.0.0.1:${port}/storage/${blob}`
            : `https://localhost:${port}/storage/${blob}`;
        res.writeHead(307, { location: to, 'content-length': 0 });
        return res.end();
      }
      res.writeHead(404, { 'content-length': 0 });
      res.end();
    };
    const tls = https.createServer({ cert: cert.certPem, key: cert.keyPem }, registry);
    const plain = http.createServer(storage('http'));
    // One port, both protocols: a TLS connection starts with a handshake record (0x16). The socket
    // is handed on as a plain stream (bytes already read put back first): servers that take a
    // net.Socket read its handle directly and would miss them.
    server = net.createServer((socket) => {
      socket.once('data', (first) => {
        const duplex = new Duplex({
          read: () => void socket.resume(),
          write: (chunk, _enc, cb) => void socket.write(chunk, cb),
          final: (cb) => {
            socket.end();
            cb();
          },
          destroy: (err, cb) => {
            socket.destroy();
            cb(err);
          },
        });
        socket.on('data', (d) => {
          if (!duplex.push(d)) socket.pause();
        });
        socket.on('end', () => duplex.push(null));
        socket.on('error', (e) => duplex.destroy(e));
        socket.on('close', () => duplex.destroy());
        duplex.push(first);
        (first[0] === 0x16 ? tls : plain).emit('connection', duplex);
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as net.AddressInfo).port;
  });

  afterAll(async () => {
    server?.close();
  });

  it('fetches the redirected blobs without sending the password to plain HTTP or another host', async () => {
    const host = `127.0.0.1:${port}`;
    const authFile = join(dir, 'auth.json');
    await writeFile(authFile, JSON.stringify({ auths: { [host]: { auth: BASIC.slice('Basic '.length) } } }), {
      mode: 0o600,
    });
    const isc = join(dir, 'isc.yaml');
    await writeFile(
      isc,
      yaml.dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: { additionalImages: [{ name: `${host}/app:v1` }] },
      }),
    );
    const r = await airgap(
      ['mirror', '-c', isc, `file://${join(dir, 'archive')}`, '--authfile', authFile, '--ca-file', caFile],
      { env: { AIRGAP_DEBUG: 'http' }, timeoutMs: 20_000 },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    const http_ = landed.filter((l) => l.scheme === 'http');
    const other = landed.filter((l) => l.scheme === 'https' && l.host.startsWith('localhost'));
    expect(http_.map((l) => l.path)).toContain(`/storage/${sha256(config)}`);
    expect(other.map((l) => l.path)).toContain(`/storage/${sha256(layer)}`);
    expect(landed.every((l) => l.authorization === undefined)).toBe(true);
    expect(`${r.stdout}${r.stderr}`).not.toContain('s3cret');
  }, 60_000);
});
