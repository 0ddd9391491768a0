/**
 * Operator catalog images without a container runtime. Reading (this file): the file-based catalog
 * under the image's configs directory (label `operators.operatorframework.io.index.configs.v1`,
 * `/configs` by default) of an image already in an OCI layout, an index followed to one
 * architecture, streamed out of the layers with overlay semantics (catalog-layers.ts) and parsed
 * into a model (fbc.ts); nothing is extracted to disk and no layer is held in memory. Rebuilding
 * (catalog-rebuild.ts): one new layer per image that replaces the configs directory with the
 * filtered catalog, written the way opm writes it (catalog-render.ts), deterministically.
 * What both share (labels, the image config, naming) is in catalog-config.ts.
 */
import { AirgapError } from '../../util/errors.js';
import type { OciLayout } from '../layout/store.js';
import { parseManifest, platformString, type ParsedManifest, type Platform } from '../manifest.js';
import { isImageManifestType } from '../media-types.js';
import {
  CONFIGS_LABEL,
  DATABASE_LABEL,
  configsDirOf,
  imageName,
  inImage,
  isAttestation,
  readConfig,
  type ImageConfigDoc,
  type ImageContent,
} from './catalog-config.js';
import { catalogFiles, scanCatalogLayers, type FoundFile, type ScanState } from './catalog-layers.js';
import { FbcModelBuilder, type FbcModel } from './fbc.js';
import { MirrorError } from '../errors.js';

// Also here for lab/catalog-image.ts, which builds test catalog images with the same label and tar writer.

const ARCH_ALIASES: Record<string, string> = { x86_64: 'amd64', aarch64: 'arm64' };

/** One image manifest of a catalog: the image itself, or one child of its index. */
export interface CatalogManifest {
  digest: string;
  mediaType: string;
  size: number;
  platform?: Platform;
}

export interface CatalogImage {
  /** The manifest that was asked for (the index of a multi-arch catalog). */
  digest: string;
  mediaType: string;
  /** The image whose layers were read (the chosen child of an index). */
  imageDigest: string;
  /** The FBC root as the label names it (`/configs`). */
  configsDir: string;
  model: FbcModel;
  /** FBC files read, relative to the configs directory, in the order they were parsed. */
  files: string[];
  /** Every image manifest of the catalog (children of an index keep their platform). */
  manifests: CatalogManifest[];
}

/**
 * The image of a catalog whose layers are read: the manifest itself, or the child of an index for
 * `arch` (x86_64/aarch64 understood), else its first linux/amd64 child, else its first child.
 */
function chooseImage(
  parsed: ParsedManifest,
  top: { digest: string; bytes: Buffer },
  image: string,
  arch: string | undefined,
): { chosen: CatalogManifest; manifests: CatalogManifest[] } {
  if (parsed.kind !== 'index') {
    const chosen = { digest: top.digest, mediaType: parsed.mediaType, size: top.bytes.length };
    return { chosen, manifests: [chosen] };
  }
  const manifests: CatalogManifest[] = parsed.manifests
    .filter((d) => isImageManifestType(d.mediaType) && !isAttestation(d))
    .map((d) => ({
      digest: d.digest,
      mediaType: d.mediaType,
      size: d.size,
      ...(d.platform ? { platform: d.platform } : {}),
    }));
  const want = arch ? (ARCH_ALIASES[arch] ?? arch) : undefined;
  const linux = (m: CatalogManifest) => (m.platform?.os ?? 'linux') === 'linux';
  const pick = want
    ? manifests.find((m) => m.platform?.architecture === want && linux(m))
    : (manifests.find((m) => m.platform?.architecture === 'amd64' && linux(m)) ?? manifests[0]);
  if (!pick) {
    const have = manifests.map((m) => platformString(m.platform)).join(', ') || 'none';
    throw new AirgapError(
      MirrorError.CATALOG_ARCH_MISSING,
      `${image} has no ${want ? `linux/${want} ` : ''}image (it has ${have})`,
      { where: image, hint: 'every child of a catalog index carries the same catalog; ask for one it has' },
    );
  }
  return { chosen: pick, manifests };
}

