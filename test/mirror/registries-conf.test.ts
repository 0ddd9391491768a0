/**
 * Reading sources through registries.conf (containers-registries.conf(5)): the real sample files
 * parse, the table with the longest prefix chooses mirrors by digest or tag as podman would, and
 * an enclave mirrors images named at an upstream it cannot reach, from an intermediate registry.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRegistriesConf, parseRegistriesConf } from '../../src/mirror/registry/registries-conf.js';
import { ReadRedirect } from '../../src/mirror/registry/redirect.js';
import { AirgapError } from '../../src/util/errors.js';
import { airgap } from '../helpers/cli.js';
import { seedRegistry, tempDir, writeIsc, writeAuthFile } from '../helpers/fixtures.js';
import { realdata, withRealdata } from '../helpers/realdata.js';
import { startRegistry, type TestRegistry } from '../helpers/registry.js';
import { skopeoDigest } from '../helpers/skopeo.js';

const sample = (name: string) => realdata('samples', 'registries-conf', name);

async function redirectOf(name: string): Promise<ReadRedirect> {
  return new ReadRedirect(await loadRegistriesConf({ path: sample(name) }));
}

/** `host/repo` of each place a read would try, in order. */
function tries(r: ReadRedirect, registry: string, repo: string, byDigest: boolean): string[] | string {
  const plan = r.plan(registry, repo, byDigest);
  if (!plan) return 'as named';
  if ('blocked' in plan) return 'blocked';
  return plan.candidates.map((c) => `${c.registry}/${c.repository}${c.insecure ? ' (insecure)' : ''}`);
}

