/**
 * The measured process of bench/helm.ts: read a chart archive, load it, render it and find its
 * images, as `airgap mirror plan` does for a chart, and print what that cost as one JSON line. It
 * imports only what that work needs (no lab, no test helpers), so its whole-process CPU and peak
 * RSS are the engine's and Node's.
 *
 * Usage: node build/bench/lib/helm-child.js <chart.tgz>
 */
import { readFile } from 'node:fs/promises';
import { loadChart, renderChart } from '../../src/mirror/helm/chart.js';
import { imagesOf } from '../../src/mirror/helm/images.js';

/** Where images are looked for beyond pod specs: the Prometheus and Alertmanager custom resources. */
export const IMAGE_PATHS = ['{.spec.image}'];
const MB = 1e6;

/** What the child measured of its own work (after Node's start and the imports). */
export interface ChildResult {
  manifests: number;
  images: number;
  outputBytes: number;
  /** Wall time of each phase, in ms. */
  loadMs: number;
  renderMs: number;
  imagesMs: number;
  /** CPU (user + system) of the three phases together, and of each, in seconds (process.cpuUsage). */
  workCpuS: number;
  loadCpuS: number;
  renderCpuS: number;
  imagesCpuS: number;
  /** CPU the process had used before the work: Node's start and the imports. */
  startCpuS: number;
  heapUsedMB: number;
}

const cpuS = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
const now = () => Number(process.hrtime.bigint()) / 1e6;

async function main(tgz: string): Promise<void> {
  const start = process.cpuUsage();
  let t = now();
  const chart = await loadChart(await readFile(tgz), tgz);
  const loadMs = now() - t;
  const loaded = process.cpuUsage();
  t = now();
  const { manifests } = renderChart(chart);
  const renderMs = now() - t;
  const rendered = process.cpuUsage();
  t = now();
  const images = imagesOf(manifests, { imagePaths: IMAGE_PATHS });
  const imagesMs = now() - t;
  const found = process.cpuUsage();
  const out: ChildResult = {
    manifests: manifests.length,
    images: images.length,
    outputBytes: manifests.reduce((a, m) => a + m.text.length, 0),
    loadMs,
    renderMs,
    imagesMs,
    workCpuS: cpuS(found) - cpuS(start),
    loadCpuS: cpuS(loaded) - cpuS(start),
    renderCpuS: cpuS(rendered) - cpuS(loaded),
    imagesCpuS: cpuS(found) - cpuS(rendered),
    startCpuS: cpuS(start),
    heapUsedMB: process.memoryUsage().heapUsed / MB,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// Run only as a script: bench/helm.ts imports this module for its types and IMAGE_PATHS.
if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const tgz = process.argv[2];
  if (!tgz) {
    process.stderr.write('usage: node build/bench/lib/helm-child.js <chart.tgz>\n');
    process.exit(2);
  }
  await main(tgz);
}