/** CATALOG_NO_FBC: nothing under the configs directory is a catalog file, with what is known about why. */
function noFbcError(s: ScanState, config: ImageConfigDoc, configsDir: string, image: string): AirgapError {
  const link = s.symlinks.get(s.configs);
  const labels = config.config?.Labels ?? {};
  const sqlite = labels[DATABASE_LABEL];
  // Neither catalog label and nothing under /configs: an image that is no operator catalog at all.
  const notCatalog = link === undefined && !sqlite && labels[CONFIGS_LABEL] === undefined;
  return new AirgapError(
    MirrorError.CATALOG_NO_FBC,
    `${image} has no file-based catalog under ${configsDir}${link !== undefined ? ` (${configsDir} is a symbolic link to ${link}, which is not followed)` : ''}${sqlite ? ` (it is a SQLite catalog: ${DATABASE_LABEL}=${sqlite})` : ''}${notCatalog ? ` and no ${CONFIGS_LABEL} label: it is not an operator catalog` : ''}`,
    {
      where: image,
      hint: notCatalog
        ? 'name an operator catalog image, such as registry.redhat.io/redhat/redhat-operator-index:v4.18'
        : 'SQLite catalogs from before OpenShift 4.11 are not supported; use a file-based catalog (redhat-operator-index v4.11 or later, or one built with `opm`)',
    },
  );
}

/** The model of the catalog files, in order; the first parse error of a file kept is raised here. */
function buildModel(files: readonly FoundFile[]): FbcModel {
  const builder = new FbcModelBuilder();
  for (const f of files) {
    const content = f.alias ?? f;
    if (content.error !== undefined) throw content.error;
    for (const blob of content.blobs) builder.add(blob);
  }
  return builder.build();
}

/**
 * Read the file-based catalog of a catalog image already in `layout` (blobs present). An index is
 * followed to `opts.arch` (x86_64/aarch64 understood) or else its first linux/amd64 child (all
 * children of real catalogs carry the same FBC). Layers are read last to first; reading stops early
 * once an upper layer hides the whole configs directory. Every layer read is digest-verified.
 * Symbolic links under the configs directory are not followed (catalogs are plain files).
 *
 * Throws CATALOG_NO_FBC when nothing under the configs directory is a catalog file (SQLite catalogs
 * from before 4.11), CATALOG_PARSE (with file:line and the image) for malformed content.
 */
export async function readCatalogImage(
  layout: OciLayout,
  digest: string,
  opts: { arch?: string } = {},
): Promise<CatalogImage> {
  return readCatalogContent(layout, digest, await imageName(layout, digest), opts);
}

/**
 * {@link readCatalogImage} from any {@link ImageContent}: a layout, or a registry read as it
 * streams (nothing stored). `image` names the catalog in messages.
 */
export async function readCatalogContent(
  layout: ImageContent,
  digest: string,
  image: string,
  opts: { arch?: string } = {},
): Promise<CatalogImage> {
  const top = await layout.getManifest(digest);
  const parsed = parseManifest(top.bytes, top.mediaType, `manifest ${image}`);
  const { chosen, manifests } = chooseImage(parsed, top, image, opts.arch);
  const m =
    parsed.kind === 'image'
      ? parsed
      : parseManifest(
          (await layout.getManifest(chosen.digest, chosen.mediaType)).bytes,
          chosen.mediaType,
          `manifest ${image} (${platformString(chosen.platform)})`,
        );
  if (m.kind !== 'image')
    throw new AirgapError(MirrorError.CATALOG_UNSUPPORTED, `a child of ${image} is itself an index`, {
      where: image,
    });
  const config = await readConfig(layout, m.config, image);
  const configsDir = configsDirOf(config, image);
  const scan = await scanCatalogLayers(layout, m.layers, configsDir, image);
  const files = catalogFiles(scan);
  if (files.length === 0) throw noFbcError(scan, config, configsDir, image);
  try {
    return {
      digest: top.digest,
      mediaType: parsed.mediaType,
      imageDigest: chosen.digest,
      configsDir,
      model: buildModel(files),
      files: files.map((f) => f.rel),
      manifests,
    };
  } catch (e) {
    throw inImage(e, image);
  }
}
