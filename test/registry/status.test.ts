/**
 * `airgap registry status` on a bastion made of real parts (podman running the registry under the
 * systemd stand-in, skopeo pushing images, the lab hub holding the trust ConfigMaps): healthy, with
 * a renewal the registry has not picked up, with deletes turned off, against the hub, and stopped.
 */
import { X509Certificate } from 'node:crypto';
import { lookup } from 'node:dns/promises';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';
import { startHub } from '../../lab/hub/index.js';
import { testCertificates } from '../../lab/pki.js';
import { issueServerCert } from '../../src/certs/mint.js';
import { expiryOf, groupByPrefix, type RegistryStatus } from '../../src/registry/status.js';
import { useBastion } from '../helpers/bastion.js';
import { airgap } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

describe('registry status: pure parts', () => {
  it('groups tags by the first path component, largest first', () => {
    expect(
      groupByPrefix([
        { repository: 'openshift/release', tags: 180 },
        { repository: 'ubi9', tags: 2 },
        { repository: 'openshift/release-images', tags: 10 },
        { repository: 'olm/redhat-operator-index', tags: 3 },
      ]),
    ).toEqual([
      { prefix: 'openshift', repositories: 2, tags: 190 },
      { prefix: 'olm', repositories: 1, tags: 3 },
      { prefix: 'ubi9', repositories: 1, tags: 2 },
    ]);
  });

  it('classifies expiry: expired at notAfter, expiring under 30 days, ok from 30', () => {
    const now = new Date('2026-01-01T00:00:00Z');
    const at = (days: number) => new Date(now.getTime() + days * 86_400_000);
    expect(expiryOf(at(0), now)).toBe('expired');
    expect(expiryOf(at(-3), now)).toBe('expired');
    expect(expiryOf(at(29.9), now)).toBe('expiring');
    expect(expiryOf(at(30), now)).toBe('ok');
  });
});

