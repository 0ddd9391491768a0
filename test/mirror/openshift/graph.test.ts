import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchGraph,
  graphArch,
  graphEndpoint,
  OCP_UPDATE_URL,
  parseGraph,
  type UpdateGraph,
} from '../../../src/mirror/openshift/graph.js';
import { startGraphServer, type GraphServer } from '../../../lab/graph-server.js';
import { testCertificates } from '../../../lab/pki.js';
import { AirgapError } from '../../../src/util/errors.js';
import { lazy, realdata, rejection, withRealdata } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

/** The real stable-4.13 graph (read on first use: it needs the realdata). */
const sample = lazy(() => {
  const path = realdata('samples', 'update-graph', 'cincinnati-amd64-stable-4.13.json');
  return parseGraph(JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>, path);
});

describe('parseGraph', () => {
  withRealdata.it('keeps the real sample whole', () => {
    expect(sample().version).toBe(1);
    expect(sample().nodes).toHaveLength(98);
    expect(sample().edges).toHaveLength(1171);
    expect(sample().conditionalEdges).toHaveLength(37);
    expect(sample().conditionalEdges[0].risks[0].matchingRules[0]).toHaveProperty('type');
  });

  it.each([
    [[], 'not a JSON object'],
    [{ edges: [] }, '"nodes" is missing'],
    [{ nodes: [{ version: '4.13', payload: 'x' }], edges: [] }, 'nodes[0].version "4.13"'],
    [{ nodes: [{ version: '4.13.0' }], edges: [] }, 'nodes[0].payload'],
    [{ nodes: [{ version: '4.13.0', payload: 'x' }], edges: [[0, 1]] }, 'edges[0] [0,1]'],
    [
      { nodes: [], edges: [], conditionalEdges: [{ edges: [{ from: '1.0.0' }], risks: [] }] },
      'conditionalEdges[0].edges[0]',
    ],
  ])('names what is wrong: %j', (body, what) => {
    let err: unknown;
    try {
      parseGraph(body, 'here');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AirgapError);
    expect((err as AirgapError).code).toBe(MirrorError.GRAPH_INVALID);
    expect((err as AirgapError).message).toContain(what);
  });
});

describe('graph endpoint and architecture', () => {
  it('maps architectures as oc-mirror sends them', () => {
    expect(graphArch(undefined)).toBe('amd64');
    expect(graphArch('x86_64')).toBe('amd64');
    expect(graphArch('aarch64')).toBe('arm64');
    expect(graphArch('multi')).toBe('multi');
    expect(() => graphArch('riscv64')).toThrow(/unknown release architecture/);
  });

  it('an explicit URL wins over UPDATE_URL_OVERRIDE, which wins over api.openshift.com', () => {
    expect(graphEndpoint(undefined, {})).toBe(OCP_UPDATE_URL);
    expect(graphEndpoint(undefined, { UPDATE_URL_OVERRIDE: 'http://osus/graph' })).toBe('http://osus/graph');
    expect(graphEndpoint('http://x/graph', { UPDATE_URL_OVERRIDE: 'http://osus/graph' })).toBe(
      'http://x/graph',
    );
  });
});

