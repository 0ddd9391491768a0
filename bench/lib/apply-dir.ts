/**
 * airgap's apply, on its own, for the install benchmark: every YAML file of a directory (in name
 * order, as `kubectl apply -f <dir>` takes them) applied with the Kube client the install uses
 * (server-side apply, field manager airgap). Usage: node build/bench/lib/apply-dir.js <kubeconfig> <dir>
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { load } from 'js-yaml';
import { applyObjects } from '../../src/cluster/install/apply.js';
import { Kube, type KubeObject } from '../../src/cluster/kube.js';
import { silent } from '../../src/cluster/progress.js';

const [kubeconfig, dir] = process.argv.slice(2);
if (!kubeconfig || !dir) throw new Error('usage: apply-dir.js <kubeconfig> <dir>');
const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
const objects = await Promise.all(
  files.map(async (f) => load(await readFile(join(dir, f), 'utf8')) as KubeObject),
);
const start = performance.now();
await applyObjects(Kube.connect({ kubeconfig }), objects, silent);
// The apply alone, without node's start and the client library's import: one line for the bench.
process.stdout.write(`${JSON.stringify({ applyMs: performance.now() - start })}\n`);
