import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent, requestOn } from '../../src/net/http.js';
import { tempDir } from '../helpers/fixtures.js';
import { testCertificates } from '../helpers/tls.js';

describe('the HTTP layer', () => {
  it('speaks HTTP/1.1 to a TLS server that offers HTTP/2: parallel requests get a connection each', async () => {
    const { ca, server: cert } = testCertificates();
    const caFile = join(await tempDir('airgap-http-'), 'ca.crt');
    await writeFile(caFile, ca.certPem);
    // A registry or CDN as most are: HTTP/2 offered in the TLS handshake, HTTP/1.1 still served.
    // Each answer waits until all three requests are in, so the three are under way together.
    const seen: { version: string; port: number }[] = [];
    const waiting: (() => void)[] = [];
    const server = http2.createSecureServer(
      { cert: cert.certPem, key: cert.keyPem, allowHTTP1: true },
      (req, res) => {
        seen.push({ version: req.httpVersion, port: req.socket.remotePort ?? 0 });
        waiting.push(() => res.end('ok'));
        if (waiting.length === 3) for (const answer of waiting) answer();
      },
    );
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const agent = createAgent('127.0.0.1', { caFiles: [caFile], certDirs: [], connections: 3 });
    try {
      const bodies = await Promise.all(
        [1, 2, 3].map(async (i) => {
          const res = await requestOn(agent, `${base}/v2/blob/${i}`, { method: 'GET' });
          return res.body.text();
        }),
      );
      expect(bodies).toEqual(['ok', 'ok', 'ok']);
      expect(seen.map((s) => s.version)).toEqual(['1.1', '1.1', '1.1']);
      expect(new Set(seen.map((s) => s.port)).size).toBe(3);
    } finally {
      await agent.close();
      server.close();
    }
  });
});
