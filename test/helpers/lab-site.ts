/**
 * The set-up the install tests share: one lab site (mirror, release, site file) per describe, a hub
 * simulator per test (stopped after it), copies of the site file with an edit, and the CLI's
 * `install hub` / `install cluster` against a hub.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { dump, load } from 'js-yaml';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import type { SiteDocument } from '../../src/cluster/site/schema.js';
import { startHub, type Hub, type StartHubOptions } from '../../lab/hub/index.js';
import { LAB_RELEASE_REPO, buildLabSite, type LabSite, type LabSiteOptions } from '../../lab/site.js';
import { airgap, type CliResult } from './cli.js';
import { tempDir } from './fixtures.js';

export interface LabFixture {
  readonly lab: LabSite;
  readonly dir: string;
  /** The hub the current test started last (every hub a test starts is stopped after it). */
  readonly hub: Hub;
  /** A fresh name below `dir` (hubs, kubeconfigs, renders). */
  fresh(prefix: string): string;
  /** Start a hub for this test (it knows the version of each release in the lab mirror). */
  startHub(controllers?: StartHubOptions['controllers']): Promise<Hub>;
  /** Start a hub and run `airgap install hub` on it (which must succeed). */
  readyHub(controllers?: StartHubOptions['controllers']): Promise<Hub>;
  /** `airgap install cluster` against `hub`, with a fresh --kubeconfig-out. */
  install(hub: Hub, extra?: string[], site?: string): Promise<CliResult>;
  /** A copy of the site file with `edit` applied. */
  siteWith(edit: (s: SiteDocument) => void): Promise<string>;
}

/** Register the hooks of a lab site (IPv4, no catalog) for the enclosing describe. */
export function useLabSite(
  options: Pick<LabSiteOptions, 'version' | 'signatureConfigMap' | 'upgradeTo' | 'hosts' | 'graph'> = {},
): LabFixture {
  let lab: LabSite | undefined;
  let dir = '';
  let hubs: Hub[] = [];
  let n = 0;
  beforeAll(async () => {
    dir = await tempDir();
    lab = await buildLabSite({ dir: join(dir, 'site'), stack: 'ipv4', noCatalog: true, ...options });
  }, 120_000);
  afterAll(async () => {
    await lab?.stop();
  });
  afterEach(async () => {
    await Promise.all(hubs.map((h) => h.stop()));
    hubs = [];
  });
  const f: LabFixture = {
    get lab() {
      return lab!;
    },
    get dir() {
      return dir;
    },
    get hub() {
      return hubs[hubs.length - 1]!;
    },
    fresh: (prefix) => join(dir, `${prefix}-${n++}`),
    async startHub(controllers = {}) {
      // The simulator reads each mirrored release's version from its image, as HyperShift reads the payload.
      const releaseVersions = Object.fromEntries(
        lab!.up.releases.map((r) => [`${lab!.mirrorName}/${LAB_RELEASE_REPO}@${r.digest}`, r.version]),
      );
      const hub = await startHub({ dir: f.fresh('hub'), controllers: { releaseVersions, ...controllers } });
      hubs.push(hub);
      return hub;
    },
    async readyHub(controllers = {}) {
      const h = await f.startHub(controllers);
      const r = await airgap(['install', 'hub', '-f', lab!.siteFile, '--kubeconfig', h.kubeconfigFile]);
      expect(r.exitCode, r.stderr).toBe(0);
      return h;
    },
    install: (h, extra = [], site = lab!.siteFile) =>
      airgap([
        'install',
        'cluster',
        '-f',
        site,
        '--kubeconfig',
        h.kubeconfigFile,
        '--kubeconfig-out',
        f.fresh('kc'),
        ...extra,
      ]),
    async siteWith(edit) {
      const s = load(await readFile(lab!.siteFile, 'utf8')) as SiteDocument;
      edit(s);
      const file = join(lab!.dir, `site-${n++}.yaml`);
      await writeFile(file, dump(s, { lineWidth: -1 }));
      return file;
    },
  };
  return f;
}
