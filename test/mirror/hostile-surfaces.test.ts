/**
 * Hostile input on the newer surfaces, through the real CLI: a chart repository whose index names
 * files outside the workspace, a chart repository URL carrying a password, a delete list whose
 * items reach outside the destination prefix (against a real docker-registry with deletes
 * enabled, checked with skopeo), and a registry behind a lying proxy whose listings never end or
 * are not JSON. Each is refused or survived: nothing outside the workspace or the prefix is
 * touched, no secret is in any output or file, and every run ends within seconds.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packChart, startChartRepo, type ChartRepo } from '../../lab/chart-repo.js';
import type { BuiltImage } from '../../lab/images.js';
import { toYaml } from '../../src/util/yaml.js';
import { airgap } from '../helpers/cli.js';
import { startFaultProxy, type FaultProxy } from '../helpers/fault-proxy.js';
import { refOf, seedRegistry, tempDir, writeMirrorConfig } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';
import { testCertificates } from '../helpers/tls.js';

/** Every file below `root` (relative), but `skip`'s subtree. */
async function filesBelow(root: string, skip: string): Promise<string[]> {
  const all = await readdir(root, { recursive: true });
  return all.filter((f) => !f.startsWith(skip)).sort();
}

/** Every file's text below `root`, joined (to look for a secret anywhere in it). */
async function allText(root: string): Promise<string> {
  if (!existsSync(root)) return '';
  const names = await readdir(root, { recursive: true, withFileTypes: true });
  const texts = await Promise.all(
    names.filter((d) => d.isFile()).map((d) => readFile(join(d.parentPath, d.name), 'latin1')),
  );
  return texts.join('\n');
}

