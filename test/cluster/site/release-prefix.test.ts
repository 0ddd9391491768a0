/**
 * A release image under one mirror prefix while the mirror sets point to another (two mirror
 * runs mixed up) is flagged before anything is rendered or applied.
 */
import { describe, expect, it } from 'vitest';
import { releaseOutsideMirrors } from '../../../src/cluster/site/inputs.js';

const SETS = [
  {
    source: 'quay.io/openshift-release-dev/ocp-release',
    mirrors: ['reg.example.com:8443/mirror/openshift/release-images'],
  },
  {
    source: 'quay.io/openshift-release-dev/ocp-v4.0-art-dev',
    mirrors: ['reg.example.com:8443/mirror/openshift/release'],
  },
];

describe('releaseOutsideMirrors', () => {
  it('flags a release under another prefix, naming both places', () => {
    expect(
      releaseOutsideMirrors('reg.example.com:8443/ocp4/openshift/release-images:4.17.3-x86_64', SETS),
    ).toBe(
      'cluster.release.image is in reg.example.com:8443/ocp4/openshift/release-images, but the mirror sets put the release in reg.example.com:8443/mirror/openshift/release-images: the cluster would pull its components from there; point release.image at the same mirror run as mirror.clusterResources',
    );
  });

  it('is quiet where the mirror sets put the release, for a source name, and without release sets', () => {
    expect(
      releaseOutsideMirrors('reg.example.com:8443/mirror/openshift/release-images:4.17.3-x86_64', SETS),
    ).toBeUndefined();
    expect(
      releaseOutsideMirrors(
        `docker://reg.example.com:8443/mirror/openshift/release-images@sha256:${'a'.repeat(64)}`,
        SETS,
      ),
    ).toBeUndefined();
    expect(
      releaseOutsideMirrors('quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64', SETS),
    ).toBeUndefined();
    expect(
      releaseOutsideMirrors('reg.example.com:8443/ocp4/openshift/release-images:4.17.3-x86_64', [SETS[1]!]),
    ).toBeUndefined();
  });
});
