import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Descriptor, ManifestData } from '../src/mirror/manifest.js';
import { MediaType } from '../src/mirror/media-types.js';
import type { OciLayout } from '../src/mirror/layout/store.js';
import { CONFIGS_LABEL } from '../src/mirror/openshift/catalog-config.js';
import { writeTar, type TarEntry } from '../src/mirror/openshift/tar-writer.js';
import { putImageManifest } from './images.js';

/**
 * Synthetic operator catalog images shaped like Red Hat's (redhat-operator-index v4.11+): a base
 * layer (opm, /etc, a 1777 /tmp), a layer with `/configs/<package>/catalog.json`, a layer with the
 * pre-built opm cache under `/tmp/cache`, the label `operators.operatorframework.io.index.configs.v1`,
 * `Entrypoint ["/bin/opm"]` and `Cmd ["serve","/configs","--cache-dir=/tmp/cache"]`. The catalog comes
 * from a directory (one written by `buildSyntheticCatalog`, or a real sample read in place) or from
 * files given inline. Deterministic: the same options give the same digests.
 */
export interface LabLayer {
  /** Files to add, by path from the image root (`configs/foo/catalog.json`). */
  files?: Record<string, string | Buffer>;
  /** Paths to delete from the layers below (`configs/foo/catalog.json` → `configs/foo/.wh.catalog.json`). */
  whiteouts?: string[];
  /** Directories whose lower content is hidden (`configs` → `configs/.wh..wh..opq`). */
  opaque?: string[];
  /** The layer's tar bytes as they are (a damaged tar, say); the other fields are then ignored. */
  raw?: Buffer;
}

export interface CatalogImageSpec {
  /** Catalog directories to put under the configs directory, merged (read in place, never copied elsewhere). */
  fbcDir?: string | string[];
  /** Or (also) files by path relative to the configs directory. */
  files?: Record<string, string | Buffer>;
  /** Repository in the layout (`redhat/redhat-operator-index`). */
  repo: string;
  /** Default `v4.18`. */
  tag?: string;
  /** Several architectures make an index (one image per architecture); default a single amd64 image. */
  arches?: string[];
  format: 'docker' | 'oci';
  /** Layer compression; default gzip. `none` gives uncompressed tar layers (OCI only). */
  compression?: 'gzip' | 'none';
  /** Add the pre-built opm cache layer under /tmp/cache (default true). */
  withCache?: boolean;
  /** The FBC root (default `/configs`). */
  configsDir?: string;
  /** Set the configs label (default true); false tests the `/configs` default. */
  label?: boolean;
  /** Override the image's Cmd. */
  cmd?: string[];
  /** Extra layers on top (whiteouts, late additions). */
  upperLayers?: LabLayer[];
  /** Extra config labels. */
  labels?: Record<string, string>;
}

export interface BuiltCatalogImage {
  /** The top-level manifest (the index when several architectures were asked for). */
  digest: string;
  mediaType: string;
  /** Layout entry: `repo:tag`. */
  refName: string;
  repo: string;
  tag: string;
  /** Children by architecture (multi-arch only). */
  children?: Record<string, string>;
  /** The configs directory of the image (`/configs`). */
  configsDir: string;
  /** Files put under the configs directory, relative to it, sorted. */
  files: string[];
}

const CREATED = '2025-01-01T00:00:00Z';

async function readTree(root: string, rel = ''): Promise<[string, Buffer][]> {
  const out: [string, Buffer][] = [];
  const names = (await readdir(path.join(root, rel), { withFileTypes: true })).sort((a, b) =>
    a.name < b.name ? -1 : 1,
  );
  for (const d of names) {
    const r = rel ? `${rel}/${d.name}` : d.name;
    if (d.isDirectory()) out.push(...(await readTree(root, r)));
    else if (d.isFile()) out.push([r, await readFile(path.join(root, r))]);
  }
  return out;
}

