/**
 * Hostile compressed input through the real CLI (`airgap mirror plan`), from a lying registry of
 * our own (test/helpers/hostile-registry.ts) and a signature store (lab/signature-store.ts):
 *
 * - a release payload layer holding a valid tar followed by 64 MiB of zeros: node-tar's parser
 *   kept them all, quadratically (10 minutes for 64 MiB; 2.6 s for 16 MiB, see tar-read.test.ts);
 *   the plan now ends in seconds (tar-read.ts stops at the end of the archive);
 * - a release payload layer that inflates past the ratio limit: refused, naming the layer;
 * - a release signature of 0.25 MiB that inflates to 256 MiB (it peaked at 640 MB): refused as
 *   that signature's problem, naming the limit, with the memory of the run bounded.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { constants, deflateRawSync, gzipSync } from 'node:zlib';
import * as yaml from 'js-yaml';
import * as openpgp from 'openpgp';
import { Header } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestsTar } from '../../lab/release.js';
import { startSignatureStore, type SignatureStore } from '../../lab/signature-store.js';
import { MirrorError } from '../../src/mirror/errors.js';
import type { MirrorReport } from '../../src/mirror/run.js';
import { airgap } from '../helpers/cli.js';
import { startHostileRegistry, type HostileRegistry } from '../helpers/hostile-registry.js';

const MiB = 1024 * 1024;
const sha256 = (b: Buffer | string) => `sha256:${createHash('sha256').update(b).digest('hex')}`;
/** One gzip member of 1 MiB of zeros (~1 KiB): members concatenated are one gzip stream. */
const ZEROS = gzipSync(Buffer.alloc(MiB));

/**
 * An OpenPGP message of ~0.25 MiB whose compressed data (ZIP, raw deflate) is a literal data
 * packet of 256 MiB of zeros: 256 deflate blocks of 1 MiB of zeros each, flushed in full (no
 * reference crosses them) so one block serves for all, then the final empty block. No key signed
 * it: it is decompressed while the message is read, before any signature is looked at.
 */
function signatureBomb(): Buffer {
  const size = 256 * MiB;
  const literalBody = 1 + 1 + 4 + size; // format 'b', no file name, a date, the data
  const literalHeader = Buffer.alloc(2 + 4 + 6);
  literalHeader[0] = 0xc0 | 11; // new-format packet, tag 11 (literal data)
  literalHeader[1] = 0xff; // a five-octet length
  literalHeader.writeUInt32BE(literalBody, 2);
  literalHeader[6] = 0x62; // 'b'
  const flush = { finishFlush: constants.Z_FULL_FLUSH };
  const deflated = Buffer.concat([
    deflateRawSync(literalHeader, flush),
    ...Array<Buffer>(256).fill(deflateRawSync(Buffer.alloc(MiB), flush)),
    deflateRawSync(Buffer.alloc(0)),
  ]);
  const header = Buffer.alloc(7);
  header[0] = 0xc0 | 8; // tag 8 (compressed data)
  header[1] = 0xff;
  header.writeUInt32BE(1 + deflated.length, 2);
  header[6] = 1; // ZIP
  return Buffer.concat([header, deflated]);
}

