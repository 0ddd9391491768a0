import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  HOSTED_AGENT_PACKAGES,
  buildImageSetConfig,
  initImageSetConfig,
  renderImageSetConfig,
  writeImageSetConfigFile,
  type InitImageSetConfig,
  type InitOptions,
} from '../../../src/mirror/isc/init.js';
import {
  loadImageSetConfig,
  parseImageSetConfig,
  type ImageSetConfig,
} from '../../../src/mirror/isc/index.js';
import { airgap } from '../../helpers/cli.js';
import { parseGraph } from '../../../src/mirror/openshift/graph.js';
import { startGraphServer } from '../../../lab/graph-server.js';
import { tempDir } from '../../helpers/fixtures.js';
import { realdata, rejection, thrown, withRealdata } from '../../helpers/realdata.js';
import { CommonError } from '../../../src/util/errors.js';

const RH_INDEX = 'registry.redhat.io/redhat/redhat-operator-index';
const OCP_RELEASE = 'quay.io/openshift-release-dev/ocp-release:4.18.3-x86_64';
const DIGEST = `sha256:${'4f0c'.repeat(16)}`;
const HOSTED = HOSTED_AGENT_PACKAGES.map((p) => p.name);

let dir: string;
let fileNo = 0;
beforeAll(async () => {
  dir = await tempDir('airgap-init-');
});

/** Build, render, write to a file and read it back with the loader `airgap mirror -c` uses. */
async function roundTrip(
  opts: InitOptions,
): Promise<{ written: InitImageSetConfig; parsed: ImageSetConfig }> {
  const written = buildImageSetConfig(opts);
  const file = join(dir, `isc-${++fileNo}.yaml`);
  await writeImageSetConfigFile(file, renderImageSetConfig(written, { comment: ['a test'] }));
  const parsed = await loadImageSetConfig(file, { kind: 'ImageSetConfiguration' });
  return { written, parsed };
}

/** What the loader makes of a written config: oc-mirror's defaults filled in (Go zero values). */
function withDefaults(c: InitImageSetConfig): ImageSetConfig {
  const p = c.mirror.platform;
  return {
    kind: c.kind,
    apiVersion: c.apiVersion,
    ...(c.archiveSize !== undefined ? { archiveSize: c.archiveSize } : {}),
    mirror: {
      ...(p
        ? {
            platform: {
              channels: (p.channels ?? []).map((ch) => ({
                name: ch.name,
                type: 'ocp' as const,
                ...(ch.minVersion ? { minVersion: ch.minVersion } : {}),
                ...(ch.maxVersion ? { maxVersion: ch.maxVersion } : {}),
                shortestPath: ch.shortestPath ?? false,
                full: ch.full ?? false,
              })),
              ...(p.release ? { release: p.release } : {}),
              architectures: p.architectures ?? [],
              platforms: [],
              graph: p.graph ?? false,
              kubeVirtContainer: p.kubeVirtContainer ?? false,
            },
          }
        : {}),
      operators: (c.mirror.operators ?? []).map((op) => ({
        catalog: op.catalog,
        full: false,
        skipDependencies: false,
        platforms: [],
        packages: (op.packages ?? []).map((pkg) => ({ name: pkg.name, channels: pkg.channels ?? [] })),
      })),
      additionalImages: (c.mirror.additionalImages ?? []).map((i) => ({ name: i.name, platforms: [] })),
      blockedImages: [],
      samples: [],
    },
  };
}

/** A release channel as the loader returns it. */
const channel = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: 'ocp',
  shortestPath: false,
  full: false,
  ...extra,
});
const pkg = (name: string, ...channels: string[]) => ({ name, channels: channels.map((c) => ({ name: c })) });

interface Case {
  name: string;
  opts: InitOptions;
  /** What the file means once read back (a subset of the parsed config). */
  means: Record<string, unknown>;
}

