/**
 * `airgap registry install` on a bastion made of real parts: podman loads the registry image from the
 * OCI archive a user carried across and runs it from the unit airgap writes, started by a stand-in
 * for systemd that runs the unit's Exec lines in order; skopeo, an independent client, pushes and
 * reads with the CA and the password, and fails without either.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { useBastion } from '../helpers/bastion.js';
import { airgap } from '../helpers/cli.js';

describe('airgap registry install', () => {
  const bastion = useBastion();

  /** skopeo against the registry: `trust` 'ca' gives only the registry CA, 'none' no CA at all. */
  const skopeo = async (args: string[], o: { trust: 'ca' | 'none'; creds?: string | false }) => {
    const b = bastion();
    const certDir = join(b.root, `skopeo-certs-${o.trust}`);
    await mkdir(certDir, { recursive: true });
    if (o.trust === 'ca') await writeFile(join(certDir, 'ca.crt'), await readFile(b.caFile));
    // No system roots: the CA reaches skopeo only through --cert-dir.
    const empty = join(b.root, 'empty.pem');
    await writeFile(empty, '');
    const copy = args[0] === 'copy';
    const cred = o.creds === false ? undefined : (o.creds ?? `${b.username}:${b.password}`);
    const flags = copy
      ? [
          '--src-cert-dir',
          certDir,
          '--dest-cert-dir',
          certDir,
          ...(cred ? ['--src-creds', cred, '--dest-creds', cred] : []),
        ]
      : ['--cert-dir', certDir, ...(cred ? ['--creds', cred] : [])];
    return execa('skopeo', [args[0]!, ...flags, ...args.slice(1)], {
      reject: false,
      env: { SSL_CERT_FILE: empty, SSL_CERT_DIR: join(b.root, 'no-such-dir') },
    });
  };

  it('--dry-run prints every step and command and changes nothing', async () => {
    const b = bastion();
    const r = await b.install(['--dry-run']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `[files] would: write the registry files for localhost:${b.port} into ${b.dir}`,
    );
    expect(r.stdout).toContain(`$ podman load --input ${b.imageArchive}`);
    expect(r.stdout).toMatch(
      new RegExp(
        `\\[unit\\] would: write /etc/systemd/system/${b.name}\\.service \\(runs: /usr/bin/podman run --rm --pull never --name ${b.name} --net host `,
      ),
    );
    expect(r.stdout).toContain(`$ systemctl enable --now ${b.name}.service`);
    expect(r.stdout).toContain('nothing was changed (--dry-run)');
    expect(existsSync(b.dir)).toBe(false);
    expect(existsSync(`/etc/systemd/system/${b.name}.service`)).toBe(false);
  });

  it('stops before changing the host where systemd is not PID 1, with the command the unit would run', async () => {
    const b = bastion();
    // The host's own systemctl: systemd does not run this container.
    const { PATH: _path, ...noSim } = b.env;
    const dir = join(b.root, 'no-systemd');
    const r = await airgap(
      [
        'registry',
        'install',
        '--dir',
        dir,
        '--name',
        b.name,
        '--hostname',
        'localhost',
        '--port',
        String(b.port),
        '--username',
        'admin',
        '--password-file',
        b.passwordFile,
        '--image',
        b.image,
        '--image-archive',
        b.imageArchive,
      ],
      { env: noSim },
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain('error [REGISTRY_NO_SYSTEMD]: systemd is not running as PID 1 on this host');
    expect(r.stderr).toContain('nothing was changed');
    expect(r.stderr).toContain(
      `/usr/bin/podman run --rm --pull never --name ${b.name} --net host -v ${dir}/auth:/auth:z`,
    );
    expect(r.stderr).not.toContain('    at ');
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(`/etc/systemd/system/${b.name}.service`)).toBe(false);
  });

  it('installs, starts and checks the registry; the second run changes nothing', async () => {
    const b = bastion();
    const r = await b.install();
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stdout).toContain(`[image] changed: loaded ${b.image} from ${b.imageArchive}`);
    expect(r.stdout).toContain(`[unit] changed: wrote /etc/systemd/system/${b.name}.service`);
    expect(r.stdout).toContain(`[service] changed: ${b.name}.service started`);
    expect(r.stdout).toMatch(
      /\[checks\] ok: localhost:\d+ serves .*trusted by the host, asks for the password, and gave back the image/,
    );
    expect(r.stdout).toContain(`the registry localhost:${b.port} is installed and answers`);
    expect(r.stdout).not.toContain(b.password);

    // The unit passes systemd's own checks.
    const verify = await execa('systemd-analyze', ['verify', `/etc/systemd/system/${b.name}.service`], {
      reject: false,
    });
    expect(verify.stderr).not.toMatch(/error|Unknown|Failed/i);
    expect((await b.systemd.systemctl('is-active', `${b.name}.service`)).stdout.trim()).toBe('active');

    // The host trusts it: podman's certs.d for every name the certificate has, and the system store.
    for (const a of [`localhost:${b.port}`, `127.0.0.1:${b.port}`, `[::1]:${b.port}`])
      expect(await readFile(`/etc/containers/certs.d/${a}/ca.crt`, 'utf8')).toBe(
        await readFile(b.caFile, 'utf8'),
      );
    const installed = JSON.parse(await readFile(join(b.dir, 'installed.json'), 'utf8')) as {
      trustFiles: string[];
    };
    const hostFile = installed.trustFiles.find((f) => !f.startsWith('/etc/containers/'));
    expect(hostFile && (await readFile(hostFile, 'utf8'))).toBe(await readFile(b.caFile, 'utf8'));
    const curl = await execa(
      'curl',
      ['-sS', '-o', '/dev/null', '-w', '%{http_code}', `https://localhost:${b.port}/v2/`],
      { reject: false },
    );
    expect(curl.stdout).toBe('401'); // trusted by the system store, and asks for the password

    const again = await b.install();
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).not.toMatch(/\] changed:/);
    expect(again.stdout).toContain(
      `nothing changed: the registry localhost:${b.port} was installed already and answers`,
    );
  });

  it('serves skopeo with the CA and the password, over IPv4 and IPv6, and refuses it without either', async () => {
    const b = bastion();
    const src = `docker://localhost:${b.port}/airgap/registry-check:latest`;
    const ok = await skopeo(['inspect', '--raw', src], { trust: 'ca' });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ schemaVersion: 2 });
    // skopeo 1.9 cannot parse an IPv6 reference: curl checks [::1], with the CA and the password.
    const v6 = await execa(
      'curl',
      [
        '-sS',
        '--cacert',
        b.caFile,
        '-u',
        `${b.username}:${b.password}`,
        `https://[::1]:${b.port}/v2/_catalog`,
      ],
      { reject: false },
    );
    expect(v6.exitCode, v6.stderr).toBe(0);
    expect(JSON.parse(v6.stdout)).toEqual({ repositories: ['airgap/registry-check'] });
    const copy = await skopeo(['copy', src, `docker://127.0.0.1:${b.port}/team/copied:1`], { trust: 'ca' });
    expect(copy.exitCode, copy.stderr).toBe(0);

    const noPassword = await skopeo(['inspect', '--raw', src], { trust: 'ca', creds: false });
    expect(noPassword.exitCode).not.toBe(0);
    expect(noPassword.stderr).toMatch(/unauthorized|authentication required/i);
    const wrong = await skopeo(['inspect', '--raw', src], { trust: 'ca', creds: `${b.username}:not-it` });
    expect(wrong.exitCode).not.toBe(0);
    const noCa = await skopeo(['inspect', '--raw', src], { trust: 'none' });
    expect(noCa.exitCode).not.toBe(0);
    expect(noCa.stderr).toMatch(/certificate signed by unknown authority|x509/);
  });

  it('refuses before anything changes when the image is neither in podman nor given', async () => {
    const b = bastion();
    const dir = join(b.root, 'no-image');
    const r = await b.airgap([
      'registry',
      'install',
      '--dir',
      dir,
      '--name',
      `${b.name}-x`,
      '--hostname',
      'localhost',
      '--username',
      'admin',
      '--password-file',
      b.passwordFile,
      '--image',
      'localhost/not-carried:1',
    ]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      'error [REGISTRY_IMAGE_MISSING]: podman has no image localhost/not-carried:1, and the bastion cannot pull it',
    );
    expect(r.stderr).toContain('podman save -o registry.tar --format oci-archive localhost/not-carried:1');
    expect(existsSync(dir)).toBe(false);
  });
});
