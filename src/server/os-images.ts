/**
 * The AgentServiceConfig `spec.osImages` entries for the boot images a server serves: one per
 * architecture and RHCOS release found in the images manifest (`airgap images fetch` writes it),
 * with the live ISO as `url` and the PXE rootfs as `rootFSUrl`. Every URL is checked to answer
 * before the entries are handed out, since assisted-image-service crash-loops on a URL it cannot
 * download (openshift/assisted-service#3064).
 */
import http from 'node:http';
import https from 'node:https';
import { AirgapError, usageError, CommonError } from '../util/errors.js';
import { toYaml } from '../util/yaml.js';
import { ServerError } from './errors.js';

/** One `spec.osImages[]` entry (agent-install.openshift.io/v1beta1 AgentServiceConfig). */
export interface OsImage {
  cpuArchitecture: string;
  /** `x.y`. */
  openshiftVersion: string;
  /** The RHCOS build (`artifacts.metal.release` of the stream). */
  version: string;
  url: string;
  rootFSUrl?: string;
}

/** What os-images needs of the images manifest (`<dir>/images/airgap-images.json`). */
export interface ServedImages {
  stream?: string;
  openshiftVersion?: string;
  images: { architecture: string; artifact: string; release: string; file: string }[];
}

/** Check a `--public-url` and drop a trailing slash. */
function normalizeBaseUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // new URL fails only on a string that is not a URL: said so.
    throw usageError(CommonError.FLAG_INVALID, `--public-url ${url} is not a URL`, {
      hint: 'give the address hosts and pods use to reach this server, e.g. http://bastion.example.com:8080 or http://[2620:52:0:1306::1]:8080',
    });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw usageError(CommonError.FLAG_INVALID, `--public-url ${url} must be http:// or https://`);
  return `${u.origin}${u.pathname.replace(/\/+$/, '')}`;
}

/**
 * The osImages entries: one per (architecture, release) with a live ISO; `rootFSUrl` when the PXE
 * rootfs of the same release is there too. `openshiftVersion` comes from the option, else from
 * the manifest (the release payload's x.y, or the stream name `rhcos-x.y`).
 */
export function osImageEntries(
  served: ServedImages,
  publicUrl: string,
  opts: { openshiftVersion?: string } = {},
): OsImage[] {
  const version = opts.openshiftVersion ?? served.openshiftVersion;
  if (!version) {
    throw usageError(
      ServerError.OS_IMAGES_VERSION,
      'the OpenShift version (x.y) of these boot images is not known',
      {
        hint: 'give --openshift-version 4.18 (the images were fetched from a stream file without a version in its name)',
      },
    );
  }
  if (!/^\d+\.\d+$/.test(version))
    throw usageError(
      CommonError.FLAG_INVALID,
      `--openshift-version ${version} must be major.minor, like 4.18`,
    );
  const base = normalizeBaseUrl(publicUrl);
  const url = (file: string) => `${base}/images/${encodeURIComponent(file)}`;
  const out: OsImage[] = [];
  const isos = served.images.filter((i) => i.artifact === 'iso');
  for (const iso of isos) {
    const rootfs = served.images.find(
      (i) => i.artifact === 'rootfs' && i.architecture === iso.architecture && i.release === iso.release,
    );
    out.push({
      cpuArchitecture: iso.architecture,
      openshiftVersion: version,
      version: iso.release,
      url: url(iso.file),
      ...(rootfs ? { rootFSUrl: url(rootfs.file) } : {}),
    });
  }
  if (out.length === 0) {
    throw usageError(
      ServerError.OS_IMAGES_NONE,
      'no live ISO is served, so there is no osImages entry to write',
      {
        hint: 'fetch the boot images first: airgap images fetch --release <release image> --dir <dir>',
      },
    );
  }
  return out;
}

/** HEAD a URL (following nothing): the status code, or the network error. */
function head(url: string, ca?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request(u, { method: 'HEAD', timeout: 10_000, ...(ca ? { ca } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Check that every URL of the entries answers 200 to a HEAD; throw naming each one that does not. */
async function checkOsImageUrls(entries: OsImage[], opts: { ca?: string } = {}): Promise<void> {
  const urls = entries.flatMap((e) => [e.url, ...(e.rootFSUrl ? [e.rootFSUrl] : [])]);
  const problems: string[] = [];
  for (const u of urls) {
    try {
      const status = await head(u, opts.ca);
      if (status !== 200) problems.push(`${u} answers ${status}`);
    } catch (e) {
      problems.push(`${u} cannot be reached: ${(e as Error).message}`);
    }
  }
  if (problems.length > 0) {
    throw new AirgapError(
      ServerError.OS_IMAGES_UNREACHABLE,
      `boot image URLs do not answer:\n  ${problems.join('\n  ')}`,
      {
        hint: 'give --public-url the address this server is reached at (it must resolve and route from the bastion too)',
      },
    );
  }
}

/** The entries as an AgentServiceConfig merge patch (`oc patch agentserviceconfig agent --type merge --patch-file`). */
function osImagesPatchYaml(entries: OsImage[]): string {
  return toYaml({ spec: { osImages: entries } });
}

export interface WriteOsImagesOptions {
  /** The served directory (`--dir`); the manifest is `<dir>/images/airgap-images.json`. */
  dir: string;
  /** Where hosts reach this server; default the first URL the server reported. */
  publicUrl?: string;
  /** Base URLs the server is listening on (`http://10.0.0.5:8080/`, …). */
  servedUrls: string[];
  openshiftVersion?: string;
  /** PEM the HTTPS check trusts (the served chain, whose last certificate is usually the CA). */
  ca?: string;
  /** Write the AgentServiceConfig merge patch here (atomically). */
  out?: string;
}

/**
 * The osImages entries for what `dir` serves, checked against the running server, and written as an
 * AgentServiceConfig merge patch when `out` is given.
 */
export async function writeOsImages(o: WriteOsImagesOptions): Promise<{ entries: OsImage[]; file?: string }> {
  const { readBootImagesManifest } = await import('./rhcos/manifest.js');
  const manifest = await readBootImagesManifest(o.dir);
  const publicUrl = o.publicUrl ?? o.servedUrls[0];
  if (!publicUrl)
    throw usageError(CommonError.FLAG_MISSING, 'no URL to put in the osImages entries', {
      hint: 'give --public-url',
    });
  const entries = osImageEntries(manifest, publicUrl, {
    ...(o.openshiftVersion ? { openshiftVersion: o.openshiftVersion } : {}),
  });
  await checkOsImageUrls(entries, { ...(o.ca ? { ca: o.ca } : {}) });
  if (!o.out) return { entries };
  const { writeFileAtomic } = await import('../util/fs.js');
  await writeFileAtomic(o.out, osImagesPatchYaml(entries));
  return { entries, file: o.out };
}