const CASES: Case[] = [
  {
    name: '--version x.y: the latest release of stable-x.y, amd64',
    opts: { version: '4.18' },
    means: {
      mirror: {
        platform: { channels: [channel('stable-4.18')], architectures: ['amd64'], graph: false },
        operators: [],
      },
    },
  },
  {
    name: '--version x.y.z: exactly that release',
    opts: { version: '4.18.3' },
    means: {
      mirror: {
        platform: { channels: [channel('stable-4.18', { minVersion: '4.18.3', maxVersion: '4.18.3' })] },
      },
    },
  },
  {
    name: '--version of a release candidate: the candidate channel',
    opts: { version: '4.19.0-rc.2' },
    means: {
      mirror: {
        platform: {
          channels: [channel('candidate-4.19', { minVersion: '4.19.0-rc.2', maxVersion: '4.19.0-rc.2' })],
        },
      },
    },
  },
  {
    name: '--channel (two of one minor) with a range, --full, --arch, --graph, --kubevirt-container',
    opts: {
      channels: ['stable-4.18', 'eus-4.18'],
      minVersion: '4.18.1',
      maxVersion: '4.18.9',
      full: true,
      arches: ['arm64', 'multi'],
      graph: true,
      kubeVirtContainer: true,
    },
    means: {
      mirror: {
        platform: {
          channels: ['stable-4.18', 'eus-4.18'].map((n) =>
            channel(n, { minVersion: '4.18.1', maxVersion: '4.18.9', full: true }),
          ),
          architectures: ['arm64', 'multi'],
          graph: true,
          kubeVirtContainer: true,
        },
      },
    },
  },
  {
    name: 'an upgrade path: the minimum on the old channel, the maximum on the new one',
    opts: {
      channels: ['stable-4.17', 'stable-4.18'],
      minVersion: '4.17.10',
      maxVersion: '4.18.3',
      shortestPath: true,
    },
    means: {
      mirror: {
        platform: {
          channels: [
            channel('stable-4.17', { minVersion: '4.17.10', shortestPath: true }),
            channel('stable-4.18', { maxVersion: '4.18.3', shortestPath: true }),
          ],
        },
      },
    },
  },
  {
    name: 'one channel with a range that starts in the previous minor',
    opts: { channels: ['stable-4.18'], minVersion: '4.17.10', maxVersion: '4.18.3' },
    means: {
      mirror: {
        platform: { channels: [channel('stable-4.18', { minVersion: '4.17.10', maxVersion: '4.18.3' })] },
      },
    },
  },
  {
    name: '--release: one release image, no channel, no default architecture',
    opts: { release: OCP_RELEASE, graph: true },
    means: {
      mirror: { platform: { channels: [], release: OCP_RELEASE, architectures: [], graph: true } },
    },
  },
  {
    name: '--release by digest with --arch',
    opts: { release: `quay.io/openshift-release-dev/ocp-release@${DIGEST}`, arches: ['arm64'] },
    means: {
      mirror: {
        platform: {
          release: `quay.io/openshift-release-dev/ocp-release@${DIGEST}`,
          architectures: ['arm64'],
        },
      },
    },
  },
  {
    name: '--catalog and --package, with channels merged per package',
    opts: {
      catalog: 'registry.example.com:5000/ns/my-index:v1',
      packages: ['a-operator', 'b-operator:stable', 'b-operator:fast', 'a-operator', 'b-operator:stable'],
    },
    means: {
      mirror: {
        operators: [
          {
            catalog: 'registry.example.com:5000/ns/my-index:v1',
            packages: [pkg('a-operator'), pkg('b-operator', 'stable', 'fast')],
          },
        ],
      },
    },
  },
  {
    name: '--package without --catalog: the Red Hat index of the --version minor',
    opts: { version: '4.17', packages: ['lvms-operator'] },
    means: { mirror: { operators: [{ catalog: `${RH_INDEX}:v4.17`, packages: [pkg('lvms-operator')] }] } },
  },
  {
    name: '--package without --catalog: the minor of the --channel',
    opts: { channels: ['fast-4.16'], packages: ['x-operator'] },
    means: { mirror: { operators: [{ catalog: `${RH_INDEX}:v4.16` }] } },
  },
  {
    name: '--package without --catalog: the minor of the --release tag',
    opts: { release: OCP_RELEASE, packages: ['x-operator'] },
    means: { mirror: { operators: [{ catalog: `${RH_INDEX}:v4.18` }] } },
  },
  {
    name: '--catalog alone: the whole catalog',
    opts: { catalog: `${RH_INDEX}:v4.18` },
    means: { mirror: { operators: [{ catalog: `${RH_INDEX}:v4.18`, packages: [] }] } },
  },
  {
    name: 'a catalog in an OCI layout',
    opts: { catalog: 'oci:///srv/catalogs/redhat', packages: ['foo'] },
    means: { mirror: { operators: [{ catalog: 'oci:///srv/catalogs/redhat', packages: [pkg('foo')] }] } },
  },
  {
    name: '--image (deduplicated) and --archive-size',
    opts: {
      images: [
        'registry.redhat.io/ubi9/ubi:latest',
        `quay.io/org/tool@${DIGEST}`,
        'registry.redhat.io/ubi9/ubi:latest',
      ],
      archiveSize: '4',
    },
    means: {
      archiveSize: 4,
      mirror: {
        additionalImages: [
          { name: 'registry.redhat.io/ubi9/ubi:latest', platforms: [] },
          { name: `quay.io/org/tool@${DIGEST}`, platforms: [] },
        ],
      },
    },
  },
  {
    name: '--preset hosted-agent --version x.y',
    opts: { preset: 'hosted-agent', version: '4.18' },
    means: {
      mirror: {
        platform: { channels: [channel('stable-4.18')], architectures: ['amd64'], graph: true },
        operators: [{ catalog: `${RH_INDEX}:v4.18`, packages: HOSTED.map((n) => pkg(n)) }],
      },
    },
  },
  {
    name: '--preset hosted-agent --version x.y.z --with-odf',
    opts: { preset: 'hosted-agent', version: '4.18.3', withOdf: true },
    means: {
      mirror: {
        platform: {
          channels: [channel('stable-4.18', { minVersion: '4.18.3', maxVersion: '4.18.3' })],
          graph: true,
        },
        operators: [
          {
            catalog: `${RH_INDEX}:v4.18`,
            packages: [
              ...HOSTED,
              'odf-operator',
              'odf-dependencies',
              'ocs-operator',
              'ocs-client-operator',
              'mcg-operator',
              'odf-csi-addons-operator',
              'odf-prometheus-operator',
              'recipe',
              'rook-ceph-operator',
              'cephcsi-operator',
            ].map((n) => pkg(n)),
          },
        ],
      },
    },
  },
  {
    name: 'the preset, extended and overridden by flags',
    opts: {
      preset: 'hosted-agent',
      version: '4.18',
      channels: ['eus-4.18'],
      graph: false,
      arches: ['arm64'],
      catalog: 'mirror.example.com:8443/redhat/redhat-operator-index:v4.18',
      packages: ['lvms-operator:stable-4.18', 'kubevirt-hyperconverged'],
      images: ['registry.redhat.io/multicluster-engine/must-gather-rhel9:v2.8'],
    },
    means: {
      mirror: {
        platform: { channels: [channel('eus-4.18')], architectures: ['arm64'], graph: false },
        operators: [
          {
            catalog: 'mirror.example.com:8443/redhat/redhat-operator-index:v4.18',
            packages: [
              pkg('multicluster-engine'),
              pkg('lvms-operator', 'stable-4.18'),
              pkg('local-storage-operator'),
              pkg('metallb-operator'),
              pkg('kubevirt-hyperconverged'),
            ],
          },
        ],
        additionalImages: [{ name: 'registry.redhat.io/multicluster-engine/must-gather-rhel9:v2.8' }],
      },
    },
  },
  {
    name: 'the preset with --release instead of a channel',
    opts: { preset: 'hosted-agent', release: OCP_RELEASE },
    means: {
      mirror: {
        platform: { channels: [], release: OCP_RELEASE, graph: true },
        operators: [{ catalog: `${RH_INDEX}:v4.18`, packages: HOSTED.map((n) => pkg(n)) }],
      },
    },
  },
];

