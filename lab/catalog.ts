import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Synthetic file-based catalogs shaped like Red Hat's (one `<package>/catalog.json` of concatenated,
 * 4-space indented objects: `olm.package`, `olm.channel` with replaces/skips/skipRange, `olm.bundle`
 * with `olm.package` and `olm.gvk` properties and relatedImages). Channel `c` of a package holds
 * versions `<c+1>.<i>.0`; every fourth entry replaces the one two below and skips the one just
 * below, as real catalogs do for respins. The last channel is the default. Deterministic.
 */
export interface SyntheticCatalogSpec {
  /** Directory to write (the catalog's `/configs`). */
  dir: string;
  packages: number;
  channelsPerPackage: number;
  /** Bundles per channel, or a function of package and channel index. */
  bundlesPerChannel: number | ((pkg: number, channel: number) => number);
  /** Registry and namespace prefix of every image (`registry.example.com/lab`). */
  registry: string;
  /** Names of the first packages (e.g. `multicluster-engine`); the rest are `lab-operator-NNN`. */
  packageNames?: string[];
  /**
   * The reference of each image the catalog names (bundle image, operator image, the image all
   * bundles share); default: made-up digests under `registry`. Give real ones to mirror the catalog.
   */
  imageRef?: (kind: 'bundle' | 'operator' | 'shared', pkg: string, bundle: string) => string;
}

/** What was written, with the head of every channel. */
export interface SyntheticCatalog {
  dir: string;
  packages: {
    name: string;
    defaultChannel: string;
    channels: { name: string; head: string; bundles: string[] }[];
  }[];
  /** `package/channel` → head bundle name. */
  heads: Map<string, string>;
  bundles: number;
}

const digest = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`;

/** Package name for index `p`. */
export function syntheticPackageName(p: number): string {
  return `lab-operator-${String(p).padStart(3, '0')}`;
}

/** Write the catalog tree and return its expected heads. */
export async function buildSyntheticCatalog(spec: SyntheticCatalogSpec): Promise<SyntheticCatalog> {
  const perChannel =
    typeof spec.bundlesPerChannel === 'number'
      ? () => spec.bundlesPerChannel as number
      : spec.bundlesPerChannel;
  const result: SyntheticCatalog = { dir: spec.dir, packages: [], heads: new Map(), bundles: 0 };
  const ref =
    spec.imageRef ??
    ((kind: 'bundle' | 'operator' | 'shared', pkg: string, name: string) =>
      kind === 'shared'
        ? `${spec.registry}/common/kube-rbac-proxy@${digest('kube-rbac-proxy')}`
        : `${spec.registry}/${pkg}/${kind}@${digest(`${name}/${kind}`)}`);
  const sharedProxy = ref('shared', '', '');
  for (let p = 0; p < spec.packages; p++) {
    const pkg = spec.packageNames?.[p] ?? syntheticPackageName(p);
    const objects: object[] = [];
    const bundles: object[] = [];
    const channels: SyntheticCatalog['packages'][number]['channels'] = [];
    const channelNames = Array.from({ length: spec.channelsPerPackage }, (_, c) => `stable-v${c + 1}`);
    const defaultChannel = channelNames[channelNames.length - 1];
    objects.push({
      schema: 'olm.package',
      name: pkg,
      defaultChannel,
      icon: { base64data: Buffer.from(`<svg>${pkg}</svg>`).toString('base64'), mediatype: 'image/svg+xml' },
    });
    for (let c = 0; c < spec.channelsPerPackage; c++) {
      const major = c + 1;
      const n = Math.max(1, perChannel(p, c));
      const names = Array.from({ length: n }, (_, i) => `${pkg}.v${major}.${i}.0`);
      const entries = names.map((name, i) => {
        const version = `${major}.${i}.0`;
        const entry: Record<string, unknown> = { name };
        if (i % 4 === 3) {
          entry.replaces = names[i - 2];
          entry.skips = [names[i - 1]];
        } else if (i > 0) entry.replaces = names[i - 1];
        entry.skipRange = i === 0 ? `<${version}` : `>=${major}.0.0 <${version}`;
        return entry;
      });
      objects.push({ schema: 'olm.channel', package: pkg, name: channelNames[c], entries });
      names.forEach((name, i) => {
        const version = `${major}.${i}.0`;
        const bundleImage = ref('bundle', pkg, name);
        bundles.push({
          schema: 'olm.bundle',
          name,
          package: pkg,
          image: bundleImage,
          properties: [
            { type: 'olm.gvk', value: { group: `${pkg}.example.com`, kind: 'Widget', version: 'v1' } },
            { type: 'olm.package', value: { packageName: pkg, version } },
            { type: 'olm.csv.metadata', value: { displayName: pkg, provider: { name: 'airgap lab' } } },
          ],
          relatedImages: [
            { name: 'operator', image: ref('operator', pkg, name) },
            { name: 'kube-rbac-proxy', image: sharedProxy },
            { name: '', image: bundleImage },
          ],
        });
      });
      channels.push({ name: channelNames[c], head: names[n - 1], bundles: names });
      result.heads.set(`${pkg}/${channelNames[c]}`, names[n - 1]);
      result.bundles += n;
    }
    const pkgDir = path.join(spec.dir, pkg);
    await mkdir(pkgDir, { recursive: true });
    const text = [...objects, ...bundles].map((o) => JSON.stringify(o, null, 4)).join('\n');
    await writeFile(path.join(pkgDir, 'catalog.json'), `${text}\n`);
    result.packages.push({ name: pkg, defaultChannel, channels });
  }
  return result;
}
