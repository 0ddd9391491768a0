/**
 * `airgap certs pull-secret` through the real CLI: the copy holds the mirror registry's
 * credentials beside the original entries, the original is never touched, and skopeo logs in to and
 * pulls from a real registry (Debian's docker-registry with htpasswd) with the copy as --authfile.
 */
import { link, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRegistryHost, parsePullSecret, withRegistryAuth } from '../../src/certs/pull-secret.js';
import type { BuiltImage } from '../../lab/images.js';
import { airgap } from '../helpers/cli.js';
import { seedRegistry, tempDir } from '../helpers/fixtures.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoCopy, skopeoDigest, skopeoInspect } from '../helpers/skopeo.js';
import { CommonError } from '../../src/util/errors.js';
import { CertsError } from '../../src/certs/errors.js';

const noStack = /\n\s+at .+:\d+:\d+/;
const mode = async (p: string) => (await stat(p)).mode & 0o777;
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A pull secret shaped like the one console.redhat.com gives (fake tokens), on one line. */
const ORIGINAL = {
  auths: {
    'cloud.openshift.com': { auth: b64('ocm-token-user:cloud-S3KRIT-token'), email: 'me@example.com' },
    'quay.io': { auth: b64('quay-user:quay-S3KRIT-token'), email: 'me@example.com' },
    'registry.connect.redhat.com': { auth: b64('rh-user:connect-S3KRIT-token'), email: 'me@example.com' },
    'registry.redhat.io': { auth: b64('rh-user:redhat-S3KRIT-token'), email: 'me@example.com' },
  },
};
const S3KRITS = ['S3KRIT', ...Object.values(ORIGINAL.auths).map((a) => a.auth)];