describe('buildImageSetConfig → renderImageSetConfig → loadImageSetConfig', () => {
  it.each(CASES)('$name', async ({ opts, means }) => {
    const { written, parsed } = await roundTrip(opts);
    expect(parsed).toEqual(withDefaults(written)); // nothing lost or added on the way through YAML
    expect(parsed).toMatchObject(means); // and it says what the flags asked for
    // toMatchObject lets objects carry more keys: channels and packages must be exactly these.
    const m = means as {
      mirror?: { platform?: { channels?: unknown[] }; operators?: { packages?: unknown[] }[] };
    };
    if (m.mirror?.platform?.channels)
      expect(parsed.mirror.platform?.channels).toEqual(m.mirror.platform.channels);
    m.mirror?.operators?.forEach((op, i) => {
      if (op.packages) expect(parsed.mirror.operators[i]?.packages).toEqual(op.packages);
    });
  });

  it('writes what a person would: oc-mirror key order, no defaults, lists flush under their key', () => {
    const text = renderImageSetConfig(
      buildImageSetConfig({
        preset: 'hosted-agent',
        version: '4.18.3',
        archiveSize: 4,
        images: ['a.io/b:1'],
      }),
      { comment: ['airgap mirror init --preset hosted-agent --version 4.18.3'] },
    );
    expect(text).toBe(
      [
        '# airgap mirror init --preset hosted-agent --version 4.18.3',
        'kind: ImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v2alpha1',
        'archiveSize: 4',
        'mirror:',
        '  platform:',
        '    architectures:',
        '    - amd64',
        '    channels:',
        '    - name: stable-4.18',
        '      minVersion: 4.18.3',
        '      maxVersion: 4.18.3',
        '    graph: true',
        '  operators:',
        `  - catalog: ${RH_INDEX}:v4.18`,
        '    packages:',
        '    - name: multicluster-engine',
        '    - name: lvms-operator',
        '    - name: local-storage-operator',
        '    - name: metallb-operator',
        '  additionalImages:',
        '  - name: a.io/b:1',
        '',
      ].join('\n'),
    );
    expect(text).not.toMatch(/false|type: ocp|\[\]/);
  });
});

