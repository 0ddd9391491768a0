import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  authFileChain,
  findCredential,
  normalizeAuthKey,
  type CredentialOptions,
} from '../../../src/mirror/auth/credentials.js';
import { AirgapError } from '../../../src/util/errors.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** Every secret a test puts anywhere; none may appear in any error text. */
const SECRETS = [
  'hunter2-secret',
  'c2VjcmV0LXBhc3N3b3Jk', // base64 of secret-password
  'secret-password',
  'helper-secret-1',
  'refresh-token-2',
  'stderr-secret-3',
  'stdout-secret-4',
  'plain-secret-5',
];

function expectNoSecret(e: AirgapError): void {
  const texts = [e.message, e.describe(), e.hint ?? '', e.where ?? '', JSON.stringify(e.toJSON())];
  for (const text of texts) for (const s of SECRETS) expect(text).not.toContain(s);
}

async function rejection(p: Promise<unknown>): Promise<AirgapError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(caught).toBeInstanceOf(AirgapError);
  expectNoSecret(caught as AirgapError);
  return caught as AirgapError;
}

let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'airgap-cred-'));
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

let n = 0;
/** A fresh home with nothing in it, and an env that points nowhere else. */
function sandbox(): { home: string; env: NodeJS.ProcessEnv; dir: string } {
  const dir = join(root, `s${n++}`);
  const home = join(dir, 'home');
  mkdirSync(home, { recursive: true });
  return { dir, home, env: { HOME: home } };
}

function writeJson(path: string, doc: unknown): string {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof doc === 'string' ? doc : JSON.stringify(doc));
  return path;
}

describe('authFileChain', () => {
  const home = '/h';
  it('uses the XDG config auth.json and then the docker config when nothing is set', () => {
    expect(authFileChain({ env: {}, home })).toEqual([
      '/h/.config/containers/auth.json',
      '/h/.docker/config.json',
    ]);
  });

  it('puts $XDG_RUNTIME_DIR/containers/auth.json first', () => {
    expect(authFileChain({ env: { XDG_RUNTIME_DIR: '/run/user/1000' }, home })).toEqual([
      '/run/user/1000/containers/auth.json',
      '/h/.config/containers/auth.json',
      '/h/.docker/config.json',
    ]);
  });

  it('honours XDG_CONFIG_HOME and DOCKER_CONFIG', () => {
    expect(
      authFileChain({
        env: { XDG_RUNTIME_DIR: '/run/u', XDG_CONFIG_HOME: '/cfg', DOCKER_CONFIG: '/dockercfg' },
        home,
      }),
    ).toEqual(['/run/u/containers/auth.json', '/cfg/containers/auth.json', '/dockercfg/config.json']);
  });

  it('replaces the containers auth files with --authfile, keeping the docker config after it', () => {
    const env = { XDG_RUNTIME_DIR: '/run/u', XDG_CONFIG_HOME: '/cfg', DOCKER_CONFIG: '/dockercfg' };
    expect(authFileChain({ authFile: '/a/auth.json', env, home })).toEqual([
      '/a/auth.json',
      '/dockercfg/config.json',
    ]);
  });

  it('treats REGISTRY_AUTH_FILE like --authfile, and --authfile wins over it', () => {
    const env = { REGISTRY_AUTH_FILE: '/r.json', XDG_RUNTIME_DIR: '/run/u' };
    expect(authFileChain({ env, home })).toEqual(['/r.json', '/h/.docker/config.json']);
    expect(authFileChain({ authFile: '/a.json', env, home })).toEqual(['/a.json', '/h/.docker/config.json']);
  });

  it('takes the home directory from HOME in the given env when no home is passed', () => {
    expect(authFileChain({ env: { HOME: '/envhome' } })).toEqual([
      '/envhome/.config/containers/auth.json',
      '/envhome/.docker/config.json',
    ]);
  });

  it('treats empty variables as unset instead of making relative paths', () => {
    const env = {
      REGISTRY_AUTH_FILE: '',
      XDG_RUNTIME_DIR: '',
      XDG_CONFIG_HOME: '',
      DOCKER_CONFIG: '',
      HOME: '',
    };
    expect(authFileChain({ env, home })).toEqual([
      '/h/.config/containers/auth.json',
      '/h/.docker/config.json',
    ]);
    expect(authFileChain({ authFile: '', env, home })).toEqual([
      '/h/.config/containers/auth.json',
      '/h/.docker/config.json',
    ]);
  });
});

