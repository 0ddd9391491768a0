/**
 * The registry checked from the outside, as a client on the network sees it: the certificate it
 * serves (a real TLS handshake, verified with the registry's CA and the name clients use), /v2/
 * refusing a request without the password and answering one with it, and a small image pushed and
 * read back byte for byte.
 */
import tls from 'node:tls';
import { RegistryClient, RegistryError, sha256Digest } from '../mirror/index.js';
import { AirgapError } from '../util/errors.js';
import { BastionError } from './errors.js';

/** What a TLS handshake with the registry showed. */
export interface ServedCertificate {
  /** The leaf verifies with the given CAs and names the host asked for. */
  trusted: boolean;
  /** Why not, as OpenSSL or the name check says it. */
  why?: string;
  pem: string;
  subject: string;
  notAfter: Date;
  fingerprint256: string;
}

/** Split `host:port` / `[v6]:port`. */
export function splitAddress(address: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(address) ?? /^([^:]+):(\d+)$/.exec(address);
  if (!m) throw new Error(`not host:port: ${address}`);
  return { host: m[1]!, port: Number(m[2]) };
}

/** Handshake with `address` (connecting to `connectTo`, default its host), trusting only `caPems`. */
export function servedCertificate(
  address: string,
  caPems: string[],
  connectTo?: string,
  timeoutMs = 10_000,
): Promise<ServedCertificate> {
  const { host, port } = splitAddress(address);
  return new Promise((resolve, reject) => {
    const isIp = /^[\d.]+$|:/.test(host);
    const socket = tls.connect({
      host: connectTo ?? host,
      port,
      ...(isIp ? {} : { servername: host }),
      ca: caPems,
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
      timeout: timeoutMs,
    });
    socket.once('timeout', () => socket.destroy(new Error(`no TLS answer within ${timeoutMs / 1000} s`)));
    socket.once('error', reject);
    socket.once('secureConnect', () => {
      const peer = socket.getPeerX509Certificate();
      const authError = socket.authorizationError;
      socket.end();
      if (!peer) return reject(new Error('the server sent no certificate'));
      const nameError = tls.checkServerIdentity(host, peer.toLegacyObject());
      const why = authError ? String(authError) : nameError?.message;
      resolve({
        trusted: !why,
        ...(why ? { why } : {}),
        pem: peer.toString(),
        subject: peer.subject.replace(/\n/g, ', '),
        notAfter: new Date(peer.validTo),
        fingerprint256: peer.fingerprint256,
      });
    });
  });
}

/** Wait until the registry completes a TLS handshake (it starts in a second or two), up to `timeoutMs`. */
export async function waitServing(
  address: string,
  caPems: string[],
  timeoutMs: number,
): Promise<ServedCertificate> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await servedCertificate(address, caPems);
    } catch (e) {
      if (Date.now() > deadline)
        throw new AirgapError(
          BastionError.NOT_READY,
          `the registry ${address} did not answer within ${Math.round(timeoutMs / 1000)} s: ${(e as Error).message}`,
          { hint: 'see why with airgap registry status, or journalctl -u <name>', cause: e },
        );
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

export interface Access {
  address: string;
  caFiles: string[];
  username: string;
  password: string;
}

const client = (a: Access, withPassword: boolean) =>
  new RegistryClient(a.address, {
    caFiles: a.caFiles,
    retry: { attempts: 2 },
    credentials: {
      credential: withPassword
        ? { username: a.username, password: a.password, source: 'the registry password' }
        : { source: 'no credential (airgap checks that the registry asks for one)' },
    },
  });

/** /v2/ answers 401 without the password (deleted: registry opened to anyone) and 200 with it. */
export async function checkPassword(a: Access): Promise<void> {
  const anon = client(a, false);
  try {
    await anon.ping();
    throw new AirgapError(
      BastionError.CHECK_FAILED,
      `the registry ${a.address} answered /v2/ without a password`,
      {
        hint: 'its config.yml must have auth.htpasswd: write the files again with airgap certs registry --force',
      },
    );
  } catch (e) {
    if (!(e instanceof RegistryError && e.status === 401)) throw e;
  } finally {
    await anon.close();
  }
  const user = client(a, true);
  try {
    await user.ping();
  } finally {
    await user.close();
  }
}

/** The repository airgap's own check image goes to. */
export const CHECK_REPO = 'airgap/registry-check';
const CHECK_TAG = 'latest';

/**
 * Push a one-layer image to {@link CHECK_REPO} and read every byte back (the same content each run,
 * so a second install stores nothing new). Returns its manifest digest.
 */
export async function pushAndReadBack(a: Access): Promise<string> {
  const layer = Buffer.from('airgap registry check\n');
  const config = Buffer.from(
    JSON.stringify({
      architecture: 'amd64',
      os: 'linux',
      rootfs: { type: 'layers', diff_ids: [sha256Digest(layer)] },
    }),
  );
  const desc = (mediaType: string, b: Buffer) => ({ mediaType, digest: sha256Digest(b), size: b.length });
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: desc('application/vnd.oci.image.config.v1+json', config),
      layers: [desc('application/vnd.oci.image.layer.v1.tar', layer)],
    }),
  );
  const c = client(a, true);
  try {
    for (const blob of [layer, config]) {
      const d = sha256Digest(blob);
      const up = await c.startUpload(CHECK_REPO, d);
      if (!up.mounted)
        await c.finishUpload(
          CHECK_REPO,
          up.location,
          d,
          (async function* () {
            yield blob;
          })(),
          blob.length,
        );
    }
    const m = {
      bytes: manifest,
      digest: sha256Digest(manifest),
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
    };
    await c.putManifest(CHECK_REPO, CHECK_TAG, m);
    const back = await c.getManifest(CHECK_REPO, CHECK_TAG);
    const got = await c.getBlobBytes(CHECK_REPO, sha256Digest(layer), layer.length);
    if (back.digest !== m.digest || !got.equals(layer))
      throw new AirgapError(
        BastionError.CHECK_FAILED,
        `the registry ${a.address} gave back other bytes than were pushed`,
        {
          hint: 'check the storage under the data directory (disk errors?) and the registry log',
        },
      );
    return m.digest;
  } finally {
    await c.close();
  }
}

/** The certificate's expiry as `2027-03-01 (412 days)`. */
export function daysLeft(notAfter: Date, now = new Date()): number {
  return Math.floor((notAfter.getTime() - now.getTime()) / 86_400_000);
}

/** The PEM certificates in a text. */
export function pemBlocks(text: string): string[] {
  return (
    text
      .match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g)
      ?.map((b) => (b.endsWith('\n') ? b : `${b}\n`)) ?? []
  );
}