describe('fetchGraph against a local update service', () => {
  let server: GraphServer;
  const saved = process.env.UPDATE_URL_OVERRIDE;

  beforeAll(async () => {
    // The real graph where it is here; the tests that do not read it run without it.
    server = await startGraphServer({
      graphs: withRealdata.present() ? { 'stable-4.13/amd64': sample() } : {},
    });
  });
  afterAll(async () => {
    await server.stop();
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.UPDATE_URL_OVERRIDE;
    else process.env.UPDATE_URL_OVERRIDE = saved;
  });

  withRealdata.it('sends channel, arch and Accept, and returns the parsed graph', async () => {
    const g = await fetchGraph({ channel: 'stable-4.13', arch: 'x86_64', graphUrl: server.url });
    expect(g).toEqual(sample());
    const last = server.requests.at(-1);
    expect(last?.query).toMatchObject({ channel: 'stable-4.13', arch: 'amd64' });
    expect(last?.accept).toBe('application/json');
  });

  withRealdata.it('honours UPDATE_URL_OVERRIDE', async () => {
    process.env.UPDATE_URL_OVERRIDE = server.url;
    const before = server.requests.length;
    const g = await fetchGraph({ channel: 'stable-4.13' });
    expect(g.nodes).toHaveLength(98);
    expect(server.requests.length).toBe(before + 1);
  });

  it('an unknown channel (the service answers an empty graph) is a usage error naming it', async () => {
    const e = await rejection(fetchGraph({ channel: 'stable-4.99', graphUrl: server.url }));
    expect(e.code).toBe(MirrorError.GRAPH_CHANNEL_EMPTY);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('stable-4.99');
    expect(e.hint).toContain('channel name');
  });

  it('the lab server answers like the real one for a missing channel and a bad Accept', async () => {
    const missing = await fetch(server.url);
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      kind: 'missing_params',
      value: 'mandatory client parameters missing: channel',
    });
    const xml = await fetch(`${server.url}?channel=stable-4.13`, { headers: { accept: 'application/xml' } });
    expect(xml.status).toBe(406);
  });

  it('an unreachable endpoint is GRAPH_UNREACHABLE naming the URL', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const port = (dead.address() as AddressInfo).port;
    await new Promise((r) => dead.close(r));
    const url = `http://127.0.0.1:${port}/api/upgrades_info/v1/graph`;
    const e = await rejection(fetchGraph({ channel: 'stable-4.13', graphUrl: url, retries: 1 }));
    expect(e.code).toBe('GRAPH_UNREACHABLE');
    expect(e.message).toContain(`127.0.0.1:${port}`);
    expect(e.hint).toContain('UPDATE_URL_OVERRIDE');
  });

  it('a server answering garbage is GRAPH_INVALID; 5xx is retried', async () => {
    let calls = 0;
    const bad: Server = createServer((req, res) => {
      calls++;
      if (req.url?.includes('flaky') && calls === 1) {
        res.writeHead(503).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(req.url?.includes('html') ? '<html>login</html>' : JSON.stringify({ nodes: 'many' }));
    });
    await new Promise<void>((r) => bad.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
    try {
      const html = await rejection(fetchGraph({ channel: 'c', graphUrl: `${base}/html` }));
      expect(html.code).toBe(MirrorError.GRAPH_INVALID);
      expect(html.message).toContain('<html>');
      const shape = await rejection(fetchGraph({ channel: 'c', graphUrl: `${base}/shape` }));
      expect(shape.code).toBe(MirrorError.GRAPH_INVALID);
      expect(shape.message).toContain('"nodes"');
      calls = 0;
      const flaky = await rejection(fetchGraph({ channel: 'c', graphUrl: `${base}/flaky`, retries: 2 }));
      expect(flaky.code).toBe(MirrorError.GRAPH_INVALID); // the second attempt got through to the bad body
      expect(calls).toBe(2);
    } finally {
      await new Promise((r) => bad.close(r));
    }
  });
});

describe('fetchGraph over HTTPS', () => {
  withRealdata.it('trusts the server with the CA file and refuses it without', async () => {
    const { ca, server: cert } = testCertificates();
    const graphs: Record<string, UpdateGraph> = { 'stable-4.13/arm64': sample() };
    const srv = await startGraphServer({ graphs, tls: cert });
    const dir = mkdtempSync(join(tmpdir(), 'airgap-graph-'));
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, ca.certPem);
    try {
      expect(srv.url.startsWith('https://127.0.0.1:')).toBe(true);
      const g = await fetchGraph({
        channel: 'stable-4.13',
        arch: 'arm64',
        graphUrl: srv.url,
        tls: { caFiles: [caFile], certDirs: [] },
      });
      expect(g.nodes).toHaveLength(98);
      const e = await rejection(
        fetchGraph({ channel: 'stable-4.13', arch: 'arm64', graphUrl: srv.url, tls: { certDirs: [] } }),
      );
      expect(e.code).toBe('GRAPH_TLS');
      expect(e.hint).toContain('--ca-file');
    } finally {
      await srv.stop();
    }
  });
});
