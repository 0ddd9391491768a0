import { parseDigest, type Digest } from '../../../src/mirror/digest.js';
import { readFileSync } from 'node:fs';

import { load } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import {
  buildCatalogSource,
  buildClusterCatalog,
  catalogResourceName,
  catalogSuffix,
} from '../../../src/mirror/outputs/index.js';
import type { ImageReference } from '../../../src/mirror/reference.js';
import { isAirgapError } from '../../../src/util/errors.js';
import { validateAgainstCrd } from '../../helpers/crd.js';
import { realdata, withRealCrds, withRealdataAndCrds } from '../../helpers/realdata.js';
import { MirrorError } from '../../../src/mirror/errors.js';

const TEMPLATE = () => realdata('samples', 'oc-mirror', 'cluster-resources', 'catalog-source_template.yaml');
const CS_CRD = 'operators.coreos.com_catalogsources.yaml';
const CC_CRD = 'olm.operatorframework.io_clustercatalogs.yaml';
const DIGEST = parseDigest(`sha256:0123456789abcdef${'f'.repeat(48)}`, 'test');
const NOW = new Date(Date.UTC(2026, 0, 5, 10, 0, 0));

const dest = (repository: string, tag?: string, digest?: Digest): ImageReference => ({
  registry: 'registry.example.com',
  repository,
  ...(tag ? { tag } : {}),
  ...(digest ? { digest } : {}),
});

describe('catalog names (oc-mirror v2 suffix rules)', () => {
  it('uses the tag with dots turned into -', () => {
    const ref = dest('redhat/redhat-operator-index', 'v4.18');
    expect(catalogResourceName('cs', ref)).toBe('cs-redhat-operator-index-v4-18');
    expect(catalogResourceName('cc', ref)).toBe('cc-redhat-operator-index-v4-18');
  });

  it('keeps the first 12 characters of a long tag, mapped to RFC 1035 and lowercased', () => {
    expect(catalogSuffix(dest('a/idx', 'V4.18_Release-Candidate'))).toBe('v4-18-releas');
    expect(catalogResourceName('cs', dest('a/idx', 'V4.18_Release-Candidate'))).toBe('cs-idx-v4-18-releas');
  });

  it('uses the first 12 hex characters of the digest for a digest-only reference', () => {
    expect(catalogResourceName('cs', dest('redhat/certified-operator-index', undefined, DIGEST))).toBe(
      'cs-certified-operator-index-0123456789ab',
    );
  });

  it('prefers the tag when both tag and digest are given', () => {
    expect(catalogSuffix(dest('a/idx', 'v1', DIGEST))).toBe('v1');
  });

  it('falls back to 0 when there is neither', () => {
    expect(catalogSuffix(dest('a/idx'))).toBe('0');
  });

  it('refuses a name that is not a valid Kubernetes name', () => {
    let err: unknown;
    try {
      catalogResourceName('cs', dest(`a/${'x'.repeat(70)}`, 'v1'));
    } catch (e) {
      err = e;
    }
    expect(isAirgapError(err) && err.code).toBe(MirrorError.CLUSTER_RESOURCE_NAME);
    expect(() => catalogResourceName('cs', dest('a/my_index', 'v1'))).toThrow(/not a valid Kubernetes name/);
  });
});

describe('CatalogSource', () => {
  withRealCrds.it('has oc-mirror v2 shape and validates against the real CRD', () => {
    const cs = buildCatalogSource(dest('redhat/redhat-operator-index', 'v4.18'), {
      now: NOW,
      version: '0.1.0',
    });
    expect(cs).toEqual({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: {
        annotations: {
          createdAt: '2026-01-05T10:00:00Z',
          createdBy: 'airgap',
          'oc-mirror_version': 'airgap 0.1.0',
        },
        name: 'cs-redhat-operator-index-v4-18',
        namespace: 'openshift-marketplace',
      },
      spec: { image: 'registry.example.com/redhat/redhat-operator-index:v4.18', sourceType: 'grpc' },
    });
    expect(validateAgainstCrd(CS_CRD, cs)).toEqual([]);
  });

  withRealdataAndCrds.it(
    'starts from the real template sample: keeps updateStrategy, overwrites name, namespace and image',
    () => {
      const object = load(readFileSync(TEMPLATE(), 'utf8'));
      const cs = buildCatalogSource(
        dest('redhat/redhat-operator-index', undefined, DIGEST),
        { now: NOW },
        { object },
      );
      expect(cs.metadata.name).toBe('cs-redhat-operator-index-0123456789ab');
      expect(cs.metadata.namespace).toBe('openshift-marketplace');
      expect(cs.metadata.annotations.createdBy).toBe('airgap');
      expect(cs.spec).toEqual({
        image: `registry.example.com/redhat/redhat-operator-index@${DIGEST}`,
        sourceType: 'grpc',
        updateStrategy: { registryPoll: { interval: '30m0s' } },
      });
      expect(validateAgainstCrd(CS_CRD, cs)).toEqual([]);
      expect((object as { metadata: { name: string } }).metadata.name).toBe('totalRubbish'); // not mutated
    },
  );

  it('accepts only grpc templates without a configMap', () => {
    const base = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'x' },
    };
    const ref = dest('a/idx', 'v1');
    expect(() =>
      buildCatalogSource(
        ref,
        {},
        { object: { ...base, spec: { sourceType: 'configmap' } }, where: 't.yaml' },
      ),
    ).toThrow(/only grpc/);
    expect(() => buildCatalogSource(ref, {}, { object: { ...base, spec: { configMap: 'cm' } } })).toThrow(
      /configMap/,
    );
    expect(() => buildCatalogSource(ref, {}, { object: { ...base, kind: 'Subscription' } })).toThrow(
      /not CatalogSource/,
    );
    expect(() => buildCatalogSource(ref, {}, { object: { ...base, apiVersion: 'v1' } })).toThrow(
      /apiVersion/,
    );
    expect(
      buildCatalogSource(ref, {}, { object: { ...base, spec: { sourceType: 'grpc', priority: 5 } } }).spec
        .priority,
    ).toBe(5);
  });
});

describe('ClusterCatalog', () => {
  withRealCrds.it('has oc-mirror v2 shape (no namespace) and validates against the real CRD', () => {
    const cc = buildClusterCatalog(dest('redhat/redhat-operator-index', 'v4.18'), { now: NOW });
    expect(cc).toMatchObject({
      apiVersion: 'olm.operatorframework.io/v1',
      kind: 'ClusterCatalog',
      metadata: { name: 'cc-redhat-operator-index-v4-18' },
      spec: {
        source: { image: { ref: 'registry.example.com/redhat/redhat-operator-index:v4.18' }, type: 'Image' },
      },
    });
    expect(cc.metadata).not.toHaveProperty('namespace');
    expect(validateAgainstCrd(CC_CRD, cc)).toEqual([]);
  });
});
