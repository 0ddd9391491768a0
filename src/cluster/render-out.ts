/**
 * `--render <dir>`: the rendered objects written one per file, numbered in apply order
 * (`kubectl apply -f <dir>` applies them in that order), like `hcp create cluster --render` but
 * reviewable one object at a time. Secrets are left out unless `sensitive`; when written, 0600.
 */
import { join } from 'node:path';
import { toYaml } from '../util/yaml.js';
import { writeFilesAtomic } from '../util/fs.js';
import type { RenderedObject } from './render/types.js';

function slug(s: string): string {
  return s.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');
}

/** Write the objects into `dir`; returns the files written. */
export async function writeRendered(
  dir: string,
  items: readonly RenderedObject[],
  opts: { sensitive?: boolean } = {},
): Promise<{ files: string[]; omitted: number }> {
  const kept = items.filter((i) => opts.sensitive === true || !i.sensitive);
  const width = String(kept.length).length < 2 ? 2 : String(kept.length).length;
  const files = kept.map((item, i) => {
    const o = item.object;
    const name = [String(i + 1).padStart(width, '0'), o.kind, o.metadata.namespace, o.metadata.name]
      .filter(Boolean)
      .map((p) => slug(String(p)))
      .join('-');
    return {
      path: join(dir, `${name}.yaml`),
      data: toYaml(o),
      ...(item.sensitive ? { mode: 0o600 } : {}),
    };
  });
  await writeFilesAtomic(files, { force: true });
  return { files: files.map((f) => f.path), omitted: items.length - kept.length };
}
