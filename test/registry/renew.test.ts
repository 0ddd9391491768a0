/**
 * `airgap registry renew` on a bastion of real parts (podman, the registry binary, the systemd
 * stand-in): an image pushed by skopeo before is read back after; openssl's own handshake shows the
 * new certificate served; the trust ConfigMaps are written and applied to a hub simulator (its other
 * entries kept); --new-ca trusts both CAs during the overlap and skopeo with only the new CA works;
 * a refused renew leaves every file as it was.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { load } from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHub, type Hub } from '../../lab/hub/index.js';
import { useBastion } from '../helpers/bastion.js';
import { airgap } from '../helpers/cli.js';

const PEM_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\n?/g;
const pems = (text: string) => text.match(PEM_RE) ?? [];
const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;

describe('airgap registry renew', () => {
  const bastion = useBastion();
  let hub: Hub | undefined;
  /** The digest of the image skopeo pushed after install. */
  let pushed = '';
  const ref = () => `docker://${bastion().address}/test/registry:1`;

  /** skopeo trusting exactly the CA PEMs given (no system roots), with the password. */
  const skopeo = async (args: string[], cas: string[]) => {
    const b = bastion();
    const certDir = join(
      b.root,
      `skopeo-${createHash('sha256').update(cas.join('')).digest('hex').slice(0, 12)}`,
    );
    await mkdir(certDir, { recursive: true });
    await writeFile(join(certDir, 'ca.crt'), cas.join(''));
    const empty = join(b.root, 'empty.pem');
    await writeFile(empty, '');
    const cred = `${b.username}:${b.password}`;
    const flags =
      args[0] === 'copy'
        ? ['--src-cert-dir', certDir, '--dest-cert-dir', certDir, '--dest-creds', cred]
        : ['--cert-dir', certDir, '--creds', cred];
    return execa('skopeo', [args[0]!, ...flags, ...args.slice(1)], {
      reject: false,
      env: { SSL_CERT_FILE: empty, SSL_CERT_DIR: join(b.root, 'no-such-dir') },
    });
  };

  /** What openssl's own handshake shows: the served leaf's fingerprint, serial and names. */
  const servedByOpenssl = async () => {
    const b = bastion();
    const s = await execa(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${b.port}`, '-servername', 'localhost'],
      { input: '', reject: false },
    );
    const x = await execa(
      'openssl',
      ['x509', '-noout', '-fingerprint', '-sha256', '-serial', '-ext', 'subjectAltName'],
      { input: s.stdout },
    );
    return {
      fingerprint: /Fingerprint=([0-9A-F:]+)/.exec(x.stdout)?.[1] ?? '',
      serial: /serial=([0-9A-F]+)/.exec(x.stdout)?.[1] ?? '',
      text: x.stdout,
    };
  };

  /** Every file under the registry directory, the trust files and the unit, by content hash. */
  const snapshot = async (): Promise<Record<string, string>> => {
    const b = bastion();
    const out: Record<string, string> = {};
    const walk = async (d: string) => {
      for (const e of await readdir(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) await walk(p);
        else
          out[p] = createHash('sha256')
            .update(await readFile(p))
            .digest('hex');
      }
    };
    await walk(b.dir);
    const record = JSON.parse(await readFile(join(b.dir, 'installed.json'), 'utf8')) as {
      trustFiles: string[];
    };
    for (const f of [...record.trustFiles, `/etc/systemd/system/${b.name}.service`])
      out[f] = createHash('sha256')
        .update(await readFile(f))
        .digest('hex');
    return out;
  };

  beforeAll(async () => {
    const b = bastion();
    const r = await b.install();
    expect(r.exitCode, r.stderr).toBe(0);
    const digestFile = join(b.root, 'pushed.digest');
    const ca = await readFile(b.caFile, 'utf8');
    const c = await skopeo(
      ['copy', '--digestfile', digestFile, `oci-archive:${b.imageArchive}`, ref()],
      [ca],
    );
    expect(c.exitCode, c.stderr).toBe(0);
    pushed = (await readFile(digestFile, 'utf8')).trim();
    hub = await startHub({ dir: join(b.root, 'hub') });
    // The hub holds another registry's key and another CA: renew must keep both.
    hub.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'clusters' } });
    hub.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'registry-config', namespace: 'openshift-config' },
      data: { 'other.example..5000': hub.caPem },
    });
    hub.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'user-ca-bundle', namespace: 'clusters' },
      data: { 'ca-bundle.crt': hub.caPem },
    });
  }, 600_000);
  afterAll(async () => {
    await hub?.stop();
  });

  const renew = (extra: string[] = []) =>
    bastion().airgap([
      'registry',
      'renew',
      '--dir',
      bastion().dir,
      '--password-file',
      bastion().passwordFile,
      ...extra,
    ]);

  it('--dry-run says what would change (names, validity, CAs) and changes nothing', async () => {
    const before = await snapshot();
    const r = await renew(['--dry-run', '--san', 'registry.test']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /\[plan\] would: a new certificate for localhost, registry\.test, 127\.0\.0\.1, ::1, valid until \d{4}-\d\d-\d\d/,
    );
    expect(r.stdout).toContain('the CA kept: CN=airgap registry CA (localhost)');
    expect(r.stdout).toContain(`$ systemctl restart ${bastion().name}.service`);
    expect(r.stdout).toContain('nothing was changed (--dry-run)');
    expect(await snapshot()).toEqual(before);
  }, 120_000);

  it('refuses a --ca-key that is not the key of the CA, and leaves every file as it was', async () => {
    const b = bastion();
    const wrongKey = join(b.root, 'wrong-ca.key');
    await execa('openssl', [
      'genpkey',
      '-algorithm',
      'EC',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-out',
      wrongKey,
    ]);
    const before = await snapshot();
    const served = await servedByOpenssl();
    const r = await renew(['--ca-key', wrongKey]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `--ca-key ${wrongKey} is not the key of the CA CN=airgap registry CA (localhost)`,
    );
    expect(r.stderr).toContain('would not be trusted by the clients that trust the registry now');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await snapshot()).toEqual(before);
    expect((await servedByOpenssl()).fingerprint).toBe(served.fingerprint);
  }, 120_000);

  it('refuses a CA clients do not trust, a CA about to expire, and a directory without a CA key, changing nothing', async () => {
    const b = bastion();
    // A copy of the registry directory, its CA swapped: refused before anything touches the host.
    const copy = join(b.root, 'copy');
    await execa('cp', ['-a', b.dir, copy]);
    const hashes = async () => {
      const out: Record<string, string> = {};
      for (const f of await readdir(copy, { recursive: true, withFileTypes: true }))
        if (f.isFile())
          out[join(f.parentPath, f.name)] = createHash('sha256')
            .update(await readFile(join(f.parentPath, f.name)))
            .digest('hex');
      return out;
    };
    const run = () => b.airgap(['registry', 'renew', '--dir', copy, '--password-file', b.passwordFile]);
    const mint = async (out: string, days: string) => {
      const r = await b.airgap([
        'certs',
        'ca',
        '-o',
        out,
        '--days',
        days,
        '--key-type',
        'ecdsa-p256',
        '--common-name',
        `other CA ${days}`,
      ]);
      expect(r.exitCode, r.stderr).toBe(0);
    };

    await mint(join(b.root, 'other-ca'), '3650');
    await execa('cp', [join(b.root, 'other-ca/ca.crt'), join(b.root, 'other-ca/ca.key'), join(copy, 'pki')]);
    let before = await hashes();
    let r = await run();
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('[REGISTRY_RENEW_UNTRUSTED]');
    expect(r.stderr).toContain('(CN=other CA 3650) is not among the CAs clients trust for the registry');
    expect(await hashes()).toEqual(before);

    await mint(join(b.root, 'short-ca'), '10');
    await execa('cp', [join(b.root, 'short-ca/ca.crt'), join(b.root, 'short-ca/ca.key'), join(copy, 'pki')]);
    await writeFile(
      join(copy, 'certs/ca.crt'),
      (await readFile(join(b.root, 'short-ca/ca.crt'), 'utf8')) + (await readFile(b.caFile, 'utf8')),
    );
    before = await hashes();
    r = await run();
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/the CA CN=other CA 10 expires in 9 day\(s\)/);
    expect(r.stderr).toContain('--new-ca');
    expect(await hashes()).toEqual(before);

    await execa('rm', [join(copy, 'pki/ca.key')]);
    before = await hashes();
    r = await run();
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`${copy} holds no CA key (${copy}/pki/ca.key)`);
    expect(await hashes()).toEqual(before);
  }, 120_000);

  it('serves a new leaf with the same names (and --san), keeps the data and the password, and updates the hub', async () => {
    const b = bastion();
    const before = await servedByOpenssl();
    const keep = {
      htpasswd: await readFile(join(b.dir, 'auth/htpasswd')),
      config: await readFile(join(b.dir, 'conf/config.yml')),
      ca: await readFile(b.caFile, 'utf8'),
    };
    const r = await renew(['--san', 'registry.test', '--kubeconfig', hub!.kubeconfigFile]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${b.name}.service restarted`);

    const after = await servedByOpenssl();
    expect(after.fingerprint).not.toBe(before.fingerprint);
    expect(after.serial).not.toBe(before.serial);
    expect(after.fingerprint).toBe(fingerprint(await readFile(join(b.dir, 'certs/tls.crt'), 'utf8')));
    expect(after.text).toMatch(
      /DNS:localhost, DNS:registry\.test, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1/,
    );
    expect(r.stdout).toContain(`serial ${after.serial}`);

    // The CA kept, the password and config.yml untouched, the image pushed before still there.
    expect(await readFile(b.caFile, 'utf8')).toBe(keep.ca);
    expect(await readFile(join(b.dir, 'auth/htpasswd'))).toEqual(keep.htpasswd);
    expect(await readFile(join(b.dir, 'conf/config.yml'))).toEqual(keep.config);
    const i = await skopeo(['inspect', '--raw', ref()], [keep.ca]);
    expect(i.exitCode, i.stderr).toBe(0);
    expect(`sha256:${createHash('sha256').update(i.stdout).digest('hex')}`).toBe(pushed);

    // The ConfigMaps: files under <dir>/configmaps, applied to the hub with its other entries kept.
    const rc = load(await readFile(join(b.dir, 'configmaps/registry-config.yaml'), 'utf8')) as {
      data: Record<string, string>;
    };
    expect(rc.data[`localhost..${b.port}`]).toBe(keep.ca);
    const live = hub!.store.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'openshift-config',
      name: 'registry-config',
    });
    expect((live?.data as Record<string, string>)[`localhost..${b.port}`]).toBe(keep.ca);
    expect((live?.data as Record<string, string>)['other.example..5000']).toBe(hub!.caPem);
    const bundle = hub!.store.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'clusters',
      name: 'user-ca-bundle',
    });
    expect(pems((bundle?.data as Record<string, string>)['ca-bundle.crt'] ?? '').map(fingerprint)).toEqual(
      [keep.ca, hub!.caPem].map(fingerprint),
    );
  }, 300_000);

  it('--new-ca: both CAs trusted during the overlap; skopeo trusts the registry with only the new CA, not with only the old', async () => {
    const b = bastion();
    const oldCa = await readFile(b.caFile, 'utf8');
    const oldPki = await readFile(join(b.dir, 'pki/ca.crt'), 'utf8');
    // Without the hub, the hub would stop trusting the registry: refused, nothing changed.
    const before = await snapshot();
    const refused = await renew(['--new-ca']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain('[REGISTRY_RENEW_UNTRUSTED]');
    expect(refused.stderr).toContain('--new-ca without --kubeconfig');
    expect(await snapshot()).toEqual(before);

    const r = await renew(['--new-ca', '--kubeconfig', hub!.kubeconfigFile]);
    expect(r.exitCode, r.stderr).toBe(0);

    const both = pems(await readFile(b.caFile, 'utf8'));
    expect(both).toHaveLength(2);
    const newCa = both[0]!;
    expect(fingerprint(both[1]!)).toBe(fingerprint(oldCa));
    expect(fingerprint(newCa)).not.toBe(fingerprint(oldCa));
    expect(await readFile(join(b.dir, 'pki/ca.crt'), 'utf8')).toBe(newCa);
    expect(await readFile(join(b.dir, 'pki/ca-previous.crt'), 'utf8')).toBe(oldPki);

    // Trust files: one per CA, in certs.d for each address and in the host store.
    const certsD = `/etc/containers/certs.d/localhost:${b.port}`;
    expect(await readFile(join(certsD, 'ca.crt'), 'utf8')).toBe(newCa);
    expect(fingerprint(await readFile(join(certsD, 'ca-2.crt'), 'utf8'))).toBe(fingerprint(oldCa));
    const record = JSON.parse(await readFile(join(b.dir, 'installed.json'), 'utf8')) as {
      trustFiles: string[];
    };
    const hostFiles = record.trustFiles.filter((f) => !f.startsWith('/etc/containers/'));
    expect(hostFiles.map((f) => f.replace(/.*\//, ''))).toEqual([
      `airgap-${b.name}.crt`,
      `airgap-${b.name}-2.crt`,
    ]);
    for (const f of record.trustFiles) expect(existsSync(f)).toBe(true);

    // The served leaf is issued by the new CA, as openssl sees it.
    const served = await servedByOpenssl();
    expect(served.fingerprint).toBe(fingerprint(await readFile(join(b.dir, 'certs/tls.crt'), 'utf8')));
    const onlyNew = await skopeo(['inspect', '--raw', ref()], [newCa]);
    expect(onlyNew.exitCode, onlyNew.stderr).toBe(0);
    const onlyOld = await skopeo(['inspect', '--raw', ref()], [oldCa]);
    expect(onlyOld.exitCode).not.toBe(0);
    expect(onlyOld.stderr).toMatch(/certificate signed by unknown authority|x509/);

    // The ConfigMap files hold both CAs, the new one first (then the hub's other CA, kept).
    const ub = load(await readFile(join(b.dir, 'configmaps/user-ca-bundle.yaml'), 'utf8')) as {
      data: Record<string, string>;
    };
    expect(pems(ub.data['ca-bundle.crt']!).map(fingerprint)).toEqual(
      [newCa, oldCa, hub!.caPem].map(fingerprint),
    );
    // And the hub holds both, beside what it held before.
    const live = hub!.store.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'clusters',
      name: 'user-ca-bundle',
    });
    expect(pems((live?.data as Record<string, string>)['ca-bundle.crt']).map(fingerprint)).toEqual(
      [newCa, oldCa, hub!.caPem].map(fingerprint),
    );
    const rc = hub!.store.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'openshift-config',
      name: 'registry-config',
    });
    expect(pems((rc?.data as Record<string, string>)[`localhost..${b.port}`]).map(fingerprint)).toEqual(
      [newCa, oldCa].map(fingerprint),
    );
  }, 300_000);

  it('after --new-ca, a plain renew signs with the new CA and keeps both trusted', async () => {
    const b = bastion();
    const cas = await readFile(b.caFile, 'utf8');
    const r = await renew();
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await readFile(b.caFile, 'utf8')).toBe(cas);
    const leaf = new X509Certificate(await readFile(join(b.dir, 'certs/tls.crt'), 'utf8'));
    expect(leaf.checkIssued(new X509Certificate(pems(cas)[0]!))).toBe(true);
    expect((await servedByOpenssl()).fingerprint).toBe(leaf.fingerprint256);
  }, 300_000);

  it('a --new-ca stopped after the files changed (the restart failed) still serves a trusted leaf, and renew again finishes it', async () => {
    const b = bastion();
    // systemctl as the stand-in, except that restart fails, as a unit that cannot be restarted would.
    const wrap = join(b.root, 'failing-restart');
    await mkdir(wrap, { recursive: true });
    const sim = join(b.systemd.env.PATH.split(':')[0]!, 'systemctl');
    await writeFile(
      join(wrap, 'systemctl'),
      `#!/bin/sh\nif [ "$1" = restart ]; then echo "Job for $2 failed (simulated)" >&2; exit 1; fi\nexec ${sim} "$@"\n`,
      { mode: 0o755 },
    );
    const before = await servedByOpenssl();
    const r = await airgap(
      ['registry', 'renew', '--dir', b.dir, '--password-file', b.passwordFile, '--new-ca', '--no-hub'],
      { env: { ...b.env, PATH: `${wrap}:${b.env.PATH}` }, timeoutMs: 180_000 },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`systemctl restart ${b.name}.service failed`);
    expect(r.stderr).toContain('then run airgap registry renew again to finish');
    // The files name the new leaf; the registry still serves the old one, trusted through the overlap.
    const cas = await readFile(b.caFile, 'utf8');
    expect((await servedByOpenssl()).fingerprint).toBe(before.fingerprint);
    expect(fingerprint(await readFile(join(b.dir, 'certs/tls.crt'), 'utf8'))).not.toBe(before.fingerprint);
    const during = await skopeo(['inspect', '--raw', ref()], [cas]);
    expect(during.exitCode, during.stderr).toBe(0);

    const again = await renew();
    expect(again.exitCode, again.stderr).toBe(0);
    const leaf = await readFile(join(b.dir, 'certs/tls.crt'), 'utf8');
    expect((await servedByOpenssl()).fingerprint).toBe(fingerprint(leaf));
    expect(new X509Certificate(leaf).checkIssued(new X509Certificate(pems(cas)[0]!))).toBe(true);
    const onlyNew = await skopeo(['inspect', '--raw', ref()], [pems(cas)[0]!]);
    expect(onlyNew.exitCode, onlyNew.stderr).toBe(0);
  }, 300_000);
});
