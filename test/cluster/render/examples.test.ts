/**
 * The example sites render as shipped, with the placeholder files beside them, through the real
 * CLI and without the mirror (registry.lab.example.com does not resolve): the render goes on from
 * the site file, says what it could not pin, and every object validates against the real CRD.
 */
import { cp, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { describe, expect, it } from 'vitest';
import { airgap, REPO_ROOT } from '../../helpers/cli.js';
import { validateAgainstCrd } from '../../helpers/crd.js';
import { tempDir } from '../../helpers/fixtures.js';
import { withRealCrds } from '../../helpers/realdata.js';

const CRDS: Record<string, string> = {
  HostedCluster: 'hypershift.openshift.io_hostedclusters.Default.crd.yaml',
  NodePool: 'hypershift.openshift.io_nodepools.Default.crd.yaml',
  InfraEnv: 'agent-install.openshift.io_infraenvs.yaml',
  NMStateConfig: 'agent-install.openshift.io_nmstateconfigs.yaml',
  BareMetalHost: 'metal3.io_baremetalhosts.yaml',
};

describe.each(['site.yaml', 'site-dual.yaml'])('examples/%s', (site) => {
  let out: string;

  it('renders as shipped, offline, saying what it could not pin', async () => {
    const dir = await tempDir('airgap-examples-');
    await cp(join(REPO_ROOT, 'examples'), join(dir, 'examples'), { recursive: true });
    out = join(dir, 'rendered');
    const r = await airgap(['install', 'cluster', '-f', join(dir, 'examples', site), '--render', out]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain('rendered from the site file alone: the mirror was not read');
    expect(r.stderr).toContain(
      'the control plane operator image is not set: HyperShift takes it from the release',
    );
    const files = await readdir(out);
    expect(files.some((f) => f.includes('hostedcluster'))).toBe(true);
    for (const f of files) {
      const object = yaml.load(await readFile(join(out, f), 'utf8')) as {
        kind: string;
        metadata: { annotations?: Record<string, string> };
      };
      if (object.kind === 'HostedCluster')
        expect(Object.keys(object.metadata.annotations ?? {})).not.toContain(
          'hypershift.openshift.io/control-plane-operator-image',
        );
    }
  }, 60_000);

  withRealCrds.it('renders objects that validate against the real CRDs', async () => {
    let checked = 0;
    for (const f of await readdir(out)) {
      const object = yaml.load(await readFile(join(out, f), 'utf8')) as { kind: string };
      const crd = CRDS[object.kind];
      if (crd) expect(validateAgainstCrd(crd, object), f).toEqual([]);
      if (crd) checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