describe('airgap certs pull-secret', () => {
  let reg: TestRegistry;
  let image: BuiltImage;
  let dir: string;
  let input: string;
  let inputBytes: Buffer;
  let passwordFile: string;
  const args = (out: string, ...extra: string[]) => [
    'certs',
    'pull-secret',
    '--pull-secret',
    input,
    '--registry',
    reg.host,
    '--username',
    reg.username,
    '--password-file',
    passwordFile,
    '--out',
    out,
    ...extra,
  ];
  const noSecrets = (text: string) => {
    for (const s of [...S3KRITS, reg.password, b64(`${reg.username}:${reg.password}`)])
      expect(text).not.toContain(s);
  };

  beforeAll(async () => {
    reg = await startRegistry();
    [image] = (await seedRegistry(reg, [{ repo: 'mirror/app', tag: 'v1', layers: [{ size: 20_000 }] }])) as [
      BuiltImage,
    ];
    dir = await tempDir();
    input = join(dir, 'pull-secret.json');
    await writeFile(input, JSON.stringify(ORIGINAL), { mode: 0o600 });
    inputBytes = await readFile(input);
    passwordFile = join(dir, 'registry.pass');
    await writeFile(passwordFile, `${reg.password}\n`, { mode: 0o600 });
  });

  afterAll(async () => {
    await reg?.stop();
  });

  it('adds the registry to a 0600 copy, keeps every other entry, leaves the original; skopeo pulls with it', async () => {
    const out = join(dir, 'pull-secret-mirror.json');
    const r = await airgap([...args(out), '--email', 'ops@example.com']);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(await readFile(input)).toEqual(inputBytes);
    expect(await mode(out)).toBe(0o600);
    const doc = JSON.parse(await readFile(out, 'utf8'));
    expect(doc).toEqual({
      auths: {
        ...ORIGINAL.auths,
        [reg.host]: { auth: b64(`${reg.username}:${reg.password}`), email: 'ops@example.com' },
      },
    });
    expect(Object.keys(doc.auths)).toEqual([...Object.keys(ORIGINAL.auths), reg.host]);
    // One line, as install-config.yaml's pullSecret takes it.
    expect((await readFile(out, 'utf8')).trimEnd().split('\n')).toHaveLength(1);
    // The output names the registries, never a credential.
    expect(r.stdout).toContain(`added ${reg.host}`);
    for (const host of Object.keys(doc.auths)) expect(r.stdout).toContain(`  ${host}`);
    expect(r.stdout).toContain(`${input} is unchanged`);
    noSecrets(r.stdout + r.stderr);

    // skopeo: the stored login, an inspect and a pull, with nothing but the new file.
    const login = await execa(
      'skopeo',
      ['login', '--get-login', '--authfile', out, '--cert-dir', reg.skopeo.certDir, reg.host],
      { reject: false },
    );
    expect(login.exitCode, login.stderr).toBe(0);
    expect(login.stdout.trim()).toBe(reg.username);
    const opts = { authFile: out, certDir: reg.skopeo.certDir };
    expect((await skopeoInspect(`docker://${reg.host}/mirror/app:v1`, opts)).Digest).toBe(image.digest);
    const pulled = `oci:${join(dir, 'pulled')}:app`;
    await skopeoCopy(`docker://${reg.host}/mirror/app:v1`, pulled, {
      ...opts,
      extraArgs: ['--preserve-digests'],
    });
    expect(await skopeoDigest(pulled)).toBe(image.digest);
  });

  it('replaces an entry the registry already had; the wrong old password no longer matters', async () => {
    const stale = join(dir, 'stale.json');
    await writeFile(
      stale,
      JSON.stringify({
        auths: { [reg.host]: { auth: b64(`${reg.username}:old-wrong-password`), email: 'old@example.com' } },
        credHelpers: { 'example.com': 'secretservice' },
      }),
    );
    // Before: the stale entry is refused by the registry.
    await expect(
      skopeoInspect(`docker://${reg.host}/mirror/app:v1`, { authFile: stale, certDir: reg.skopeo.certDir }),
    ).rejects.toThrow(/unauthorized|authentication required|invalid username\/password/i);

    const out = join(dir, 'replaced.json');
    const r = await airgap([
      'certs',
      'pull-secret',
      '--pull-secret',
      stale,
      '--registry',
      reg.host,
      '--username',
      reg.username,
      '--password-file',
      passwordFile,
      '--out',
      out,
      '--json',
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      input: stale,
      out,
      registry: reg.host,
      action: 'replaced',
      registries: [reg.host],
    });
    noSecrets(r.stdout + r.stderr);
    const doc = JSON.parse(await readFile(out, 'utf8'));
    // The whole entry is replaced (no stale e-mail); other top-level fields are kept.
    expect(doc).toEqual({
      auths: { [reg.host]: { auth: b64(`${reg.username}:${reg.password}`) } },
      credHelpers: { 'example.com': 'secretservice' },
    });
    expect(
      (
        await skopeoInspect(`docker://${reg.host}/mirror/app:v1`, {
          authFile: out,
          certDir: reg.skopeo.certDir,
        })
      ).Digest,
    ).toBe(image.digest);
  });

  it('refuses --out that is the input, by any path, and leaves the input as it was', async () => {
    const sym = join(dir, 'link.json');
    await symlink(input, sym);
    const hard = join(dir, 'hard.json');
    await link(input, hard);
    for (const out of [
      input,
      relative(process.cwd(), input),
      join(dir, '.', 'pull-secret.json'),
      sym,
      hard,
    ]) {
      const r = await airgap(args(out, '--force'));
      expect(r.exitCode, out).toBe(2);
      expect(r.stderr).toContain('error [FLAG_CONFLICT]');
      expect(r.stderr).toContain('is the input pull secret');
      expect(await readFile(input)).toEqual(inputBytes);
    }
  });

  it('refuses to replace --out without --force; --force replaces it', async () => {
    const out = join(dir, 'existing.json');
    await writeFile(out, 'keep me\n', { mode: 0o644 });
    const r = await airgap(args(out));
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('error [OUTPUT_EXISTS]');
    expect(r.stderr).toContain(out);
    expect(r.stderr).toContain('--force');
    expect(await readFile(out, 'utf8')).toBe('keep me\n');
    const forced = await airgap(args(out, '--force'));
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(await mode(out)).toBe(0o600);
    expect(Object.keys(JSON.parse(await readFile(out, 'utf8')).auths)).toContain(reg.host);
  });

  describe('bad input: exit 2, a clear error naming the file or flag, nothing written, no secret shown', () => {
    const files: Record<string, string> = {};
    beforeAll(async () => {
      const put = async (name: string, data: string) => {
        files[name] = join(dir, name);
        await writeFile(files[name]!, data, { mode: 0o600 });
      };
      await put('broken.json', `{"auths": {"quay.io": {"auth": "${b64('u:broken-S3KRIT')}"}\n  oops`);
      await put('not-json.json', 'S3KRIT-token-pasted-here');
      await put('array.json', '[1, 2]');
      await put('no-auths.json', '{"quay.io": {"auth": "x"}}');
      await put('auths-array.json', '{"auths": []}');
      await put('empty.pass', '');
    });

    const cases: [string, () => Record<string, string>, string, () => string][] = [
      [
        'pull secret missing',
        () => ({ '--pull-secret': join(dir, 'nope.json') }),
        CommonError.FILE_UNREADABLE,
        () => join(dir, 'nope.json'),
      ],
      ['pull secret a directory', () => ({ '--pull-secret': dir }), CommonError.FILE_UNREADABLE, () => dir],
      [
        'broken JSON',
        () => ({ '--pull-secret': files['broken.json']! }),
        CertsError.PULL_SECRET_INVALID,
        () => 'line 2, column',
      ],
      [
        'not JSON',
        () => ({ '--pull-secret': files['not-json.json']! }),
        CertsError.PULL_SECRET_INVALID,
        () => files['not-json.json']!,
      ],
      [
        'a JSON array',
        () => ({ '--pull-secret': files['array.json']! }),
        CertsError.PULL_SECRET_INVALID,
        () => 'not a JSON object',
      ],
      [
        'no auths',
        () => ({ '--pull-secret': files['no-auths.json']! }),
        CertsError.PULL_SECRET_INVALID,
        () => 'no "auths" object',
      ],
      [
        'auths not an object',
        () => ({ '--pull-secret': files['auths-array.json']! }),
        CertsError.PULL_SECRET_INVALID,
        () => files['auths-array.json']!,
      ],
      [
        'registry with a scheme',
        () => ({ '--registry': 'https://registry.example.com:5000' }),
        CommonError.FLAG_INVALID,
        () => '--registry',
      ],
      [
        'registry with a path',
        () => ({ '--registry': 'registry.example.com:5000/ocp' }),
        CommonError.FLAG_INVALID,
        () => '--registry',
      ],
      [
        'registry port 0',
        () => ({ '--registry': 'registry.example.com:0' }),
        CommonError.FLAG_INVALID,
        () => 'port',
      ],
      [
        'registry port too big',
        () => ({ '--registry': 'registry.example.com:99999' }),
        CommonError.FLAG_INVALID,
        () => 'port',
      ],
      [
        'registry empty port',
        () => ({ '--registry': 'registry.example.com:' }),
        CommonError.FLAG_INVALID,
        () => 'port',
      ],
      [
        'bare IPv6',
        () => ({ '--registry': 'fd00::5:5000' }),
        CommonError.FLAG_INVALID,
        () => '[address]:port',
      ],
      [
        'IPv4 in brackets',
        () => ({ '--registry': '[10.0.0.5]:5000' }),
        CommonError.FLAG_INVALID,
        () => 'IPv6',
      ],
      [
        'bad host name',
        () => ({ '--registry': 'bad_host.example.com:5000' }),
        CommonError.FLAG_INVALID,
        () => 'bad_host',
      ],
      ['user with a colon', () => ({ '--username': 'a:b' }), CommonError.FLAG_INVALID, () => '--username'],
      [
        'empty password file',
        () => ({ '--password-file': files['empty.pass']! }),
        CertsError.PASSWORD_INVALID,
        () => files['empty.pass']!,
      ],
      [
        'password file missing',
        () => ({ '--password-file': join(dir, 'nope.pass') }),
        CommonError.FILE_UNREADABLE,
        () => join(dir, 'nope.pass'),
      ],
      ['--out a directory', () => ({ '--out': dir }), CommonError.FLAG_INVALID, () => 'is a directory'],
    ];

    it.each(cases)('%s', async (name, changes, code, named) => {
      const out = join(dir, `bad-${name.replace(/\W+/g, '-')}.json`);
      const a = args(out);
      for (const [flag, value] of Object.entries(changes())) a[a.indexOf(flag) + 1] = value;
      const r = await airgap(a);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`error [${code}]`);
      expect(r.stderr).toContain(named());
      expect(r.stderr).toContain('hint:');
      expect(r.stderr).not.toMatch(noStack);
      noSecrets(r.stdout + r.stderr);
      await expect(stat(out)).rejects.toThrow(/ENOENT/);
      expect(await readFile(input)).toEqual(inputBytes);
    });
  });

  describe('library', () => {
    it('checks registry hosts as image references name them', () => {
      for (const ok of [
        'registry.example.com',
        'registry.example.com:5000',
        'localhost:5000',
        '10.0.0.5:5000',
        '[fd00::5]:5000',
        '[fd00::5]',
        '[::1]:65535',
      ])
        expect(checkRegistryHost(ok)).toBe(ok);
      for (const bad of [
        '',
        'a b:5000',
        'user@host:5000',
        'host:5000:6000',
        'fd00::5',
        '[fd00::5',
        '[fd00::5]x',
      ])
        expect(() => checkRegistryHost(bad), bad).toThrow(
          /not a registry host|not a valid host|not a TCP port/,
        );
    });

    it('adds at the end, replaces in place, keeps everything else', () => {
      const doc = parsePullSecret(
        JSON.stringify({ auths: { a: { auth: 'x' }, b: { auth: 'y' } }, other: 1 }),
        'f',
      );
      const added = withRegistryAuth(doc, 'c:5000', { auth: 'z' });
      expect(added.action).toBe('added');
      expect(Object.keys(added.doc.auths)).toEqual(['a', 'b', 'c:5000']);
      const replaced = withRegistryAuth(added.doc, 'a', { auth: 'w' });
      expect(replaced.action).toBe('replaced');
      expect(replaced.doc).toEqual({
        auths: { a: { auth: 'w' }, b: { auth: 'y' }, 'c:5000': { auth: 'z' } },
        other: 1,
      });
      // The input object is not changed.
      expect(doc.auths).toEqual({ a: { auth: 'x' }, b: { auth: 'y' } });
    });
  });
});