describe('normalizeAuthKey', () => {
  it.each([
    ['https://index.docker.io/v1/', 'docker.io'],
    ['index.docker.io', 'docker.io'],
    ['registry-1.docker.io', 'docker.io'],
    ['http://host:5000/', 'host:5000'],
    ['https://quay.io/v2/', 'quay.io'],
    ['quay.io/org', 'quay.io/org'],
  ])('%s → %s', (key, want) => {
    expect(normalizeAuthKey(key)).toBe(want);
  });
});

describe('findCredential from auth files', () => {
  it('prefers the longest matching per-repository key over the per-host key', async () => {
    const { home, env } = sandbox();
    writeJson(join(home, '.config/containers/auth.json'), {
      auths: {
        'quay.io': { auth: b64('host-user:host-pw') },
        'quay.io/org': { auth: b64('org-user:org-pw') },
        'quay.io/org/app': { auth: b64('app-user:app-pw') },
      },
    });
    const opts = { env, home };
    expect(await findCredential('quay.io', 'org/app', opts)).toMatchObject({
      username: 'app-user',
      password: 'app-pw',
    });
    expect(await findCredential('quay.io', 'org/other', opts)).toMatchObject({ username: 'org-user' });
    // quay.io/org/app is not a prefix of quay.io/org/app2 as a path.
    expect(await findCredential('quay.io', 'org/app2', opts)).toMatchObject({ username: 'org-user' });
    expect(await findCredential('quay.io', 'elsewhere/app', opts)).toMatchObject({ username: 'host-user' });
    expect(await findCredential('registry.example.com', 'org/app', opts)).toBeUndefined();
  });

  it('says which file and key a credential came from', async () => {
    const { home, env } = sandbox();
    const file = writeJson(join(home, '.config/containers/auth.json'), {
      auths: { 'quay.io/org': { auth: b64('u:p') } },
    });
    const c = await findCredential('quay.io', 'org/app', { env, home });
    expect(c?.source).toBe(`${file} (auths["quay.io/org"])`);
  });

  it('matches docker login’s https://index.docker.io/v1/ key for docker.io', async () => {
    const { home, env } = sandbox();
    writeJson(join(home, '.docker/config.json'), {
      auths: { 'https://index.docker.io/v1/': { auth: b64('hubuser:hubpw') } },
    });
    expect(await findCredential('docker.io', 'library/busybox', { env, home })).toMatchObject({
      username: 'hubuser',
      password: 'hubpw',
    });
  });

  it('prefers an exact docker.io key over the legacy URL key in the same file, whatever the order', async () => {
    for (const order of ['legacy-first', 'exact-first']) {
      const { home, env } = sandbox();
      const legacy: [string, unknown] = ['https://index.docker.io/v1/', { auth: b64('old:old-pw') }];
      const exact: [string, unknown] = ['docker.io', { auth: b64('new:new-pw') }];
      const auths = Object.fromEntries(order === 'legacy-first' ? [legacy, exact] : [exact, legacy]);
      writeJson(join(home, '.config/containers/auth.json'), { auths });
      expect(await findCredential('docker.io', 'library/busybox', { env, home }), order).toMatchObject({
        username: 'new',
      });
    }
  });

  it('matches a http:// URL key with a port to the host:port registry', async () => {
    const { home, env } = sandbox();
    writeJson(join(home, '.docker/config.json'), { auths: { 'http://host:5000/': { auth: b64('u5:p5') } } });
    expect(await findCredential('host:5000', 'a/b', { env, home })).toMatchObject({ username: 'u5' });
    expect(await findCredential('host:5001', 'a/b', { env, home })).toBeUndefined();
  });

  it('returns an identitytoken as identityToken, not as a password', async () => {
    const { home, env } = sandbox();
    writeJson(join(home, '.config/containers/auth.json'), {
      auths: { 'registry.example.com': { identitytoken: 'refresh-token-x', username: '00000000-0000' } },
    });
    const c = await findCredential('registry.example.com', 'a', { env, home });
    expect(c).toMatchObject({ identityToken: 'refresh-token-x', username: '00000000-0000' });
    expect(c?.password).toBeUndefined();
  });

  it('accepts plain username and password fields, and a password containing colons', async () => {
    const { home, env } = sandbox();
    writeJson(join(home, '.config/containers/auth.json'), {
      auths: {
        'plain.example.com': { username: 'pu', password: 'pp' },
        'colon.example.com': { auth: b64('cu:a:b:c') },
      },
    });
    expect(await findCredential('plain.example.com', 'a', { env, home })).toMatchObject({
      username: 'pu',
      password: 'pp',
    });
    expect(await findCredential('colon.example.com', 'a', { env, home })).toMatchObject({
      username: 'cu',
      password: 'a:b:c',
    });
  });

  it('uses the first file in the chain that has a credential, even over a more specific key later', async () => {
    const { dir, home } = sandbox();
    const env = { HOME: home, XDG_RUNTIME_DIR: join(dir, 'run'), XDG_CONFIG_HOME: join(dir, 'cfg') };
    writeJson(join(dir, 'run/containers/auth.json'), { auths: { 'quay.io': { auth: b64('runtime:1') } } });
    writeJson(join(dir, 'cfg/containers/auth.json'), {
      auths: { 'quay.io/org/app': { auth: b64('config:2') } },
    });
    writeJson(join(home, '.docker/config.json'), { auths: { 'quay.io': { auth: b64('docker:3') } } });
    expect(await findCredential('quay.io', 'org/app', { env, home })).toMatchObject({ username: 'runtime' });
    // A host the first file does not know falls through to the next.
    writeJson(join(dir, 'cfg/containers/auth.json'), { auths: { 'other.io': { auth: b64('config:2') } } });
    expect(await findCredential('other.io', 'x', { env, home })).toMatchObject({ username: 'config' });
  });

  it('consults the docker config after --authfile', async () => {
    const { dir, home, env } = sandbox();
    const authFile = writeJson(join(dir, 'explicit.json'), {
      auths: { 'quay.io': { auth: b64('explicit:1') } },
    });
    writeJson(join(home, '.docker/config.json'), { auths: { 'other.io': { auth: b64('docker:2') } } });
    writeJson(join(home, '.config/containers/auth.json'), {
      auths: { 'other.io': { auth: b64('ignored:3') } },
    });
    expect(await findCredential('quay.io', 'a', { authFile, env, home })).toMatchObject({
      username: 'explicit',
    });
    expect(await findCredential('other.io', 'a', { authFile, env, home })).toMatchObject({
      username: 'docker',
    });
  });

  it('skips optional files that do not exist', async () => {
    const { dir, home } = sandbox();
    const env = { HOME: home, XDG_RUNTIME_DIR: join(dir, 'no-run'), XDG_CONFIG_HOME: join(dir, 'no-cfg') };
    expect(await findCredential('quay.io', 'a', { env, home })).toBeUndefined();
    writeJson(join(home, '.docker/config.json'), { auths: { 'quay.io': { auth: b64('only:docker') } } });
    expect(await findCredential('quay.io', 'a', { env, home })).toMatchObject({ username: 'only' });
  });

  it('skips the empty entries docker writes when a credential store holds the secret', async () => {
    const { dir, home } = sandbox();
    const env = { HOME: home, XDG_RUNTIME_DIR: join(dir, 'run') };
    writeJson(join(dir, 'run/containers/auth.json'), { auths: { 'quay.io': {}, 'q2.io': { auth: '' } } });
    writeJson(join(home, '.docker/config.json'), {
      auths: { 'quay.io': { auth: b64('next:1') }, 'q2.io': { auth: b64('next2:1') } },
    });
    expect(await findCredential('quay.io', 'a', { env, home })).toMatchObject({ username: 'next' });
    expect(await findCredential('q2.io', 'a', { env, home })).toMatchObject({ username: 'next2' });
  });

  it('fails with a usage error naming the path when --authfile does not exist', async () => {
    const { dir, home, env } = sandbox();
    const missing = join(dir, 'nope', 'auth.json');
    const e = await rejection(findCredential('quay.io', 'a', { authFile: missing, env, home }));
    expect(e.code).toBe(MirrorError.AUTH_FILE_UNREADABLE);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(missing);
  });

  it('fails the same way when REGISTRY_AUTH_FILE names a missing file', async () => {
    const { dir, home } = sandbox();
    const missing = join(dir, 'env-auth.json');
    const e = await rejection(
      findCredential('quay.io', 'a', { env: { HOME: home, REGISTRY_AUTH_FILE: missing }, home }),
    );
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(missing);
  });

  it('fails on malformed JSON naming the file, without quoting the secret', async () => {
    const { home, env } = sandbox();
    // Single quotes: V8's own message would quote the text around them, i.e. part of the secret.
    const file = writeJson(
      join(home, '.config/containers/auth.json'),
      `{\n  "auths": {\n    "quay.io": {"auth": 'c2VjcmV0LXBhc3N3b3Jk'}\n  }\n}\n`,
    );
    const e = await rejection(findCredential('quay.io', 'a', { env, home }));
    expect(e.code).toBe(MirrorError.AUTH_FILE_INVALID);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(file);
    expect(e.message).not.toContain('c2VjcmV0');
    expect(e.message).not.toContain('Unexpected token');
  });

  it('gives the line and column of a JSON error when the parser knows it', async () => {
    const { home, env } = sandbox();
    const file = writeJson(
      join(home, '.config/containers/auth.json'),
      `{\n  "auths": {\n    "quay.io": {"auth": "c2VjcmV0LXBhc3N3b3Jk",}\n  }\n}\n`,
    );
    const e = await rejection(findCredential('quay.io', 'a', { env, home }));
    expect(e.message).toBe(`the auth file ${file} is not valid JSON at line 3 column 48`);
  });

  it('fails on a truncated auth file naming the file', async () => {
    const { home, env } = sandbox();
    const file = writeJson(
      join(home, '.docker/config.json'),
      `{"auths": {"quay.io": {"auth": "c2VjcmV0LXBhc3N3b3Jk"`,
    );
    const e = await rejection(findCredential('quay.io', 'a', { env, home }));
    expect(e.code).toBe(MirrorError.AUTH_FILE_INVALID);
    expect(e.message).toContain(file);
  });

  it.each([
    ['junk characters', '!!!not-base64!!!'],
    ['valid base64 followed by junk (Node would silently decode it)', `${b64('user:hunter2-secret')}*`],
    ['a user:password that was never encoded', 'user:plain-secret-5'],
    ['base64 without its padding', b64('u:secret-password').replace(/=+$/, '')],
  ])('fails on an auth value that is not valid base64: %s', async (_what, auth) => {
    const { home, env } = sandbox();
    const file = writeJson(join(home, '.config/containers/auth.json'), { auths: { 'quay.io': { auth } } });
    const e = await rejection(findCredential('quay.io', 'a', { env, home }));
    expect(e.code).toBe(MirrorError.AUTH_ENTRY_INVALID);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(file);
    expect(e.message).toContain('quay.io');
    expect(e.message).not.toContain(auth);
  });

  it('fails on an auth value that decodes to something without a colon, without printing it', async () => {
    const { home, env } = sandbox();
    writeJson(join(home, '.config/containers/auth.json'), {
      auths: { 'quay.io': { auth: b64('hunter2-secret') } },
    });
    const e = await rejection(findCredential('quay.io', 'a', { env, home }));
    expect(e.code).toBe(MirrorError.AUTH_ENTRY_INVALID);
    expect(e.message).toContain('user:password');
  });
});

