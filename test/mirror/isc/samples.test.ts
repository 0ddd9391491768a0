import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { expect, it } from 'vitest';
import {
  loadImageSetConfig,
  positionOf,
  type DeleteImageSetConfig,
  type ImageSetConfig,
} from '../../../src/mirror/isc/index.js';
import { realdata, withRealdata } from '../../helpers/realdata.js';
import { IscErrorCode } from '../../../src/mirror/isc/errors.js';

const samples = realdata('samples', 'oc-mirror', 'imagesetconfig');
const sample = (name: string) => join(samples, name);

withRealdata.describe('real oc-mirror samples', () => {
  it('has the samples these tests expect, and every one parses', async () => {
    const files = readdirSync(samples).filter((f) => f.endsWith('.yaml'));
    expect(files).toEqual(
      expect.arrayContaining([
        'disc-e2e-72972.yaml',
        'isc-docs-example.yaml',
        'isc-e2e-72917-operator-version-filters.yaml',
        'isc-e2e-72972-platform-operators-additional.yaml',
        'isc-e2e-73791-blocked-images.yaml',
      ]),
    );
    for (const f of files) {
      const cfg = await loadImageSetConfig(sample(f));
      expect(cfg.kind, f).toMatch(/^(Delete)?ImageSetConfiguration$/);
    }
  });

  it('reads the docs example: release channel, graph, operators, additional images, helm', async () => {
    const cfg = await loadImageSetConfig(sample('isc-docs-example.yaml'), { kind: 'ImageSetConfiguration' });
    expect(cfg.apiVersion).toBe('mirror.openshift.io/v2alpha1');
    expect(cfg.archiveSize).toBeUndefined();
    const platform = cfg.mirror.platform!;
    expect(platform.channels).toEqual([
      {
        name: 'stable-4.18',
        type: 'ocp',
        minVersion: '4.18.1',
        maxVersion: '4.18.1',
        shortestPath: false,
        full: false,
      },
    ]);
    expect(platform.graph).toBe(true);
    expect(platform.architectures).toEqual([]);
    expect(cfg.mirror.operators).toHaveLength(1);
    expect(cfg.mirror.operators[0].catalog).toBe('registry.redhat.io/redhat/redhat-operator-index:v4.18');
    expect(cfg.mirror.operators[0].packages.map((p) => p.name)).toEqual([
      'aws-load-balancer-operator',
      '3scale-operator',
      'node-observability-operator',
    ]);
    expect(cfg.mirror.additionalImages.map((i) => i.name)).toEqual([
      'quay.io/rh_ee_aguidi/multi-platform-container:latest',
      'quay.io/rh_ee_aguidi/empty-image:latest',
    ]);
    expect(cfg.mirror.helm?.repositories).toEqual([
      {
        name: 'cosigned',
        url: 'https://sigstore.github.io/helm-charts',
        charts: [{ name: 'cosigned', version: '0.1.23', imagePaths: [], platforms: [] }],
      },
    ]);
    expect(cfg.mirror.helm?.local.map((c) => [c.name, c.path])).toEqual([
      ['helm-empty-image', '/home/aguidi/go/src/github.com/aguidirh/oc-mirror/alex-tests/helm-empty-image'],
    ]);
    expect(cfg.mirror.blockedImages).toEqual([]);
    // Positions point into the sample (packages are indented by 7 spaces there).
    expect(positionOf(cfg, 'mirror.operators[0].packages[1].name')).toMatchObject({ line: 14, column: 10 });
    expect(positionOf(cfg, 'mirror.helm.local[0].path', 'value')).toMatchObject({ line: 28, column: 14 });
  });

  it('reads the operator version filters: package- and channel-level ranges, prerelease versions', async () => {
    const cfg = (await loadImageSetConfig(
      sample('isc-e2e-72917-operator-version-filters.yaml'),
    )) as ImageSetConfig;
    const pkgs = cfg.mirror.operators[0].packages;
    const byName = new Map(pkgs.map((p) => [p.name, p]));
    expect(pkgs.map((p) => p.name)).toEqual([
      'devworkspace-operator',
      'nfd',
      'cluster-logging',
      'quay-bridge-operator',
      'quay-operator',
      'odf-operator',
    ]);
    expect(byName.get('devworkspace-operator')).toMatchObject({ minVersion: '0.31.2', channels: [] });
    expect(byName.get('devworkspace-operator')?.maxVersion).toBeUndefined();
    expect(byName.get('nfd')?.maxVersion).toBe('4.19.0-202509300824');
    expect(byName.get('cluster-logging')).toMatchObject({
      defaultChannel: 'stable-6.3',
      channels: [{ name: 'stable-6.3', minVersion: '6.3.0', maxVersion: '6.3.1' }],
    });
    expect(byName.get('quay-operator')?.channels).toEqual([{ name: 'stable-3.12', maxVersion: '3.12.1' }]);
    expect(byName.get('odf-operator')?.channels).toEqual([
      { name: 'stable-4.19', minVersion: '4.19.5-rhodf', maxVersion: '4.19.5-rhodf' },
    ]);
    expect(cfg.mirror.platform).toBeUndefined();
  });

  it('reads platform + operators + additional images, including an oci:// catalog and s390x', async () => {
    const cfg = (await loadImageSetConfig(
      sample('isc-e2e-72972-platform-operators-additional.yaml'),
    )) as ImageSetConfig;
    expect(cfg.mirror.platform?.architectures).toEqual(['s390x']);
    expect(cfg.mirror.platform?.graph).toBe(true);
    expect(cfg.mirror.platform?.channels[0]).toMatchObject({
      name: 'stable-4.15',
      type: 'ocp',
      minVersion: '4.15.19',
      maxVersion: '4.15.19',
    });
    expect(cfg.mirror.operators.map((o) => o.catalog)).toEqual([
      'oci:///tmp/case72972/redhat-operator-index',
      'registry.redhat.io/redhat/redhat-operator-index:v4.15',
    ]);
    expect(cfg.mirror.additionalImages[1].name).toBe(
      'quay.io/openshifttest/hello-openshift@sha256:61b8f5e1a3b5dbd9e2c35fd448dc5106337d7a299873dd3a6f0cd8d4891ecc27',
    );
  });

  it('reads blocked images (apiVersion before kind)', async () => {
    const cfg = (await loadImageSetConfig(sample('isc-e2e-73791-blocked-images.yaml'))) as ImageSetConfig;
    expect(cfg.kind).toBe('ImageSetConfiguration');
    expect(cfg.mirror.additionalImages.map((i) => i.name)).toEqual([
      'registry.redhat.io/ubi8/ubi:latest',
      'registry.redhat.io/ubi8/ubi:fake',
    ]);
    expect(cfg.mirror.blockedImages).toEqual([{ name: 'registry.redhat.io/ubi8/ubi:fake' }]);
    expect(positionOf(cfg, 'mirror.blockedImages[0].name')).toMatchObject({ line: 8, column: 7 });
  });

  it('reads the DeleteImageSetConfiguration under delete:', async () => {
    const cfg = (await loadImageSetConfig(sample('disc-e2e-72972.yaml'), {
      kind: 'DeleteImageSetConfiguration',
    })) as DeleteImageSetConfig;
    expect(cfg.kind).toBe('DeleteImageSetConfiguration');
    expect('mirror' in cfg).toBe(false);
    expect(cfg.delete.additionalImages.map((i) => i.name)).toEqual([
      'registry.redhat.io/ubi8/ubi:latest',
      'quay.io/openshifttest/hello-openshift@sha256:61b8f5e1a3b5dbd9e2c35fd448dc5106337d7a299873dd3a6f0cd8d4891ecc27',
    ]);
    expect(cfg.delete.operators.map((o) => o.packages.map((p) => p.name))).toEqual([
      ['aws-load-balancer-operator'],
      ['devworkspace-operator'],
    ]);
    expect(cfg.delete.platform?.channels.map((c) => [c.name, c.minVersion, c.maxVersion])).toEqual([
      ['stable-4.15', '4.15.19', '4.15.19'],
    ]);
    expect(cfg.delete.platform?.architectures).toEqual(['s390x']);
  });

  it('refuses a DeleteImageSetConfiguration where an ImageSetConfiguration is needed', async () => {
    await expect(
      loadImageSetConfig(sample('disc-e2e-72972.yaml'), { kind: 'ImageSetConfiguration' }),
    ).rejects.toMatchObject({ code: IscErrorCode.Kind, exitCode: 2 });
  });
});