describe('airgap registry status: bad input', () => {
  it('a directory without registry files, and an unreadable password file, are usage errors that say what to give', async () => {
    const dir = await tempDir('airgap-status-');
    const none = await airgap(['registry', 'status', '--dir', dir]);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain(
      `error [REGISTRY_NOT_INSTALLED]: ${dir} holds no registry files (no registry.json)`,
    );
    expect(none.stderr).not.toContain('    at ');

    // registry.json written by certs registry, without a registry behind it: the password file is read first.
    const files = join(dir, 'reg');
    const pass = join(dir, 'pass');
    await writeFile(pass, 'secret-pass\n');
    const pki = testCertificates();
    await writeFile(join(dir, 'tls.crt'), pki.server.certPem);
    await writeFile(join(dir, 'tls.key'), pki.server.keyPem);
    await writeFile(join(dir, 'ca.crt'), pki.ca.certPem);
    const w = await airgap([
      'certs',
      'registry',
      '--hostname',
      'localhost',
      '--cert',
      join(dir, 'tls.crt'),
      '--key',
      join(dir, 'tls.key'),
      '--ca',
      join(dir, 'ca.crt'),
      '--username',
      'admin',
      '--password-file',
      pass,
      '--output',
      files,
    ]);
    expect(w.exitCode, w.stderr).toBe(0);
    const r = await airgap([
      'registry',
      'status',
      '--dir',
      files,
      '--password-file',
      join(dir, 'missing.pass'),
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `error [REGISTRY_PASSWORD_FILE_INVALID]: --password-file ${join(dir, 'missing.pass')}: `,
    );
    expect(r.stderr).not.toContain('    at ');
  });
});

describe('airgap registry status', () => {
  const bastion = useBastion();
  const status = (extra: string[] = []) => {
    const b = bastion();
    return b.airgap(['registry', 'status', '--dir', b.dir, ...extra]);
  };
  const statusJson = async (extra: string[] = []) => {
    const r = await status([...extra, '--json']);
    return { r, s: JSON.parse(r.stdout) as RegistryStatus };
  };

  beforeAll(async () => {
    const b = bastion();
    // The host's trust store is install's and renew's to test: rebuilding it costs seconds each time.
    const r = await b.install(['--no-trust-host']);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    // A few images pushed by skopeo, with the CA and the password: 3 tags in 2 openshift/ repositories.
    const certDir = join(b.root, 'status-skopeo-certs');
    await mkdir(certDir, { recursive: true });
    await writeFile(join(certDir, 'ca.crt'), await readFile(b.caFile));
    const creds = `${b.username}:${b.password}`;
    const src = `docker://localhost:${b.port}/airgap/registry-check:latest`;
    for (const dest of [
      'openshift/release:4.16.1',
      'openshift/release:4.16.2',
      'openshift/installer:4.16.1',
    ]) {
      const c = await execa(
        'skopeo',
        [
          'copy',
          '--src-cert-dir',
          certDir,
          '--dest-cert-dir',
          certDir,
          '--src-creds',
          creds,
          '--dest-creds',
          creds,
          src,
          `docker://localhost:${b.port}/${dest}`,
        ],
        { reject: false },
      );
      expect(c.exitCode, c.stderr).toBe(0);
    }
  }, 300_000);

  it('says a running registry is healthy: the unit, every address, days left, disk, images by prefix, deletes', async () => {
    const b = bastion();
    const r = await status(['--password-file', b.passwordFile]);
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^registry +localhost:${b.port} .* healthy$`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`^service +${b.name}\\.service: active \\(running\\), enabled`, 'm'));
    expect(r.stdout).toContain(`container ${b.name}: running`);
    // The host name on each address it resolves to here, and the certificate's IP names, each a trusted handshake.
    for (const [address, ip] of await expectedAddresses(b.port))
      expect(r.stdout).toMatch(new RegExp(`${escape(address)} +${escape(ip)} +answers, trusted`));
    expect(r.stdout).toMatch(/leaf \(file\) +CN=localhost.* until \d{4}-\d\d-\d\d {2}\d+ day\(s\) left/);
    expect(r.stdout).toMatch(/leaf \(served\) +the same certificate/);
    expect(r.stdout).toMatch(/CA +CN=airgap registry CA \(localhost\).* \d{3,} day\(s\) left/);
    expect(r.stdout).toMatch(
      new RegExp(
        `^storage +${escape(join(b.root, 'data'))}: [\\d.]+ KiB in \\d+ file\\(s\\); [\\d.]+ [KMGT]iB free of`,
        'm',
      ),
    );
    expect(r.stdout).toMatch(/^images +4 tag\(s\) in 3 repositories$/m);
    expect(r.stdout).toMatch(/openshift\/… +3 tag\(s\) in 2 repositories/);
    expect(r.stdout).toMatch(/airgap\/… +1 tag\(s\) in 1 repository/);
    expect(r.stdout).toMatch(/^deletes +enabled$/m);
    expect(r.stdout).toMatch(/^hub +not checked \(give --kubeconfig\)$/m);
    expect(r.stdout).not.toContain('problems:');
    expect(r.stdout).not.toContain(b.password);
    expect(r.stderr).toBe('');
  });

  it('skips the image count without the password, and says why, still healthy', async () => {
    const r = await status();
    expect(r.exitCode, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/^images +not counted: the count needs the password: give --password-file$/m);
  });

  it('reports a refused password as an incomplete count, never a smaller number, and exits 1', async () => {
    const b = bastion();
    const wrong = join(b.root, 'wrong.pass');
    await writeFile(wrong, 'not-the-password\n');
    const r = await status(['--password-file', wrong]);
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(
      /^images +INCOMPLETE: the catalog could not be listed\n +error: .*(UNAUTHORIZED|401)/m,
    );
    expect(r.stdout).not.toMatch(/^images +\d+ tag/m);
    expect(r.stdout).toContain('the image count is incomplete');
    expect(r.stdout).not.toContain('not-the-password');
    const { s } = await statusJson(['--password-file', wrong]);
    expect(s.images).toMatchObject({ state: 'incomplete', repositories: 0, tags: 0 });
  });

  it('--json prints the whole status', async () => {
    const b = bastion();
    const { r, s } = await statusJson(['--password-file', b.passwordFile]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(s).toMatchObject({
      registry: `localhost:${b.port}`,
      dir: b.dir,
      name: b.name,
      installed: true,
      healthy: true,
      problems: [],
      service: {
        unit: { active: 'active', sub: 'running', enabled: 'enabled', load: 'loaded' },
        container: true,
        log: [],
      },
      certificates: { served: { sameAsFile: true, expiry: 'ok' }, leaf: { expiry: 'ok' } },
      storage: { dataDir: join(b.root, 'data'), exists: true, complete: true },
      images: {
        state: 'counted',
        repositories: 3,
        tags: 4,
        prefixes: [
          { prefix: 'openshift', repositories: 2, tags: 3 },
          { prefix: 'airgap', repositories: 1, tags: 1 },
        ],
        errors: [],
      },
      deletes: { enabled: true },
      hub: null,
    });
    expect(s.addresses.map((a) => `${a.address} ${a.ip} answers`).sort()).toEqual(
      (await expectedAddresses(b.port)).map(([address, ip]) => `${address} ${ip} answers`).sort(),
    );
    expect(s.addresses.every((a) => a.state === 'answers')).toBe(true);
    // (A full disk on the test machine may warn; nothing else does.)
    expect(s.warnings.filter((w) => !/is over 90% full/.test(w))).toEqual([]);
    const leaf = new X509Certificate(await readFile(join(b.dir, 'certs', 'tls.crt')));
    expect(s.certificates.leaf.fingerprint256).toBe(leaf.fingerprint256);
    expect(s.certificates.leaf.daysLeft).toBeGreaterThan(30);
    expect(s.certificates.cas).toHaveLength(1);
    expect(s.storage.usedBytes).toBeGreaterThan(0);
    expect(s.storage.free!.availableBytes).toBeGreaterThan(0);
    expect(r.stdout).not.toContain(b.password);
  });

  it('warns when the certificate file was renewed but the registry still serves the old one, and when it expires within 30 days', async () => {
    const b = bastion();
    const file = join(b.dir, 'certs', 'tls.crt');
    const before = await readFile(file, 'utf8');
    const ca = {
      certPem: await readFile(join(b.dir, 'pki', 'ca.crt'), 'utf8'),
      keyPem: await readFile(join(b.dir, 'pki', 'ca.key'), 'utf8'),
    };
    const renewed = await issueServerCert({
      ca,
      commonName: 'localhost',
      dnsNames: ['localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      days: 20,
    });
    await writeFile(file, renewed.certPem);
    try {
      const r = await status();
      expect(r.exitCode, r.stdout).toBe(0); // a warning, not a failure: what is served is still good
      expect(r.stdout).toMatch(/leaf \(file\) +CN=localhost.* (19|20) day\(s\) left \(renew soon\)/);
      expect(r.stdout).toMatch(/leaf \(served\) +CN=localhost \(NOT the file's\)/);
      expect(r.stdout).toContain('warnings:');
      expect(r.stdout).toMatch(/the certificate file expires in (19|20) day\(s\)/);
      expect(r.stdout).toContain(
        `the registry serves another certificate than ${file} (renewed without a restart?)`,
      );
    } finally {
      await writeFile(file, before);
    }
  });

  it('says the registry is not trusted when its CA file does not verify what it serves, and why', async () => {
    const b = bastion();
    const before = await readFile(b.caFile, 'utf8');
    await writeFile(b.caFile, testCertificates().ca.certPem);
    try {
      const r = await status();
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toMatch(
        new RegExp(
          `localhost:${b.port} +127\\.0\\.0\\.1 +NOT TRUSTED: its chain ends in a CA that the registry's CA file does not hold \\(SELF_SIGNED_CERT_IN_CHAIN\\)`,
        ),
      );
      expect(r.stdout).toMatch(/CA +CN=airgap test CA/);
      expect(r.stdout).toContain(
        `localhost:${b.port} (127.0.0.1) serves a certificate that the registry's CA file does not verify`,
      );
    } finally {
      await writeFile(b.caFile, before);
    }
  });

  it('reads whether deletes are enabled from config.yml', async () => {
    const b = bastion();
    const file = join(b.dir, 'conf', 'config.yml');
    const before = await readFile(file, 'utf8');
    expect(before).toMatch(/delete:\n\s+enabled: true/);
    await writeFile(file, before.replace(/(delete:\n\s+enabled:) true/, '$1 false'));
    try {
      const { s } = await statusJson();
      expect(s.deletes).toEqual({ enabled: false });
      expect((await status()).stdout).toMatch(/^deletes +disabled$/m);
    } finally {
      await writeFile(file, before);
    }
  });

  it("checks the hub's trust ConfigMaps hold this CA: present, then another CA, then gone, then the hub down", async () => {
    const b = bastion();
    const hub = await startHub({ dir: join(b.root, 'hub'), controllers: {} });
    const caPem = await readFile(b.caFile, 'utf8');
    const key = `localhost..${b.port}`;
    try {
      if (!hub.store.get({ apiVersion: 'v1', kind: 'Namespace', name: 'clusters' }))
        hub.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'clusters' } });
      const other = testCertificates().ca.certPem;
      hub.store.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'registry-config', namespace: 'openshift-config' },
        data: { 'quay.example.com..8443': other, [key]: caPem.replace(/\n/g, '\r\n') },
      });
      hub.store.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'user-ca-bundle', namespace: 'clusters' },
        data: { 'ca-bundle.crt': `${other}${caPem}` },
      });
      const kube = ['--kubeconfig', hub.kubeconfigFile];

      const ok = await status(kube);
      expect(ok.exitCode, ok.stdout).toBe(0);
      expect(ok.stdout).toMatch(
        new RegExp(`^hub +openshift-config/registry-config +${escape(key)} +holds this CA$`, 'm'),
      );
      expect(ok.stdout).toMatch(/^ +clusters\/user-ca-bundle +ca-bundle\.crt +holds this CA$/m);

      // The registry's key now holds another CA (same text shape, other certificate).
      hub.store.mergePatch(
        { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'openshift-config', name: 'registry-config' },
        { data: { [key]: other } },
      );
      const changed = await statusJson(kube);
      expect(changed.r.exitCode).toBe(1);
      expect(changed.s.healthy).toBe(false);
      expect(changed.s.hub!.configMaps).toEqual([
        expect.objectContaining({ name: 'registry-config', state: 'other-ca' }),
        expect.objectContaining({ name: 'user-ca-bundle', state: 'holds' }),
      ]);
      const text = await status(kube);
      expect(text.exitCode).toBe(1);
      expect(text.stdout).toMatch(/registry +localhost:\d+ .* NOT HEALTHY$/m);
      expect(text.stdout).toMatch(/openshift-config\/registry-config +\S+ +DOES NOT HOLD this CA/);
      expect(text.stdout).toContain(
        "the hub's ConfigMap openshift-config/registry-config does not hold this registry's CA",
      );

      hub.store.delete({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        namespace: 'clusters',
        name: 'user-ca-bundle',
      });
      const gone = await statusJson(kube);
      expect(gone.r.exitCode).toBe(1);
      expect(gone.s.hub!.configMaps[1]).toMatchObject({ name: 'user-ca-bundle', state: 'absent' });
    } finally {
      await hub.stop();
    }
    // A hub that does not answer is an error in its line, not "absent".
    const down = await statusJson(['--kubeconfig', hub.kubeconfigFile]);
    expect(down.r.exitCode).toBe(1);
    expect(down.s.hub!.configMaps.map((m) => m.state)).toEqual(['error', 'error']);
    expect(down.s.problems.join('\n')).toContain(
      "the hub's ConfigMap openshift-config/registry-config could not be read",
    );
  }, 120_000);

  it('says a stopped registry is not running, with its last log lines, and exits 1', async () => {
    const b = bastion();
    const stop = await b.systemd.systemctl('stop', `${b.name}.service`);
    expect(stop.code, stop.stderr).toBe(0);
    const r = await status();
    expect(r.exitCode).toBe(1);
    expect(r.stdout).toMatch(/registry +localhost:\d+ .* NOT HEALTHY$/m);
    expect(r.stdout).toMatch(new RegExp(`^service +${b.name}\\.service: inactive \\(dead\\)`, 'm'));
    expect(r.stdout).toContain(`container ${b.name}: not running`);
    expect(r.stdout).toMatch(new RegExp(`^last log lines \\(journalctl -u ${b.name}\\):\\n  \\S`, 'm'));
    expect(r.stdout).toMatch(new RegExp(`localhost:${b.port} +127\\.0\\.0\\.1 +REFUSED`));
    expect(r.stdout).toMatch(/leaf \(served\) +none: no address answered/);
    expect(r.stdout).toContain(
      `${b.name}.service is inactive (dead): start it with systemctl start ${b.name}.service`,
    );
    const { s } = await statusJson();
    expect(s.service.unit).toMatchObject({ active: 'inactive' });
    expect(s.service.log.length).toBeGreaterThan(0);
    expect(s.addresses.every((a) => a.state === 'refused')).toBe(true);
  });
});

/** What status probes: localhost on each address it resolves to on this machine, and the IP names 127.0.0.1 and ::1. */
async function expectedAddresses(port: number): Promise<[string, string][]> {
  const ips = [...new Set((await lookup('localhost', { all: true })).map((a) => a.address))];
  return [
    ...ips.map((ip): [string, string] => [`localhost:${port}`, ip]),
    [`127.0.0.1:${port}`, '127.0.0.1'],
    [`[::1]:${port}`, '::1'],
  ];
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
