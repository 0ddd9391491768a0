import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSite } from '../../../src/cluster/site/load.js';
import { applySiteOverrides } from '../../../src/cluster/site/overrides.js';
import { tempDir } from '../../helpers/fixtures.js';
import { writeSiteFixture } from './fixture.js';

let dir: string;

beforeAll(async () => {
  dir = await tempDir('airgap-site-');
  await writeSiteFixture(dir);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('applySiteOverrides', () => {
  it('replaces name, namespace, release; checks them like the file', async () => {
    const site = await loadSite(join(dir, 'site.yaml'));
    const o = applySiteOverrides(site, {
      name: 'other',
      namespace: 'hcp',
      release: 'registry.lab.example.com:8443/openshift/release-images:4.17.4-x86_64',
    });
    expect(o.cluster).toMatchObject({ name: 'other', namespace: 'hcp', infraID: 'other' });
    expect(o.cluster.release.image).toMatch(/4\.17\.4/);
    expect(site.cluster.name).toBe('hosted');
    expect(() => applySiteOverrides(site, { name: 'clusters' })).toThrow(/--name: "clusters" cannot be/);
    expect(() => applySiteOverrides(site, { release: 'quay.io/x/y' })).toThrow(
      /--release: .*neither a tag nor a digest/,
    );
  });
});