describe('findCredential with credential helpers (a real docker-credential-* executable)', () => {
  let bin: string;
  let log: string;
  let savedPath: string | undefined;

  beforeAll(() => {
    bin = join(root, 'bin');
    log = join(root, 'helper.log');
    mkdirSync(bin, { recursive: true });
    const helper = join(bin, 'docker-credential-airgaptest');
    writeFileSync(
      helper,
      [
        '#!/bin/sh',
        'host=$(cat)',
        `printf '%s %s\\n' "$1" "$host" >> '${log}'`,
        '[ "$1" = get ] || exit 2',
        'case "$host" in',
        `  helper.example.com) printf '{"ServerURL":"%s","Username":"robot","Secret":"helper-secret-1"}\\n' "$host" ;;`,
        `  token.example.com) printf '{"ServerURL":"%s","Username":"<token>","Secret":"refresh-token-2"}\\n' "$host" ;;`,
        '  broken.example.com) echo "stdout-secret-3"; echo "debug line" >&2; echo "keychain is locked" >&2; exit 3 ;;',
        '  hang.example.com) echo "asking the keychain" >&2; sleep 15; echo "late-secret-5" ;;',
        '  chatty.example.com) yes "chatty-secret-6" ;;',
        '  garbage.example.com) echo "stdout-secret-4 is not json"; exit 0 ;;',
        '  *) echo "credentials not found in native keychain"; exit 1 ;;',
        'esac',
        '',
      ].join('\n'),
    );
    chmodSync(helper, 0o755);
    // The helper runs with process.env: put ours first on PATH.
    savedPath = process.env.PATH;
    process.env.PATH = `${bin}${delimiter}${savedPath ?? ''}`;
  });

  afterAll(() => {
    if (savedPath === undefined) delete process.env.PATH;
    else process.env.PATH = savedPath;
  });

  beforeEach(() => {
    writeFileSync(log, '');
  });

  const calls = () => readFileSync(log, 'utf8').split('\n').filter(Boolean);

  function withConfig(doc: unknown): CredentialOptions & { file: string } {
    const { home, env } = sandbox();
    const file = writeJson(join(home, '.config/containers/auth.json'), doc);
    return { home, env, file };
  }

  it('asks the credHelpers helper for its host with `get` and the host on stdin', async () => {
    const { file, ...opts } = withConfig({ credHelpers: { 'helper.example.com': 'airgaptest' } });
    const c = await findCredential('helper.example.com', 'org/app', opts);
    expect(c).toMatchObject({ username: 'robot', password: 'helper-secret-1' });
    expect(c?.identityToken).toBeUndefined();
    expect(c?.source).toContain(file);
    expect(c?.source).toContain('docker-credential-airgaptest');
    expect(calls()).toEqual(['get helper.example.com']);
  });

  it('turns a `<token>` username into an identity token', async () => {
    const { file: _f, ...opts } = withConfig({ credHelpers: { 'token.example.com': 'airgaptest' } });
    const c = await findCredential('token.example.com', 'a', opts);
    expect(c).toMatchObject({ identityToken: 'refresh-token-2' });
    expect(c?.username).toBeUndefined();
    expect(c?.password).toBeUndefined();
  });

  it('prefers the helper over an auths entry for the same host', async () => {
    const { file: _f, ...opts } = withConfig({
      credHelpers: { 'helper.example.com': 'airgaptest' },
      auths: { 'helper.example.com': { auth: b64('stale:stale') } },
    });
    expect(await findCredential('helper.example.com', 'a', opts)).toMatchObject({ username: 'robot' });
  });

  it('falls back to auths when the helper has nothing for the host', async () => {
    const { file: _f, ...opts } = withConfig({
      credHelpers: { 'unknown.example.com': 'airgaptest' },
      auths: { 'unknown.example.com': { auth: b64('fallback:pw') } },
    });
    expect(await findCredential('unknown.example.com', 'a', opts)).toMatchObject({ username: 'fallback' });
    expect(calls()).toEqual(['get unknown.example.com']);
  });

  it('does not run a helper configured only for another host', async () => {
    const { file: _f, ...opts } = withConfig({
      credHelpers: { 'helper.example.com': 'airgaptest' },
      auths: { 'quay.io': { auth: b64('q:q') } },
    });
    expect(await findCredential('quay.io', 'a', opts)).toMatchObject({ username: 'q' });
    expect(calls()).toEqual([]);
  });

  it('asks the credsStore after the auths keys, and not at all when an auths key matches', async () => {
    const { file, ...opts } = withConfig({
      credsStore: 'airgaptest',
      auths: { 'helper.example.com': {}, 'quay.io': { auth: b64('q:q') } },
    });
    const c = await findCredential('helper.example.com', 'a', opts);
    expect(c).toMatchObject({ username: 'robot', password: 'helper-secret-1' });
    expect(c?.source).toContain(`${file} (credsStore)`);
    expect(calls()).toEqual(['get helper.example.com']);
    writeFileSync(log, '');
    expect(await findCredential('quay.io', 'a', opts)).toMatchObject({ username: 'q' });
    expect(calls()).toEqual([]);
  });

  it('returns nothing when the credsStore has nothing for the host', async () => {
    const { file: _f, ...opts } = withConfig({ credsStore: 'airgaptest' });
    expect(await findCredential('nothing.example.com', 'a', opts)).toBeUndefined();
  });

  it('names the helper and the config file when the helper is not installed', async () => {
    const { file, ...opts } = withConfig({
      credHelpers: { 'quay.io': 'airgap-not-installed' },
      auths: { 'quay.io': { auth: b64('u:hunter2-secret') } },
    });
    const e = await rejection(findCredential('quay.io', 'a', opts));
    expect(e.code).toBe(MirrorError.AUTH_HELPER_FAILED);
    expect(e.message).toContain('docker-credential-airgap-not-installed');
    expect(e.where).toContain(file);
    expect(e.describe()).toContain(file);
    expect(e.hint).toContain('install docker-credential-airgap-not-installed');
  });

  it('names the credsStore helper and file when it is not installed', async () => {
    const { file, ...opts } = withConfig({ credsStore: 'airgap-missing-store' });
    const e = await rejection(findCredential('quay.io', 'a', opts));
    expect(e.message).toContain('docker-credential-airgap-missing-store');
    expect(e.describe()).toContain(`${file} (credsStore)`);
  });

  it('reports a failing helper with its exit status and the last line of its stderr, never its stdout', async () => {
    const { file, ...opts } = withConfig({ credHelpers: { 'broken.example.com': 'airgaptest' } });
    const e = await rejection(findCredential('broken.example.com', 'a', opts));
    expect(e.code).toBe(MirrorError.AUTH_HELPER_FAILED);
    expect(e.message).toBe(
      'credential helper docker-credential-airgaptest failed for broken.example.com (exit 3): keychain is locked',
    );
    expect(e.describe()).toContain(file);
    expect(e.describe()).not.toContain('stdout-secret-3');
  });

  it('stops a helper that does not answer in time, and says what it was doing', async () => {
    const { file, ...opts } = withConfig({ credHelpers: { 'hang.example.com': 'airgaptest' } });
    const started = Date.now();
    const e = await rejection(findCredential('hang.example.com', 'a', { ...opts, helperTimeoutMs: 1_000 }));
    // The shell is killed at 1 s; its sleep, still holding the output pipe, does not keep us waiting.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect(e.code).toBe(MirrorError.AUTH_HELPER_FAILED);
    expect(e.message).toBe(
      'credential helper docker-credential-airgaptest did not answer for hang.example.com within 1 s (stopped): asking the keychain',
    );
    expect(e.hint).toContain('locked keychain');
    expect(e.describe()).toContain(file);
  });

  it('stops a helper that prints without end, and does not repeat what it printed', async () => {
    const { file: _f, ...opts } = withConfig({ credHelpers: { 'chatty.example.com': 'airgaptest' } });
    const e = await rejection(findCredential('chatty.example.com', 'a', opts));
    expect(e.code).toBe(MirrorError.AUTH_HELPER_FAILED);
    expect(e.message).toContain('printed more than 1 MiB for chatty.example.com');
    expect(e.describe()).not.toContain('chatty-secret-6');
  });

  it('reports a helper that prints something other than JSON without repeating it', async () => {
    const { file: _f, ...opts } = withConfig({ credHelpers: { 'garbage.example.com': 'airgaptest' } });
    const e = await rejection(findCredential('garbage.example.com', 'a', opts));
    expect(e.code).toBe(MirrorError.AUTH_HELPER_FAILED);
    expect(e.message).toContain('docker-credential-airgaptest');
    expect(e.describe()).not.toContain('stdout-secret-4');
  });
});