describe('the hosted-agent preset', () => {
  it('is the release with its update graph plus MCE, LVMS, local storage and MetalLB from the index of the minor', () => {
    const c = buildImageSetConfig({ preset: 'hosted-agent', version: '4.19' });
    expect(HOSTED).toEqual([
      'multicluster-engine',
      'lvms-operator',
      'local-storage-operator',
      'metallb-operator',
    ]);
    expect(c.mirror.platform).toEqual({
      architectures: ['amd64'],
      channels: [{ name: 'stable-4.19' }],
      graph: true,
    });
    expect(c.mirror.operators).toEqual([
      { catalog: `${RH_INDEX}:v4.19`, packages: HOSTED.map((name) => ({ name })) },
    ]);
    expect(c.mirror.additionalImages).toBeUndefined();
  });

  const odf = (version: string) => initImageSetConfig({ preset: 'hosted-agent', version, withOdf: true });
  const odfNames = (version: string) =>
    (odf(version).config.mirror.operators?.[0].packages ?? [])
      .map((p) => p.name)
      .filter((n) => !HOSTED.includes(n));

  it('adds the ODF packages that the catalog of that minor has', () => {
    const seed = ['odf-operator', 'ocs-operator', 'mcg-operator', 'odf-csi-addons-operator'];
    const v416 = [...seed, 'ocs-client-operator', 'odf-prometheus-operator', 'recipe', 'rook-ceph-operator'];
    expect(odfNames('4.15').sort()).toEqual([...seed].sort());
    expect(odfNames('4.16').sort()).toEqual([...v416].sort());
    expect(odfNames('4.17').sort()).toEqual([...v416, 'odf-dependencies'].sort());
    expect(odfNames('4.18').sort()).toEqual([...v416, 'odf-dependencies', 'cephcsi-operator'].sort());
    expect(odfNames('4.19')).toEqual(odfNames('4.18'));
    expect(odfNames('4.20').sort()).toEqual(
      [...v416, 'odf-dependencies', 'cephcsi-operator', 'odf-external-snapshotter-operator'].sort(),
    );
  });

  it('says where the ODF list is not confirmed, and is quiet where it is', () => {
    expect(odf('4.18.3').notes).toEqual([]);
    expect(odf('4.20').notes).toEqual([]);
    expect(odf('4.15').notes.join('\n')).toMatch(/seed runbook's/);
    expect(odf('4.17').notes.join('\n')).toMatch(/cephcsi-operator/);
    expect(odf('4.21').notes.join('\n')).toMatch(/confirmed up to 4\.20/);
  });

  it('needs the release of the hosted cluster', () => {
    const e = thrown(() => buildImageSetConfig({ preset: 'hosted-agent' }));
    expect(e).toMatchObject({ code: CommonError.FLAG_MISSING, exitCode: 2 });
    expect(e.hint).toMatch(/--version 4\.18/);
  });
});

describe('bad input: a usage error (exit 2) that names the flag and how to fix it', () => {
  const BAD: { name: string; opts: InitOptions; code: string; hint: RegExp }[] = [
    {
      name: 'a "v" before the version',
      opts: { version: 'v4.18' },
      code: CommonError.FLAG_INVALID,
      hint: /drop the "v": 4\.18/,
    },
    {
      name: 'a version that is not one',
      opts: { version: '4.18.x' },
      code: CommonError.FLAG_INVALID,
      hint: /4\.18\.3/,
    },
    { name: 'a major only', opts: { version: '4' }, code: CommonError.FLAG_INVALID, hint: /OpenShift minor/ },
    {
      name: 'a misspelt channel',
      opts: { channels: ['stabel-4.18'] },
      code: CommonError.FLAG_INVALID,
      hint: /did you mean stable-4\.18\?/,
    },
    {
      name: 'a channel of no known kind',
      opts: { channels: ['nightly-4.18'] },
      code: CommonError.FLAG_INVALID,
      hint: /the kinds are stable, fast, eus, candidate/,
    },
    {
      name: 'a short --min-version',
      opts: { channels: ['stable-4.18'], minVersion: '4.18' },
      code: CommonError.FLAG_INVALID,
      hint: /write a full version: 4\.18\.0/,
    },
    {
      name: '--min-version above --max-version',
      opts: { channels: ['stable-4.18'], minVersion: '4.18.9', maxVersion: '4.18.1' },
      code: CommonError.FLAG_INVALID,
      hint: /swap them/,
    },
    {
      name: '--release with --channel',
      opts: { release: OCP_RELEASE, channels: ['stable-4.18'] },
      code: CommonError.FLAG_CONFLICT,
      hint: /not both/,
    },
    {
      name: '--release with --shortest-path',
      opts: { release: OCP_RELEASE, shortestPath: true },
      code: CommonError.FLAG_CONFLICT,
      hint: /drop --shortest-path/,
    },
    {
      name: 'a pinned --version with --max-version',
      opts: { version: '4.18.3', maxVersion: '4.18.5' },
      code: CommonError.FLAG_CONFLICT,
      hint: /--version 4\.18 with/,
    },
    {
      name: '--version and a --channel of another minor',
      opts: { version: '4.18', channels: ['stable-4.17'] },
      code: CommonError.FLAG_CONFLICT,
      hint: /<name>-4\.18/,
    },
    {
      name: 'an unknown architecture',
      opts: { version: '4.18', arches: ['sparc'] },
      code: CommonError.FLAG_INVALID,
      hint: /amd64, arm64/,
    },
    {
      name: 'the kernel name of an architecture',
      opts: { version: '4.18', arches: ['x86_64'] },
      code: CommonError.FLAG_INVALID,
      hint: /use amd64/,
    },
    {
      name: 'a channel without a minor',
      opts: { channels: ['stable'] },
      code: CommonError.FLAG_INVALID,
      hint: /stable-4\.18/,
    },
    {
      name: 'a channel with a patch',
      opts: { channels: ['stable-4.18.1'] },
      code: CommonError.FLAG_INVALID,
      hint: /stable-4\.18/,
    },
    {
      name: 'a package spec with two colons',
      opts: { version: '4.18', packages: ['a:b:c'] },
      code: CommonError.FLAG_INVALID,
      hint: /name:channel/,
    },
    {
      name: 'a package with an empty channel',
      opts: { version: '4.18', packages: ['lvms-operator:'] },
      code: CommonError.FLAG_INVALID,
      hint: /name:channel/,
    },
    {
      name: 'a package without a name',
      opts: { version: '4.18', packages: [':stable'] },
      code: CommonError.FLAG_INVALID,
      hint: /name:channel/,
    },
    {
      name: 'a package name in capitals',
      opts: { version: '4.18', packages: ['LVMS'] },
      code: CommonError.FLAG_INVALID,
      hint: /name:channel/,
    },
    {
      name: 'a release that is not a reference',
      opts: { release: 'not a ref' },
      code: CommonError.FLAG_INVALID,
      hint: /ocp-release:4\.18\.3/,
    },
    {
      name: 'a release without a tag',
      opts: { release: 'quay.io/openshift-release-dev/ocp-release' },
      code: CommonError.FLAG_INVALID,
      hint: /ocp-release:4\.18\.3/,
    },
    {
      name: 'a catalog without a tag',
      opts: { catalog: RH_INDEX, packages: ['a'] },
      code: CommonError.FLAG_INVALID,
      hint: /:v4\.18/,
    },
    {
      name: 'a catalog with capitals',
      opts: { catalog: 'quay.io/Org/index:v1' },
      code: CommonError.FLAG_INVALID,
      hint: /redhat-operator-index:v4\.18/,
    },
    {
      name: 'an image that is not a reference',
      opts: { images: ['quay.io/x/y:bad tag'] },
      code: CommonError.FLAG_INVALID,
      hint: /ubi9/,
    },
    {
      name: 'an archive size of 0',
      opts: { images: ['a.io/b:1'], archiveSize: '0' },
      code: CommonError.FLAG_INVALID,
      hint: /GiB/,
    },
    {
      name: 'an archive size with a fraction',
      opts: { images: ['a.io/b:1'], archiveSize: '4.5' },
      code: CommonError.FLAG_INVALID,
      hint: /GiB/,
    },
    {
      name: 'packages and no catalog or version',
      opts: { packages: ['lvms-operator'] },
      code: CommonError.FLAG_MISSING,
      hint: /--catalog/,
    },
    {
      name: '--full without a channel',
      opts: { full: true, images: ['a.io/b:1'] },
      code: CommonError.FLAG_MISSING,
      hint: /--channel/,
    },
    {
      name: '--arch without a release',
      opts: { arches: ['amd64'], images: ['a.io/b:1'] },
      code: CommonError.FLAG_MISSING,
      hint: /--version/,
    },
    {
      name: '--with-odf without a minor',
      opts: { withOdf: true, catalog: 'quay.io/org/index:latest' },
      code: CommonError.FLAG_MISSING,
      hint: /--version 4\.18/,
    },
    { name: 'nothing at all', opts: {}, code: CommonError.FLAG_MISSING, hint: /--preset hosted-agent/ },
  ];

  it.each(BAD)('$name', ({ opts, code, hint }) => {
    const e = thrown(() => buildImageSetConfig(opts));
    expect(e.code).toBe(code);
    expect(e.exitCode).toBe(2);
    expect(e.where).toMatch(/^--/);
    expect(e.hint).toMatch(hint);
  });
});

describe('writeImageSetConfigFile', () => {
  it('writes a new file, refuses to replace it without force, replaces it with force', async () => {
    const file = join(dir, 'sub', 'dir', 'isc.yaml');
    await writeImageSetConfigFile(file, 'one\n');
    const e = await rejection(writeImageSetConfigFile(file, 'two\n'));
    expect(e).toMatchObject({ code: CommonError.OUTPUT_EXISTS, exitCode: 2, where: file });
    expect(e.hint).toMatch(/--force/);
    expect(await readFile(file, 'utf8')).toBe('one\n');
    await writeImageSetConfigFile(file, 'two\n', { force: true });
    expect(await readFile(file, 'utf8')).toBe('two\n');
  });

  it('never replaces a directory', async () => {
    const sub = join(dir, 'a-directory');
    await mkdir(sub);
    const e = await rejection(writeImageSetConfigFile(sub, 'x\n', { force: true }));
    expect(e).toMatchObject({ code: CommonError.FLAG_INVALID, exitCode: 2 });
    expect(e.hint).toContain(`${sub}/imageset-config.yaml`);
  });
});

describe('airgap mirror init (the CLI)', () => {
  it('writes the file, says what is in it, and the file loads', async () => {
    const file = join(dir, 'cli.yaml');
    const r = await airgap([
      'mirror',
      'init',
      '--preset',
      'hosted-agent',
      '--version',
      '4.18.3',
      '--with-odf',
      '-o',
      file,
    ]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`wrote ${file}`);
    expect(r.stdout).toContain('OpenShift: stable-4.18 at 4.18.3, amd64, with the update graph');
    expect(r.stdout).toMatch(
      /operators from registry\.redhat\.io\/redhat\/redhat-operator-index:v4\.18: multicluster-engine, /,
    );
    const text = await readFile(file, 'utf8');
    expect(text.split('\n')[0]).toBe(
      '# airgap mirror init --preset hosted-agent --version 4.18.3 --with-odf',
    );
    const parsed = await loadImageSetConfig(file, { kind: 'ImageSetConfiguration' });
    expect(parsed).toEqual(
      withDefaults(buildImageSetConfig({ preset: 'hosted-agent', version: '4.18.3', withOdf: true })),
    );
  });

  it('refuses to overwrite a file without --force (exit 2), and replaces it with --force', async () => {
    const file = join(dir, 'exists.yaml');
    await writeFile(file, 'mine\n');
    const refused = await airgap(['mirror', 'init', '--version', '4.18', '--output', file]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`error [OUTPUT_EXISTS]: ${file} already exists`);
    expect(refused.stderr).toContain('hint: pass --force');
    expect(await readFile(file, 'utf8')).toBe('mine\n');

    const forced = await airgap(['mirror', 'init', '--version', '4.18', '--output', file, '--force']);
    expect(forced.exitCode).toBe(0);
    const parsed = await loadImageSetConfig(file, { kind: 'ImageSetConfiguration' });
    expect(parsed.mirror.platform?.channels.map((c) => c.name)).toEqual(['stable-4.18']);
  });

  it('prints the YAML to stdout without --output', async () => {
    const r = await airgap([
      'mirror',
      'init',
      '--channel',
      'stable-4.17,stable-4.18',
      '--min-version',
      '4.17.10',
      '--max-version',
      '4.18.3',
      '--shortest-path',
      '--image',
      'registry.redhat.io/ubi9/ubi:latest',
    ]);
    expect(r.exitCode).toBe(0);
    const parsed = parseImageSetConfig(r.stdout, 'stdout', { kind: 'ImageSetConfiguration' });
    expect(parsed.mirror.platform?.channels).toEqual([
      channel('stable-4.17', { minVersion: '4.17.10', shortestPath: true }),
      channel('stable-4.18', { maxVersion: '4.18.3', shortestPath: true }),
    ]);
    expect(parsed.mirror.additionalImages.map((i) => i.name)).toEqual(['registry.redhat.io/ubi9/ubi:latest']);
  });

  it('prints the configuration as JSON with --json', async () => {
    const r = await airgap([
      'mirror',
      'init',
      '--preset',
      'hosted-agent',
      '--version',
      '4.18',
      '--package',
      'foo:bar',
      '--json',
    ]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(
      buildImageSetConfig({ preset: 'hosted-agent', version: '4.18', packages: ['foo:bar'] }),
    );
  });

  it('turns bad flags into exit 2 with the reason and a hint, and prints no YAML', async () => {
    const r = await airgap(['mirror', 'init', '--release', OCP_RELEASE, '--channel', 'stable-4.18']);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'error [FLAG_CONFLICT]: --release and --channel both say which release to mirror',
    );
    expect(r.stderr).toContain('hint: ');
    const arch = await airgap(['mirror', 'init', '--version', '4.18', '--arch', 'x86_64']);
    expect(arch.exitCode).toBe(2);
    expect(arch.stderr).toContain('hint: use amd64');
  });

  withRealdata.it(
    'checks each channel against the update graph: an unknown one is named with the ones the graph has',
    async () => {
      const sample = parseGraph(
        JSON.parse(
          await readFile(realdata('samples', 'update-graph', 'cincinnati-amd64-stable-4.13.json'), 'utf8'),
        ),
      );
      const graph = await startGraphServer({ graphs: { 'stable-4.13/amd64': sample } });
      try {
        const env = { UPDATE_URL_OVERRIDE: graph.url };
        const known = await airgap(['mirror', 'init', '--version', '4.13'], { env });
        expect(known.exitCode).toBe(0);
        expect(known.stderr).toBe('');
        expect(graph.requests.map((r) => r.query.channel)).toEqual(['stable-4.13']);

        // The real graph has no eus channel for an odd minor: the form is right, the channel is not.
        const odd = await airgap(['mirror', 'init', '--channel', 'eus-4.13', '--graph-url', graph.url]);
        expect(odd.exitCode).toBe(2);
        expect(odd.stdout).toBe('');
        expect(odd.stderr).toContain(
          'error [GRAPH_CHANNEL_UNKNOWN]: --channel eus-4.13: the update graph has no release on this channel for amd64',
        );
        expect(odd.stderr).toContain('candidate-4.13, fast-4.13, stable-4.13');

        const offline = await airgap(['mirror', 'init', '--channel', 'eus-4.13', '--offline'], { env });
        expect(offline.exitCode).toBe(0);
      } finally {
        await graph.stop();
      }
      // No update service answers (a bastion): a note, and the file is written from the names' form.
      const unreachable = await airgap(['mirror', 'init', '--version', '4.13']);
      expect(unreachable.exitCode).toBe(0);
      expect(unreachable.stdout).toContain('name: stable-4.13');
      expect(unreachable.stderr).toContain('note: could not ask the update graph');
      expect(unreachable.stderr).toContain('checked by their form only');
    },
  );

  it('explains itself in --help: what the preset holds, and examples', async () => {
    const r = await airgap(['mirror', 'init', '--help']);
    expect(r.exitCode).toBe(0);
    for (const name of [
      ...HOSTED,
      '--with-odf',
      'stable-<x.y>',
      'EXAMPLES',
      '--preset hosted-agent --version 4.18',
    ])
      expect(r.stdout).toContain(name);
  });
});