/** Entries for files by path, with a directory entry for each parent below `under` (not for `under` itself). */
function fileEntries(files: [string, Buffer][], under = ''): TarEntry[] {
  const entries: TarEntry[] = [];
  const dirs = new Set<string>();
  for (const [p, data] of [...files].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      if (d.length > under.length && !dirs.has(d)) {
        dirs.add(d);
        entries.push({ path: `${d}/`, type: 'Directory' });
      }
    }
    entries.push({ path: p, type: 'File', data });
  }
  return entries;
}

const sha = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

async function buildSingle(
  layout: OciLayout,
  spec: CatalogImageSpec,
  arch: string,
  catalog: [string, Buffer][],
  configs: string,
): Promise<ManifestData> {
  const docker = spec.format === 'docker';
  const gzip = docker || (spec.compression ?? 'gzip') === 'gzip';
  const layerType = docker ? MediaType.DockerLayerGzip : gzip ? MediaType.OciLayerGzip : MediaType.OciLayer;
  const tars: { tar: Buffer; createdBy: string }[] = [];
  tars.push({
    createdBy: 'COPY base /',
    tar: writeTar([
      { path: 'bin/', type: 'Directory' },
      {
        path: 'bin/opm',
        type: 'File',
        mode: 0o755,
        data: Buffer.from(`#!/bin/sh\necho "fake opm (${arch})"\n`),
      },
      { path: 'etc/', type: 'Directory' },
      { path: 'etc/os-release', type: 'File', data: Buffer.from(`NAME="Lab Linux"\nID=lab\nARCH=${arch}\n`) },
      { path: 'etc/nsswitch.conf', type: 'File', data: Buffer.from('hosts: files dns\n') },
      { path: 'tmp/', type: 'Directory', mode: 0o1777 },
    ]),
  });
  const configsFiles = catalog.map(([rel, data]): [string, Buffer] => [`${configs}/${rel}`, data]);
  tars.push({
    createdBy: `ADD catalog ${'/' + configs}`,
    tar: writeTar([{ path: `${configs}/`, type: 'Directory' }, ...fileEntries(configsFiles, configs)]),
  });
  if (spec.withCache ?? true) {
    const digest = sha(Buffer.concat(catalog.map(([, d]) => d)));
    const pkgs = [...new Set(catalog.map(([rel]) => rel.split('/')[0]))].join('\n');
    tars.push({
      createdBy: `RUN /bin/opm serve /${configs} --cache-dir=/tmp/cache --cache-only`,
      tar: writeTar([
        { path: 'tmp/cache/', type: 'Directory' },
        { path: 'tmp/cache/pogreb.v1/', type: 'Directory' },
        { path: 'tmp/cache/pogreb.v1/digest', type: 'File', data: Buffer.from(digest.slice(7, 23)) },
        { path: 'tmp/cache/pogreb.v1/db/', type: 'Directory' },
        {
          path: 'tmp/cache/pogreb.v1/db/00000-1.psg',
          type: 'File',
          data: Buffer.from(`fake cache\n${pkgs}\n`),
        },
        { path: 'tmp/cache/pogreb.v1/db/index.pix', type: 'File', data: Buffer.alloc(512, 7) },
        { path: 'tmp/cache/pogreb.v1/db/main.pix', type: 'File', data: Buffer.alloc(512, 9) },
      ]),
    });
  }
  for (const [i, l] of (spec.upperLayers ?? []).entries()) {
    if (l.raw) {
      tars.push({ createdBy: `upper layer ${i + 1} (raw)`, tar: l.raw });
      continue;
    }
    const entries: TarEntry[] = [];
    for (const d of l.opaque ?? []) {
      entries.push({ path: `${d.replace(/^\/|\/$/g, '')}/`, type: 'Directory' });
      entries.push({ path: `${d.replace(/^\/|\/$/g, '')}/.wh..wh..opq`, type: 'File' });
    }
    for (const w of l.whiteouts ?? []) {
      const p = w.replace(/^\/|\/$/g, '');
      const slash = p.lastIndexOf('/');
      entries.push({ path: `${p.slice(0, slash + 1)}.wh.${p.slice(slash + 1)}`, type: 'File' });
    }
    const files = Object.entries(l.files ?? {}).map(([p, d]): [string, Buffer] => [
      p.replace(/^\//, ''),
      Buffer.isBuffer(d) ? d : Buffer.from(d),
    ]);
    entries.push(...fileEntries(files));
    tars.push({ createdBy: `upper layer ${i + 1}`, tar: writeTar(entries) });
  }
  const layers: Descriptor[] = [];
  const diffIds: string[] = [];
  for (const { tar } of tars) {
    const blob = gzip ? gzipSync(tar) : tar;
    layers.push({ mediaType: layerType, digest: await layout.putBytes(blob), size: blob.length });
    diffIds.push(sha(tar));
  }
  const labels: Record<string, string> = {
    'io.airgap.synthetic': spec.repo,
    ...(spec.label === false ? {} : { [CONFIGS_LABEL]: `/${configs}` }),
    ...(spec.labels ?? {}),
  };
  const config = Buffer.from(
    JSON.stringify({
      architecture: arch,
      os: 'linux',
      created: CREATED,
      config: {
        User: '1001',
        ExposedPorts: { '50051/tcp': {} },
        Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'],
        Entrypoint: ['/bin/opm'],
        Cmd: spec.cmd ?? ['serve', `/${configs}`, '--cache-dir=/tmp/cache'],
        WorkingDir: '/',
        Labels: labels,
      },
      rootfs: { type: 'layers', diff_ids: diffIds },
      history: tars.map((t) => ({ created: CREATED, created_by: t.createdBy })),
    }),
  );
  return putImageManifest(layout, config, layers, docker);
}

/** Build a catalog image into `layout` and name it `repo:tag` in index.json. */
export async function buildCatalogImage(
  layout: OciLayout,
  spec: CatalogImageSpec,
): Promise<BuiltCatalogImage> {
  const configs = (spec.configsDir ?? '/configs').replace(/^\/+|\/+$/g, '');
  const catalog: [string, Buffer][] = [];
  for (const dir of typeof spec.fbcDir === 'string' ? [spec.fbcDir] : (spec.fbcDir ?? []))
    catalog.push(...(await readTree(dir)));
  for (const [rel, data] of Object.entries(spec.files ?? {}))
    catalog.push([rel.replace(/^\//, ''), Buffer.isBuffer(data) ? data : Buffer.from(data)]);
  catalog.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const arches = spec.arches && spec.arches.length > 0 ? spec.arches : ['amd64'];
  const tag = spec.tag ?? 'v4.18';
  let top: ManifestData;
  let children: Record<string, string> | undefined;
  if (arches.length > 1) {
    children = {};
    const manifests: Descriptor[] = [];
    for (const arch of arches) {
      const m = await buildSingle(layout, spec, arch, catalog, configs);
      children[arch] = m.digest;
      manifests.push({
        mediaType: m.mediaType,
        digest: m.digest,
        size: m.bytes.length,
        platform: { architecture: arch, os: 'linux' },
      });
    }
    const mediaType = spec.format === 'docker' ? MediaType.DockerManifestList : MediaType.OciIndex;
    const bytes = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType, manifests }));
    top = { bytes, digest: await layout.putBytes(bytes), mediaType };
  } else {
    top = await buildSingle(layout, spec, arches[0], catalog, configs);
  }
  const refName = `${spec.repo}:${tag}`;
  await layout.setEntry(refName, top);
  return {
    digest: top.digest,
    mediaType: top.mediaType,
    refName,
    repo: spec.repo,
    tag,
    ...(children ? { children } : {}),
    configsDir: `/${configs}`,
    files: catalog.map(([rel]) => rel),
  };
}