describe('hostile input on the new surfaces', () => {
  let src: TestRegistry;
  let dst: TestRegistry;
  let repo: ChartRepo;
  let locked: ChartRepo;
  let proxy: FaultProxy;
  let dir: string;
  let authFile: string;
  let app: BuiltImage;
  let other: BuiltImage;
  let inside: BuiltImage;
  const SECRET = 'Pa55-w0rd-never-shown';

  beforeAll(async () => {
    [src, dst] = await Promise.all([startRegistry(), startRegistry()]);
    [app] = await seedRegistry(src, [{ repo: 'charts/app', tag: '1.0', layers: [{ size: 4_000 }] }]);
    // The destination holds an image below the prefix m/ and one outside it.
    [inside, other] = await seedRegistry(dst, [
      { repo: 'm/app', tag: '1.0', layers: [{ size: 3_000 }] },
      { repo: 'other/app', tag: '1.0', layers: [{ size: 3_000 }] },
    ]);
    dir = await tempDir('airgap-hostile2-');
    const chart = join(dir, 'chart', 'good');
    await mkdir(join(chart, 'templates'), { recursive: true });
    await writeFile(join(chart, 'Chart.yaml'), 'apiVersion: v2\nname: good\nversion: 1.0.0\n');
    await writeFile(
      join(chart, 'templates', 'pod.yaml'),
      `apiVersion: v1\nkind: Pod\nmetadata:\n  name: good\nspec:\n  containers:\n    - name: app\n      image: ${refOf(src, app)}\n`,
    );
    const tgz = await packChart(chart);
    const digest = createHash('sha256').update(tgz).digest('hex');
    const entry = (name: string, version: string) => ({
      apiVersion: 'v2',
      name,
      version,
      digest,
      urls: ['charts/good-1.0.0.tgz'],
    });
    // Entries built to write outside the workspace: a name and a version that climb out of it.
    const index = toYaml({
      apiVersion: 'v1',
      entries: {
        good: [entry('good', '1.0.0')],
        '../../../../escaped': [entry('../../../../escaped', '1.0.0')],
        evil: [entry('evil', '1.0.0/../../../../../escaped-too')],
      },
    });
    const charts = [{ name: 'good', version: '1.0.0', tgz }];
    [repo, locked] = await Promise.all([
      startChartRepo(charts, { index }),
      startChartRepo(charts, { auth: { username: 'charts', password: SECRET } }),
    ]);
    const basic = (u: string, p: string) => ({ auth: Buffer.from(`${u}:${p}`).toString('base64') });
    const lockedHost = new URL(locked.url).host;
    authFile = join(dir, 'auth.json');
    await writeFile(
      authFile,
      JSON.stringify({
        auths: {
          [src.host]: basic(src.username, src.password),
          [dst.host]: basic(dst.username, dst.password),
          [`${lockedHost}/stable`]: basic('charts', SECRET),
        },
      }),
      { mode: 0o600 },
    );
    proxy = await startFaultProxy({ target: dst.url, caFile: dst.caFile, tls: testCertificates().server });
    await writeFile(join(dir, 'proxy-ca.crt'), testCertificates().ca.certPem);
  }, 90_000);
  afterAll(async () => {
    await Promise.all([src?.stop(), dst?.stop(), repo?.stop(), locked?.stop(), proxy?.stop()]);
  });

  const access = () => ['--authfile', authFile, '--ca-file', src.caFile, '--ca-file', dst.caFile];

  it('a chart index naming files outside the workspace: those entries are skipped, as Helm skips them', async () => {
    const isc = await writeMirrorConfig(join(dir, 'helm-isc.yaml'), {
      helm: { repositories: [{ name: 'hostile', url: repo.url }] },
    });
    const before = await filesBelow(dir, 'plan-out');
    const r = await airgap(['mirror', 'plan', '-c', isc, `file://${join(dir, 'plan-out')}`, ...access()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/chart {4}good 1\.0\.0 \(hostile\): 1 image\(s\)/);
    // Nothing was written beside the workspace, under any name.
    expect(await filesBelow(dir, 'plan-out')).toEqual(before);
    expect(await readdir(join(dir, 'plan-out', 'working-dir', 'helm', 'charts'))).toEqual(['good-1.0.0.tgz']);
    const said = `${r.stdout}\n${r.stderr}`;
    expect(said).toContain(
      'skipped the entry for chart "../../../../escaped" "1.0.0": its name cannot name a file',
    );
    expect(said).toMatch(/skipped the entry for chart "evil" "1\.0\.0\/\.\.\/.*is not a semantic version/);
  }, 60_000);

  it('a chart repository URL with a password is refused before anything is fetched or written', async () => {
    const url = repo.url.replace('http://', `http://charts:${SECRET}@`);
    const isc = await writeMirrorConfig(join(dir, 'creds-isc.yaml'), {
      helm: { repositories: [{ name: 'creds', url, charts: [{ name: 'good' }] }] },
    });
    const out = join(dir, 'creds-out');
    const asked = repo.requests.length;
    const r = await airgap(['mirror', 'plan', '-c', isc, `file://${out}`, ...access()]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/helm\.repositories\[0\]\.url \S+ is written with a user name and password/);
    expect(r.stderr).toMatch(/creds-isc\.yaml:\d+:\d+/);
    expect(r.stderr).toContain('auth file');
    expect(`${r.stdout}${r.stderr}`).not.toContain(SECRET);
    expect(await allText(out)).not.toContain(SECRET);
    expect(repo.requests.length).toBe(asked);
  }, 60_000);

  it("a chart repository's credentials come from the auth file, for its host only", async () => {
    const isc = await writeMirrorConfig(join(dir, 'locked-isc.yaml'), {
      helm: { repositories: [{ name: 'locked', url: locked.url, charts: [{ name: 'good' }] }] },
    });
    const out = join(dir, 'locked-out');
    const r = await airgap(['mirror', 'plan', '-c', isc, `file://${out}`, ...access()]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/chart {4}good 1\.0\.0 \(locked\): 1 image\(s\)/);
    expect(await allText(out)).not.toContain(SECRET);
    // Without the entry, the repository's refusal is said, naming it.
    const bare = join(dir, 'bare-auth.json');
    await writeFile(bare, JSON.stringify({ auths: JSON.parse(await readFile(authFile, 'utf8')).auths }));
    const noCreds = JSON.parse(await readFile(authFile, 'utf8'));
    delete noCreds.auths[`${new URL(locked.url).host}/stable`];
    await writeFile(bare, JSON.stringify(noCreds), { mode: 0o600 });
    const refused = await airgap([
      'mirror',
      'plan',
      '-c',
      isc,
      `file://${join(dir, 'locked-out-2')}`,
      '--authfile',
      bare,
      '--ca-file',
      src.caFile,
    ]);
    expect(refused.exitCode).toBe(1);
    expect(refused.stdout).toMatch(/helm repository "locked".*HTTP 401/);
  }, 60_000);

  describe('a delete list reaching outside the destination prefix is refused, and nothing is deleted', () => {
    const cases: [string, (reg: string, digest: string) => string, RegExp][] = [
      ['a dot segment', (reg, d) => `docker://${reg}/m/../other/app@${d}`, /is not a canonical reference/],
      [
        'a percent-encoded dot segment',
        (reg, d) => `docker://${reg}/m/%2e%2e/other/app@${d}`,
        /is not a canonical reference/,
      ],
      [
        'a repository outside the prefix',
        (reg, d) => `docker://${reg}/other/app@${d}`,
        /outside the destination prefix m\//,
      ],
      ['the prefix itself', (reg, d) => `docker://${reg}/m@${d}`, /outside the destination prefix m\//],
      ['a tag instead of a digest', (reg) => `docker://${reg}/m/app:1.0`, /not pinned by digest/],
    ];
    for (const [name, item, why] of cases) {
      it(
        name,
        async () => {
          const list = join(dir, `delete-${name.replace(/\W+/g, '-')}.yaml`);
          // A good item first: the whole list is refused before any delete.
          await writeFile(
            list,
            toYaml({
              apiVersion: 'mirror.openshift.io/v2alpha1',
              kind: 'DeleteImageList',
              items: [
                {
                  imageName: 'm/app',
                  imageReference: `docker://${dst.host}/m/app@${inside.digest}`,
                  type: 'image',
                },
                { imageName: 'x', imageReference: item(dst.host, other.digest), type: 'image' },
              ],
            }),
          );
          const r = await airgap([
            'mirror',
            'delete',
            '--delete-yaml-file',
            list,
            `docker://${dst.host}/m`,
            ...access(),
          ]);
          expect(r.exitCode, r.stderr).toBe(2);
          expect(r.stderr).toMatch(/items\[1\]\.imageReference/);
          expect(r.stderr).toMatch(why);
          expect(await skopeoDigest(`docker://${dst.skopeoHost}/other/app:1.0`, dst.skopeo)).toBe(
            other.digest,
          );
          expect(await skopeoDigest(`docker://${dst.skopeoHost}/m/app:1.0`, dst.skopeo)).toBe(inside.digest);
        },
        30_000,
      );
    }
  });

  describe('listings that never end or lie stop with the registry named, and no delete list is written', () => {
    const generate = async (ws: string) => {
      const disc = join(dir, 'disc.yaml');
      await writeFile(
        disc,
        `kind: DeleteImageSetConfiguration\napiVersion: mirror.openshift.io/v2alpha1\ndelete:\n  additionalImages:\n    - name: ${refOf(src, app)}\n`,
      );
      const auth = join(dir, 'proxy-auth.json');
      const creds = JSON.parse(await readFile(authFile, 'utf8'));
      creds.auths[proxy.host] = creds.auths[dst.host];
      await writeFile(auth, JSON.stringify(creds), { mode: 0o600 });
      return airgap(
        [
          'mirror',
          'delete',
          '-c',
          disc,
          '--workspace',
          `file://${ws}`,
          '--generate',
          `docker://${proxy.host}/m`,
          '--authfile',
          auth,
          '--ca-file',
          src.caFile,
          '--ca-file',
          join(dir, 'proxy-ca.crt'),
        ],
        { timeoutMs: 60_000 },
      );
    };
    const cases: [string, (path: string) => { headers?: Record<string, string>; body: string }, RegExp][] = [
      [
        'a catalog whose next page links back to itself',
        () => ({
          headers: { link: '</v2/_catalog?n=1000&last=m/app>; rel="next"' },
          body: '{"repositories":["m/app"]}',
        }),
        /links back to a page it already sent|no new name/,
      ],
      [
        'a catalog that pages forever, each page new',
        (path) => {
          const n = Number(/last=m\/r(\d+)/.exec(path)?.[1] ?? 0) + 1;
          return {
            headers: { link: `</v2/_catalog?n=1&last=m/r${n}>; rel="next"` },
            body: JSON.stringify({ repositories: [`m/r${n}`] }),
          };
        },
        /goes on past 10000 pages/,
      ],
      ['a catalog page that is not JSON', () => ({ body: '<html>proxy error</html>' }), /is not JSON/],
      [
        'a catalog naming a repository with a dot segment',
        () => ({ body: '{"repositories":["m/../other/app"]}' }),
        /lists "m\/\.\.\/other\/app", which is not a repository path/,
      ],
    ];
    for (const [name, answer, why] of cases) {
      it(
        name,
        async () => {
          proxy.setRules([{ match: { path: /^\/v2\/_catalog/ }, fault: 'answer', answer, times: Infinity }]);
          const ws = join(dir, `ws-${name.replace(/\W+/g, '-')}`);
          const started = Date.now();
          const r = await generate(ws);
          expect(r.exitCode, r.stderr).toBe(1);
          expect(r.stderr).toContain(`the repository catalog of ${proxy.host}`);
          expect(r.stderr).toMatch(why);
          expect(existsSync(join(ws, 'delete', 'delete-images.yaml'))).toBe(false);
          expect(Date.now() - started).toBeLessThan(45_000);
        },
        60_000,
      );
    }
  });
});