describe('registries.conf: which place a read tries, as containers/image does', () => {
  withRealdata.it('parses every real sample as it is', async () => {
    for (const name of [
      'containers-image-mirrors.conf',
      'containers-image-pull-sources-from-reference.conf',
      'containers-image-registries.conf',
      'oc-mirror-v1-testdata-registries.conf',
    ]) {
      const conf = await loadRegistriesConf({ path: sample(name) });
      expect(conf.files).toEqual([sample(name)]);
    }
  });

  withRealdata.it('tries the mirrors in order, then the location; a blocked prefix is refused', async () => {
    const r = await redirectOf('containers-image-mirrors.conf');
    expect(tries(r, 'registry.com', 'ns/image', true)).toEqual([
      'mirror-1.registry.com/ns/image',
      'mirror-2.registry.com/ns/image (insecure)',
      'registry.com/ns/image',
    ]);
    expect(tries(r, 'blocked.registry.com', 'image', true)).toBe('blocked');
    expect(tries(r, 'other.example.com', 'image', true)).toBe('as named');
  });

  withRealdata.it(
    'rewrites the prefix to the location, and honours digest-only and tag-only mirrors',
    async () => {
      const r = await redirectOf('containers-image-pull-sources-from-reference.conf');
      // prefix registry-a.com/foo → location registry-a.com/bar; mirrors get the rest of the name.
      expect(tries(r, 'registry-a.com', 'foo/image', false)).toEqual([
        'mirror-1.registry-a.com/image',
        'mirror-2.registry-a.com/image (insecure)',
        'registry-a.com/bar/image',
      ]);
      // mirror-by-digest-only: a tag is read only at the location.
      expect(tries(r, 'registry-b.com', 'foo/image', false)).toEqual(['registry-b.com/bar/image']);
      expect(tries(r, 'registry-b.com', 'foo/image', true)).toHaveLength(3);
      // pull-from-mirror per mirror: digest-only mirrors skipped for a tag, tag-only ones for a digest.
      expect(tries(r, 'registry-c.com', 'baz/image', false)).toEqual([
        'mirror-1.registry-c.com/image',
        'registry-c.com/bar/image',
      ]);
      expect(tries(r, 'registry-e.com', 'baz/image', true)).toEqual(['registry-e.com/bar/image']);
      // A name only sharing letters with a prefix is not under it.
      expect(tries(r, 'registry-a.com', 'foobar/image', true)).toBe('as named');
    },
  );

  withRealdata.it(
    'reads oc-mirror v1 files: an empty prefix is the location, a trailing slash is the same namespace',
    async () => {
      const r = await redirectOf('oc-mirror-v1-testdata-registries.conf');
      expect(tries(r, 'quay.io', 'redhatgov/app', true)).toEqual([
        'preprodlocation.in/test/app',
        'quay.io/redhatgov/app',
      ]);
    },
  );

  it('takes the longest prefix, and a wildcard for subdomains', () => {
    const r = new ReadRedirect({
      files: ['t.conf'],
      tables: parseRegistriesConf(
        [
          '[[registry]]',
          'location = "quay.io"',
          '[[registry.mirror]]',
          'location = "mid.example.com/all"',
          '[[registry]]',
          'prefix = "quay.io/openshift-release-dev"',
          'location = "quay.io/openshift-release-dev"',
          '[[registry.mirror]]',
          'location = "mid.example.com/ocp"',
          '[[registry]]',
          'prefix = "*.redhat.io"',
          '[[registry.mirror]]',
          'location = "mid.example.com/rh"',
        ].join('\n'),
        't.conf',
      ),
    });
    expect(tries(r, 'quay.io', 'openshift-release-dev/ocp-release', true)[0]).toBe(
      'mid.example.com/ocp/ocp-release',
    );
    expect(tries(r, 'quay.io', 'other/app', true)[0]).toBe('mid.example.com/all/other/app');
    expect(tries(r, 'registry.redhat.io', 'rhel9/support-tools', true)).toEqual([
      'mid.example.com/rh/rhel9/support-tools',
      'registry.redhat.io/rhel9/support-tools',
    ]);
  });

  it('bad files: what is wrong, where, and how to fix it', () => {
    const bad = (t: string) => {
      try {
        parseRegistriesConf(t, '/etc/containers/registries.conf');
      } catch (e) {
        expect(e).toBeInstanceOf(AirgapError);
        expect((e as AirgapError).exitCode).toBe(2);
        return `${(e as AirgapError).message} | ${(e as AirgapError).hint}`;
      }
      throw new Error('accepted');
    };
    expect(bad('[[registry]\nlocation = "x"')).toMatch(
      /^\/etc\/containers\/registries.conf:1:\d+: is not valid TOML/,
    );
    expect(bad('[registries.search]\nregistries = ["docker.io"]')).toContain('version 1 format');
    expect(
      bad(
        '[[registry]]\nlocation = "q.io"\n[[registry.mirror]]\nlocation = "m.io"\npull-from-mirror = "digest"',
      ),
    ).toContain(
      '[[registry]] #1 (prefix "q.io"), [[registry.mirror]] #1: pull-from-mirror "digest" is not all, digest-only or tag-only',
    );
    expect(
      bad(
        '[[registry]]\nlocation = "q.io"\nmirror-by-digest-only = true\n[[registry.mirror]]\nlocation = "m.io"\npull-from-mirror = "all"',
      ),
    ).toContain('pull-from-mirror is set while its [[registry]] sets mirror-by-digest-only');
    expect(bad('[[registry]]\nprefix = "*.example.com/foo"')).toContain('a wildcard prefix is a domain only');
    expect(bad('[[registry]]\nblocked = "yes"\nlocation = "q.io"')).toContain('blocked is not true or false');
  });

  withRealdata.it(
    'finds the file as podman does: the flag, CONTAINERS_REGISTRIES_CONF, the user’s, the system’s with drop-ins',
    async () => {
      const dir = await tempDir('airgap-regconf-');
      const system = join(dir, 'etc', 'registries.conf');
      await mkdir(join(dir, 'etc', 'registries.conf.d'), { recursive: true });
      await writeFile(system, '[[registry]]\nlocation = "a.io"\nblocked = true\n');
      await writeFile(
        join(dir, 'etc', 'registries.conf.d', '50-a.conf'),
        '[[registry]]\nlocation = "a.io"\n',
      );
      const home = join(dir, 'home');
      const fromSystem = await loadRegistriesConf({ env: { HOME: home }, systemPath: system });
      // The drop-in replaced the table of the same prefix.
      expect(fromSystem.tables.map((t) => [t.prefix, t.blocked])).toEqual([['a.io', false]]);
      await mkdir(join(home, '.config', 'containers'), { recursive: true });
      await writeFile(
        join(home, '.config', 'containers', 'registries.conf'),
        '[[registry]]\nlocation = "u.io"\n',
      );
      const fromUser = await loadRegistriesConf({ env: { HOME: home }, systemPath: system });
      expect(fromUser.tables.map((t) => t.prefix)).toEqual(['u.io']);
      const fromEnv = await loadRegistriesConf({
        env: { HOME: home, CONTAINERS_REGISTRIES_CONF: sample('containers-image-mirrors.conf') },
        systemPath: system,
      });
      expect(fromEnv.files).toEqual([sample('containers-image-mirrors.conf')]);
      await expect(loadRegistriesConf({ path: join(dir, 'nope.conf') })).rejects.toThrow(/does not exist/);
    },
  );
});

