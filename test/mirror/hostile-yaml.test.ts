/**
 * YAML bombs through the real CLI, with a 200 MiB heap: an index.yaml a chart repository serves
 * whose aliases stand for billions of nodes, a chart whose values.yaml is a "billion laughs", an
 * image set configuration with one. Each ends in seconds with the source named and the limit said;
 * the chart alone fails, the configuration is a usage error.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChartRepo, type ChartRepo } from '../../lab/chart-repo.js';
import { airgap } from '../helpers/cli.js';
import { billionLaughs, tempDir, writeMirrorConfig } from '../helpers/fixtures.js';

/**
 * A 24 KB index.yaml whose 700 charts each list the same 1,500 versions, each with the same 3,000
 * URLs: three billion URLs for whatever reads the index as a tree.
 */
function bombIndex(): string {
  const lines = ['apiVersion: v1'];
  lines.push(`urls: &U [${Array(3000).fill('"u"').join(',')}]`);
  lines.push('version: &v {name: c0, version: "1.0.0", urls: *U}');
  lines.push(`versions: &V [${Array(1500).fill('*v').join(',')}]`);
  lines.push('entries:');
  for (let i = 0; i < 700; i++) lines.push(`  c${i}: *V`);
  return `${lines.join('\n')}\n`;
}

async function writeChart(dir: string, files: Record<string, string>): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

describe('YAML bombs through the CLI', () => {
  let dir: string;
  let repo: ChartRepo;
  /** NODE_OPTIONS: a 200 MiB heap, and the peak resident set size written as the CLI exits. */
  let env: Record<string, string>;

  beforeAll(async () => {
    dir = await tempDir('airgap-yaml-bombs-');
    const index = bombIndex();
    expect(index.length).toBeGreaterThan(23_000);
    expect(index.length).toBeLessThan(25_000);
    repo = await startChartRepo([], { index });
    const hook = join(dir, 'max-rss.mjs');
    await writeFile(
      hook,
      "process.on('exit', () => process.stderr.write(`max-rss-kib=${process.resourceUsage().maxRSS}\\n`));\n",
    );
    env = { NODE_OPTIONS: `--import=${pathToFileURL(hook).href} --max-old-space-size=200` };
  });
  afterAll(async () => {
    await repo?.stop();
  });

  /** Peak RSS in MiB, from the hook's line. */
  const peakMiB = (stderr: string): number => Number(/max-rss-kib=(\d+)/.exec(stderr)?.[1]) / 1024;

  it('an alias-bomb index.yaml: the repository named and the limit said, in seconds', async () => {
    const isc = await writeMirrorConfig(join(dir, 'index-bomb.yaml'), {
      helm: { repositories: [{ name: 'bombs', url: repo.url, charts: [{ name: 'c0' }] }] },
    });
    const started = Date.now();
    const r = await airgap(['mirror', 'plan', '-c', isc, `file://${join(dir, 'out-index')}`], { env });
    const seconds = (Date.now() - started) / 1000;
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stdout).toContain(
      `chart    c0 (bombs): FAILED, the index.yaml of helm repository "bombs" (${repo.url}/index.yaml)`,
    );
    expect(r.stdout).toContain(
      'its aliases expand it to more than 16,000,000 nodes (a "billion laughs" document)',
    );
    expect(r.stdout).toContain(
      'hint: airgap refuses to read a document this large or this aliased from a registry',
    );
    expect(seconds).toBeLessThan(10);
    console.log(`index.yaml bomb: ${seconds.toFixed(1)} s, peak RSS ${peakMiB(r.stderr).toFixed(0)} MiB`);
    expect(peakMiB(r.stderr)).toBeLessThan(250);
  }, 30_000);

  it('a billion-laughs values.yaml fails that chart alone', async () => {
    const bomb = await writeChart(join(dir, 'bomb'), {
      'Chart.yaml': 'apiVersion: v2\nname: bomb\nversion: 0.1.0\n',
      'values.yaml': `${billionLaughs('laughs').join('\n')}\n`,
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\ndata:\n  n: {{ len .Values.laughs | quote }}\n',
    });
    const good = await writeChart(join(dir, 'good'), {
      'Chart.yaml': 'apiVersion: v2\nname: good\nversion: 1.0.0\n',
      'values.yaml': 'replicas: 1\n',
      'templates/cm.yaml': 'apiVersion: v1\nkind: ConfigMap\ndata:\n  r: {{ .Values.replicas | quote }}\n',
    });
    const isc = await writeMirrorConfig(join(dir, 'values-bomb.yaml'), {
      helm: {
        local: [
          { name: 'bomb', path: bomb },
          { name: 'good', path: good },
        ],
      },
    });
    const started = Date.now();
    const r = await airgap(['mirror', 'plan', '-c', isc, `file://${join(dir, 'out-values')}`], { env });
    expect(r.exitCode, r.stderr).toBe(1);
    // The chart's files share one budget of nodes (4 million), less what Chart.yaml took.
    expect(r.stdout).toMatch(
      new RegExp(
        `chart {4}bomb: FAILED, ${bomb}/values\\.yaml: its aliases expand it to more than 3,999,9\\d\\d nodes \\(a "billion laughs" document\\)`,
      ),
    );
    expect(r.stdout).toContain('hint: write the repeated parts out, or use fewer nested aliases');
    expect(r.stdout).toMatch(/chart {4}good 1\.0\.0: 0 image\(s\)/);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(peakMiB(r.stderr)).toBeLessThan(250);
  }, 30_000);

  it('an image set configuration with an alias bomb is a usage error naming the file', async () => {
    const file = join(dir, 'isc-bomb.yaml');
    const lines = ['kind: ImageSetConfiguration', 'apiVersion: mirror.openshift.io/v2alpha1'];
    lines.push(...billionLaughs(), 'mirror:', '  additionalImages: *l9');
    await writeFile(file, `${lines.join('\n')}\n`);
    const r = await airgap(['mirror', 'plan', '-c', file, `file://${join(dir, 'out-isc')}`], { env });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `error [YAML_LIMIT]: ${file}: its aliases expand it to more than 16,000,000 nodes (a "billion laughs" document)`,
    );
    expect(r.stderr).toContain('hint: write the repeated parts out, or use fewer nested aliases');
  }, 30_000);
});