describe('hostile compressed content through airgap mirror plan', () => {
  let reg: HostileRegistry;
  let store: SignatureStore;
  let dir: string;
  let component: string;
  let hook: string;
  let keyring: string;

  /** A one-layer OCI image served by digest and by tag; its manifest digest. */
  const image = (repo: string, tag: string, layer: Buffer): string => {
    const config = Buffer.from(
      JSON.stringify({ architecture: 'amd64', os: 'linux', rootfs: { type: 'layers', diff_ids: [] } }),
    );
    const manifest = JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: {
        mediaType: 'application/vnd.oci.image.config.v1+json',
        digest: sha256(config),
        size: config.length,
      },
      layers: [
        {
          mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip',
          digest: sha256(layer),
          size: layer.length,
        },
      ],
    });
    reg.blob(repo, sha256(config), config);
    reg.blob(repo, sha256(layer), layer);
    const m = { mediaType: 'application/vnd.oci.image.manifest.v1+json', bytes: manifest };
    reg.manifest(repo, tag, m);
    reg.manifest(repo, sha256(manifest), m);
    return sha256(manifest);
  };

  /** The release-manifests/ files of a release with one component (no coreos-bootimages: all layers are read). */
  const releaseFiles = (version: string) =>
    manifestsTar({
      'image-references': JSON.stringify({
        kind: 'ImageStream',
        apiVersion: 'image.openshift.io/v1',
        metadata: { name: version },
        spec: {
          tags: [{ name: 'cli', from: { kind: 'DockerImage', name: `${reg.host}/ocp/art@${component}` } }],
        },
      }),
      'release-metadata': JSON.stringify({ kind: 'cincinnati-metadata-v0', version }),
    });

  /** `mirror plan` of one release image, its JSON report and the peak RSS of the run. */
  const plan = async (name: string, release: string) => {
    const isc = join(dir, `${name}.yaml`);
    await writeFile(
      isc,
      yaml.dump({
        kind: 'ImageSetConfiguration',
        apiVersion: 'mirror.openshift.io/v2alpha1',
        mirror: { platform: { release: `${reg.host}/${release}` } },
      }),
    );
    const started = Date.now();
    const r = await airgap(
      [
        'mirror',
        'plan',
        '-c',
        isc,
        `file://${join(dir, `archive-${name}`)}`,
        '--ca-file',
        reg.caFile,
        '--signature-url',
        store.url,
        '--release-keyring',
        keyring,
        '--json',
      ],
      { timeoutMs: 60_000, env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` } },
    );
    const seconds = (Date.now() - started) / 1000;
    const rssMiB = Number(/max-rss-kib=(\d+)/.exec(r.stderr)?.[1]) / 1024;
    return { ...r, seconds, rssMiB };
  };

  beforeAll(async () => {
    [reg, store] = await Promise.all([startHostileRegistry(), startSignatureStore()]);
    dir = await mkdtemp(join(tmpdir(), 'airgap-hostile-layers-'));
    // Release signatures are only fetched with a key; any key will do (none signed the bomb).
    keyring = join(dir, 'release-key.asc');
    const { publicKey } = await openpgp.generateKey({
      userIDs: [{ name: 'hostile-layers test' }],
      type: 'ecc',
      curve: 'curve25519Legacy',
      format: 'armored',
    });
    await writeFile(keyring, publicKey);
    hook = join(dir, 'max-rss.mjs');
    await writeFile(
      hook,
      "process.on('exit', () => process.stderr.write(`max-rss-kib=${process.resourceUsage().maxRSS}\\n`));\n",
    );
    component = image('ocp/art', 'cli', gzipSync(manifestsTar({ cli: 'a component' })));

    // 4.18.1: a valid tar (its end blocks included), then 64 MiB of zeros in the same gzip stream.
    const trailing = image(
      'ocp/release',
      '4.18.1-x86_64',
      Buffer.concat([gzipSync(releaseFiles('4.18.1')), ...Array<Buffer>(64).fill(ZEROS)]),
    );
    store.put(trailing, signatureBomb());

    // 4.18.2: a 128 MiB file of zeros before release-manifests/ (128 KiB of gzip: ~1000×).
    const big = Buffer.alloc(512);
    new Header({ path: 'big', type: 'File', size: 128 * MiB, mode: 0o644, mtime: new Date(0) }).encode(
      big,
      0,
    );
    image(
      'ocp/release',
      '4.18.2-x86_64',
      Buffer.concat([gzipSync(big), ...Array<Buffer>(128).fill(ZEROS), gzipSync(releaseFiles('4.18.2'))]),
    );
  });

  afterAll(async () => {
    await Promise.all([reg?.stop(), store?.stop()]);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('a payload layer with 64 MiB of zeros past its tar is planned in seconds, and a signature bomb is refused in bounded memory', async () => {
    const r = await plan('trailing', 'ocp/release:4.18.1-x86_64');
    // Measured: ~3 s and ~165 MiB. Before tar-read.ts and inflate.ts: the tail alone took 10 minutes
    // (the 60 s timeout here), and the signature was inflated whole (256 MiB, 640 MB at its peak).
    console.log(`trailing tail: ${r.seconds.toFixed(1)} s, peak RSS ${r.rssMiB.toFixed(0)} MiB`);
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout) as MirrorReport;
    expect(report.releases.map((x) => x.version)).toEqual(['4.18.1']);
    expect(report.plan.map((p) => p.kind).sort()).toEqual(['release', 'release-component']);
    expect(report.warnings.join('\n')).toContain(
      'release 4.18.1 (amd64): signature-1: it inflates past 1 MiB (the limit for a signature)',
    );
    expect(r.seconds).toBeLessThan(30);
    expect(r.rssMiB).toBeGreaterThan(0);
    expect(r.rssMiB).toBeLessThan(300);
  }, 90_000);

  it('a payload layer that inflates past 200× is refused, naming the layer and the limit', async () => {
    const r = await plan('bomb', 'ocp/release:4.18.2-x86_64');
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(MirrorError.MIRROR_INFLATE_LIMIT);
    expect(r.stderr).toMatch(
      new RegExp(
        `layer ${reg.host.replace(/\./g, '\\.')}/ocp/release@sha256:[0-9a-f]{64} inflates more than 200× its first [\\d.]+ KiB \\(the limit for an image layer\\)`,
      ),
    );
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(r.seconds).toBeLessThan(30);
  }, 90_000);
});
