/**
 * The registry's CA trusted by the bastion: by the host (RHEL's /etc/pki/ca-trust/source/anchors +
 * `update-ca-trust extract`, Debian's /usr/local/share/ca-certificates + `update-ca-certificates`),
 * which curl, skopeo, oc and airgap read, and by podman (/etc/containers/certs.d/<host:port>/).
 * One file per CA (Debian links only a file's first certificate), written only when its content
 * differs, the system bundle rebuilt only when a file changed.
 */
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { AirgapError, CommonError, hasCode } from '../util/errors.js';
import { lockDirectory } from '../util/lock.js';
import { isNotFound, writeFileAtomic } from '../util/fs.js';
import { BastionError } from './errors.js';
import { runHost } from './host.js';

/** How this host's distribution takes a CA: where the file goes and what rebuilds the bundle. */
export interface HostTrustStore {
  dir: string;
  update: [string, ...string[]];
}

export const HOST_TRUST_STORES: readonly HostTrustStore[] = [
  { dir: '/etc/pki/ca-trust/source/anchors', update: ['update-ca-trust', 'extract'] },
  { dir: '/usr/local/share/ca-certificates', update: ['update-ca-certificates'] },
];

/** podman's (containers/image's) per-registry CA directory for root. */
export const PODMAN_CERTS_D = '/etc/containers/certs.d';

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch (e) {
    if (isNotFound(e)) return false;
    throw e;
  }
}

/** The host's trust store (RHEL first), or an error saying how to trust a CA by hand. */
export async function hostTrustStore(): Promise<HostTrustStore> {
  for (const s of HOST_TRUST_STORES) if (await isDir(s.dir)) return s;
  throw new AirgapError(
    BastionError.TRUST_FAILED,
    `this host has neither ${HOST_TRUST_STORES.map((s) => s.dir).join(' nor ')}: airgap cannot tell how it trusts a CA`,
    {
      hint: 'install ca-certificates (Debian) or ca-certificates/p11-kit (RHEL), or give --no-trust-host and add the CA to the system trust yourself',
    },
  );
}

/** The files that make `name`'s CAs trusted: one per CA in the host store and in each certs.d directory. */
export function trustFiles(
  store: HostTrustStore | undefined,
  name: string,
  addresses: string[],
  cas: string[],
): { path: string; pem: string; host: boolean }[] {
  const suffix = (i: number) => (i === 0 ? '' : `-${i + 1}`);
  const files = store
    ? cas.map((pem, i) => ({ path: join(store.dir, `airgap-${name}${suffix(i)}.crt`), pem, host: true }))
    : [];
  for (const a of addresses)
    files.push(
      ...cas.map((pem, i) => ({ path: join(PODMAN_CERTS_D, a, `ca${suffix(i)}.crt`), pem, host: false })),
    );
  return files;
}

async function readIfExists(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/**
 * Make the files hold exactly these CAs; remove `stale` ones (an earlier run's second CA, say).
 * Rebuilds the host bundle when a host file changed. Returns the paths changed. The host store is
 * changed and rebuilt under the trust lock: a file removed while another run's rebuild reads the
 * store leaves it a dangling link, and that rebuild fails.
 */
export async function applyTrust(
  store: HostTrustStore | undefined,
  files: { path: string; pem: string; host: boolean }[],
  stale: string[] = [],
): Promise<string[]> {
  return withTrustLock(async () => {
    const changed: string[] = [];
    let hostChanged = false;
    for (const f of files) {
      if ((await readIfExists(f.path)) === f.pem) continue;
      await writeFileAtomic(f.path, f.pem, { mode: 0o644 });
      changed.push(f.path);
      hostChanged ||= f.host;
    }
    const keep = new Set(files.map((f) => f.path));
    for (const path of stale) {
      if (keep.has(path) || (await readIfExists(path)) === undefined) continue;
      await rm(path, { force: true });
      changed.push(path);
      hostChanged ||= store !== undefined && path.startsWith(`${store.dir}/`);
    }
    if (hostChanged && store) await rebuildBundle(store);
    return changed;
  });
}

/**
 * Rebuild the system bundle (update-ca-trust extract / update-ca-certificates). Call it inside
 * withTrustLock, with the store's files changed in the same turn: two rebuilds at once (two airgap
 * runs) write the same bundle, and Debian's then fails.
 */
export async function rebuildBundle(store: HostTrustStore): Promise<void> {
  const [bin, ...args] = store.update;
  await runHost(bin, args, BastionError.TRUST_FAILED);
}

/**
 * Run `fn` holding the host's trust lock, waiting (up to 10 minutes) while another airgap run
 * holds it. Every change to the host store and its rebuild happen inside one turn.
 */
export async function withTrustLock<T>(fn: () => Promise<T>): Promise<T> {
  const release = await lockTrust();
  try {
    return await fn();
  } finally {
    await release();
  }
}

/** Where airgap runs on this host take turns at the trust store. */
const TRUST_LOCK_DIR = '/run/lock/airgap-ca-trust';

async function lockTrust(): Promise<() => Promise<void>> {
  await mkdir(TRUST_LOCK_DIR, { recursive: true });
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    try {
      return await lockDirectory(TRUST_LOCK_DIR);
    } catch (e) {
      if (!hasCode(e, CommonError.WORKSPACE_BUSY) || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
