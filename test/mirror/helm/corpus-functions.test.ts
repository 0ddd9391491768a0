import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bcryptjs from 'bcryptjs';
import { loadChart, renderChart } from '../../../src/mirror/helm/chart.js';
import { imagesOf } from '../../../src/mirror/helm/images.js';
import { loadYaml } from '../../../src/mirror/helm/yaml.js';
import { writeChart } from '../../fixtures/helm/charts.js';
import { GITEA_LIKE } from '../../fixtures/helm/corpus/functions.js';

let tmp: string;
let GITEA: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'airgap-helm-funcs-'));
  GITEA = await writeChart(join(tmp, 'gitea'), GITEA_LIKE);
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

type Rendered = ReturnType<typeof renderChart>;
const manifest = (r: Rendered, name: string) => {
  const m = r.manifests.find((x) => x.template === `gitea/templates/${name}`);
  if (!m) throw new Error(`no ${name} in ${r.manifests.map((x) => x.template).join(', ')}`);
  return m.text;
};

describe('a Bitnami-shaped chart (common library) calling the functions airgap lacked', () => {
  it('renders and yields its images: from values, from a TOML file, from a JSON string', async () => {
    const rendered = renderChart(await loadChart(GITEA));
    expect(rendered.manifests.map((m) => m.template).sort()).toEqual([
      'gitea/templates/backup-cronjob.yaml',
      'gitea/templates/configmap.yaml',
      'gitea/templates/deployment.yaml',
      'gitea/templates/secret.yaml',
    ]);
    expect(
      imagesOf(rendered.manifests)
        .map((i) => i.image)
        .sort(),
    ).toEqual([
      'docker.io/bitnami/git:2.47.0-debian-12-r0',
      'docker.io/bitnami/gitea:1.22.3-debian-12-r0',
      'docker.io/bitnami/os-shell:12-debian-12-r32',
    ]);
  });

  it('takes the registry host out of a registry written as a URL (urlParse)', async () => {
    const rendered = renderChart(await loadChart(GITEA), {
      values: { global: { imageRegistry: 'https://registry.example.com:5000' } },
    });
    expect(imagesOf(rendered.manifests).map((i) => i.image)).toContain(
      'registry.example.com:5000/bitnami/gitea:1.22.3-debian-12-r0',
    );
  });

  it('writes what Helm writes for the paths, URLs, durations and text shaping', async () => {
    const rendered = renderChart(await loadChart(GITEA));
    const config = loadYaml(manifest(rendered, 'configmap.yaml')) as { data: Record<string, string> };
    expect(config.data['app.ini']).toBe(
      [
        '; Gitea is a painless self-hosted Git service, written in',
        '; Go, with issues, pull requests and a wiki',
        '[server]',
        'ROOT_URL = https://git.example.com/gitea',
        'TIMEOUT = 1m30s',
        '',
      ].join('\n'),
    );
    const deployment = manifest(rendered, 'deployment.yaml');
    expect(deployment).toContain('name: airgap-gitea\n');
    expect(deployment).toContain('gitea.example.com/summary: "... is a painless self-hosted Git ser..."');
    expect(deployment).toContain('replicas: 2\n');
    expect(deployment).toMatch(/checksum\/config: [0-9a-f]{63}\n/);
    expect(deployment).toContain(
      '              mountPath: /bitnami/gitea/custom/conf/app.ini\n              subPath: app.ini\n',
    );
    expect(deployment).toContain('cpu: 50m');
    expect(deployment).toContain('memory: 64Mi');
    const cron = manifest(rendered, 'backup-cronjob.yaml');
    expect(cron).toContain('gitea.example.com/retention: "7d"');
    expect(cron).toContain('schedule: "0 3 * * *"');
    expect(cron).toContain('"/backup/gitea.zip"');
  });

  it('makes a random password and its htpasswd and bcrypt hashes that check against it', async () => {
    const rendered = renderChart(await loadChart(GITEA));
    const secret = loadYaml(manifest(rendered, 'secret.yaml')) as { data: Record<string, string> };
    const decode = (k: string) => Buffer.from(secret.data[k]!, 'base64').toString();
    const password = decode('password');
    expect(Buffer.from(password, 'base64')).toHaveLength(18);
    const [user, hash] = decode('htpasswd').split(':');
    expect(user).toBe('gitea');
    expect(bcryptjs.compareSync(password, hash!)).toBe(true);
    expect(bcryptjs.compareSync(password, decode('admin-hash'))).toBe(true);
  });

  it("stops with the chart's own message when the data file is not an absolute path", async () => {
    const chart = await loadChart(GITEA);
    expect(() => renderChart(chart, { values: { persistence: { dataFile: 'conf/app.ini' } } })).toThrow(
      /persistence\.dataFile must be an absolute path, got "conf\/app\.ini"/,
    );
  });
});
