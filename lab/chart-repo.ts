/**
 * A Helm chart repository for tests and the demo, served as chartmuseum or GitHub pages serve one:
 * `GET /index.yaml` (apiVersion v1, `entries: {<name>: [{name, version, appVersion, type, urls,
 * digest, created}]}`, newest version first, as `helm repo index` writes it) and the chart
 * archives at `charts/<name>-<version>.tgz` (URLs relative to the repository). Charts are packed
 * here from directories, as `helm package` packs them: a gzip tar whose entries are under
 * `<chart name>/`.
 */
import { createHash } from 'node:crypto';
import { basename, dirname } from 'node:path';
import Fastify from 'fastify';
import { create as tarCreate } from 'tar';
import { toYaml } from '../src/util/yaml.js';

/** One chart archive the repository serves. */
export interface RepoChart {
  name: string;
  version: string;
  appVersion?: string;
  type?: 'application' | 'library';
  tgz: Buffer;
}

export interface ChartRepo {
  /** The repository URL (what an ImageSetConfiguration's `helm.repositories[].url` names). */
  url: string;
  /** Paths asked for, in order. */
  requests: string[];
  /** Serve these bytes for a chart instead of its archive (a tampered download). */
  tamper?: Map<string, Buffer>;
  stop(): Promise<void>;
}

/** `helm package` of a chart directory: a .tgz whose entries are `<dir name>/…`. */
export async function packChart(dir: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const stream = tarCreate({ gzip: true, cwd: dirname(dir), portable: true }, [basename(dir)]);
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks);
}

/** The index.yaml of a set of charts, newest version first per chart. */
function chartIndex(charts: readonly RepoChart[]): string {
  const entries: Record<string, unknown[]> = {};
  for (const c of [...charts].reverse()) {
    (entries[c.name] ??= []).push({
      apiVersion: 'v2',
      name: c.name,
      version: c.version,
      ...(c.appVersion ? { appVersion: c.appVersion } : {}),
      type: c.type ?? 'application',
      created: '2026-11-01T00:00:00Z',
      digest: createHash('sha256').update(c.tgz).digest('hex'),
      urls: [`charts/${c.name}-${c.version}.tgz`],
    });
  }
  return toYaml({ apiVersion: 'v1', entries, generated: '2026-11-01T00:00:00Z' });
}

/** Serve charts on a free loopback port (plain HTTP; `index` replaces the generated index.yaml). */
export async function startChartRepo(
  charts: readonly RepoChart[],
  opts: { index?: string; path?: string; auth?: { username: string; password: string } } = {},
): Promise<ChartRepo> {
  const app = Fastify({ logger: false });
  const base = opts.path ?? '/stable';
  const requests: string[] = [];
  const repo: Omit<ChartRepo, 'url' | 'stop'> = { requests, tamper: new Map() };
  const basic = opts.auth
    ? `Basic ${Buffer.from(`${opts.auth.username}:${opts.auth.password}`).toString('base64')}`
    : undefined;
  app.addHook('onRequest', async (req, reply) => {
    requests.push(req.url);
    // A repository behind Basic auth, as chartmuseum with BASIC_AUTH_USER/PASS serves one.
    if (basic && req.headers.authorization !== basic)
      return reply.code(401).header('www-authenticate', 'Basic realm="charts"').send('unauthorized');
  });
  app.get(`${base}/index.yaml`, async (_req, reply) =>
    reply.type('application/x-yaml').send(opts.index ?? chartIndex(charts)),
  );
  app.get(`${base}/charts/:file`, async (req, reply) => {
    const file = (req.params as { file: string }).file;
    const c = charts.find((x) => `${x.name}-${x.version}.tgz` === file);
    if (!c) return reply.code(404).send('not found');
    return reply.type('application/gzip').send(repo.tamper?.get(file) ?? c.tgz);
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  return {
    ...repo,
    url: `http://127.0.0.1:${port}${base}`,
    stop: async () => {
      await app.close();
    },
  };
}