describe('an enclave mirrors from an intermediate registry through registries.conf', () => {
  let mid: TestRegistry;
  let dest: TestRegistry;
  let dir: string;
  let authFile: string;
  let digests: string[];

  beforeAll(async () => {
    [mid, dest] = await Promise.all([startRegistry(), startRegistry()]);
    // The intermediate registry holds what the connected side mirrored, under its own prefix.
    const built = await seedRegistry(mid, [
      { repo: 'enclave/openshift-release-dev/app', tag: 'v1', layers: [{ size: 40_000 }] },
      { repo: 'enclave/openshift-release-dev/tool', tag: 'v1', layers: [{ size: 30_000 }] },
      { repo: 'enclave/blocked/app', tag: 'v1', layers: [{ size: 1000 }] },
    ]);
    digests = built.map((b) => b.digest);
    dir = await tempDir('airgap-enclave-');
    authFile = await writeAuthFile(join(dir, 'auth.json'), [mid, dest]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([mid?.stop(), dest?.stop()]);
  });

  it('reads the upstream names from the mirror; the destination and IDMS keep the upstream names', async () => {
    const conf = join(dir, 'registries.conf');
    await writeFile(
      conf,
      [
        '[[registry]]',
        'prefix = "quay.airgap.invalid/openshift-release-dev"',
        'location = "quay.airgap.invalid/openshift-release-dev"',
        '[[registry.mirror]]',
        `location = "${mid.host}/enclave/openshift-release-dev"`,
        '[[registry]]',
        'location = "quay.airgap.invalid/blocked"',
        'blocked = true',
      ].join('\n'),
    );
    const isc = await writeIsc(dir, [
      `quay.airgap.invalid/openshift-release-dev/app@${digests[0]}`,
      `quay.airgap.invalid/openshift-release-dev/tool:v1`,
      `quay.airgap.invalid/blocked/app@${digests[2]}`,
    ]);
    const ws = join(dir, 'ws');
    const r = await airgap([
      'mirror',
      '-c',
      isc,
      '--workspace',
      `file://${ws}`,
      `docker://${dest.host}/mirror`,
      '--authfile',
      authFile,
      '--ca-file',
      mid.caFile,
      '--ca-file',
      dest.caFile,
      '--registries-conf',
      conf,
    ]);
    // The blocked image fails on its own; the two others arrive.
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain(`warning: reading through the mirror ${mid.host} (registries.conf)`);
    expect(r.stdout + r.stderr).toContain('quay.airgap.invalid/blocked/app is blocked by');
    expect(
      await skopeoDigest(
        `docker://${dest.skopeoHost}/mirror/openshift-release-dev/app@${digests[0]}`,
        dest.skopeo,
      ),
    ).toBe(digests[0]);
    expect(
      await skopeoDigest(`docker://${dest.skopeoHost}/mirror/openshift-release-dev/tool:v1`, dest.skopeo),
    ).toBe(digests[1]);
    const idms = await readFile(join(ws, 'cluster-resources', 'idms-oc-mirror.yaml'), 'utf8');
    expect(idms).toContain('source: quay.airgap.invalid/openshift-release-dev');
    expect(idms).not.toContain('enclave');
  }, 120_000);

  it('refuses a registries.conf that does not parse before reading anything', async () => {
    const conf = join(dir, 'broken.conf');
    await writeFile(
      conf,
      '[[registry]]\nlocation = "x.io"\n[[registry.mirror]]\npull-from-mirror = "sometimes"\nlocation = "m.io"\n',
    );
    const isc = await writeIsc(
      dir,
      [`quay.airgap.invalid/openshift-release-dev/app@${digests[0]}`],
      [],
      'b.yaml',
    );
    const r = await airgap(['mirror', '-c', isc, `file://${join(dir, 'out')}`, '--registries-conf', conf]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `error [REGISTRIES_CONF_INVALID]: ${conf}: [[registry]] #1 (prefix "x.io"), [[registry.mirror]] #1: pull-from-mirror "sometimes"`,
    );
  });
});
