/**
 * A file-based catalog model written back out as files, the way `opm` writes them (declcfg WriteFS
 * + WriteJSON), so a rebuilt catalog image looks like one opm would have built: one
 * `<package>/catalog.json` per package, objects in opm's order, 4-space indented JSON.
 */
import { AirgapError } from '../../util/errors.js';
import type { FbcModel } from './fbc.js';
import { MirrorError } from '../errors.js';

const json = (o: unknown): string => `${JSON.stringify(o, null, 4)}\n`;
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * The catalog as files, as `opm` writes it (declcfg WriteFS + WriteJSON): `<package>/catalog.json`
 * per package holding its olm.package, olm.channel (by name), olm.bundle (by name), olm.deprecations
 * and other objects (by schema, then name) as concatenated 4-space indented JSON; objects of no
 * package go to `catalog.json` at the root. Each object is its original `meta`, with the filtered
 * channel entries and default channel. Keys are paths relative to the configs directory, sorted.
 */
export function renderFbc(model: FbcModel): Map<string, Buffer> {
  const texts = new Map<string, string[]>();
  const add = (pkg: string, o: unknown) => {
    const list = texts.get(pkg) ?? [];
    list.push(json(o));
    texts.set(pkg, list);
  };
  for (const pkg of [...model.packages.values()].sort(byName)) {
    if (pkg.name === '.' || pkg.name === '..' || pkg.name.includes('/'))
      throw new AirgapError(
        MirrorError.CATALOG_INVALID,
        `package name ${JSON.stringify(pkg.name)} cannot be a directory`,
        {
          where: pkg.where,
          hint: 'package names are DNS-1123 labels; this catalog is malformed',
        },
      );
    add(
      pkg.name,
      pkg.defaultChannel === undefined ? pkg.meta : { ...pkg.meta, defaultChannel: pkg.defaultChannel },
    );
    for (const ch of [...pkg.channels.values()].sort(byName))
      add(pkg.name, { ...ch.meta, entries: ch.entries });
    for (const b of [...pkg.bundles.values()].sort(byName)) add(pkg.name, b.meta);
  }
  for (const d of model.deprecations) add(str(d.package), d);
  const others = [...model.others].sort((a, b) => {
    const [x, y] = [`${str(a.schema)}\0${str(a.name)}`, `${str(b.schema)}\0${str(b.name)}`];
    return x < y ? -1 : x > y ? 1 : 0;
  });
  for (const o of others) add(str(o.package), o);
  const out = new Map<string, Buffer>();
  for (const pkg of [...texts.keys()].sort()) {
    out.set(pkg === '' ? 'catalog.json' : `${pkg}/catalog.json`, Buffer.from(texts.get(pkg)!.join('')));
  }
  return out;
}
