import { describe, expect, it } from 'vitest';
import { loadCrd, toJsonSchema, validateAgainstCrd } from '../../helpers/crd.js';
import { withRealCrds } from '../../helpers/realdata.js';

const IDMS = 'config.openshift.io_imagedigestmirrorsets.crd.yaml';
const CS = 'operators.coreos.com_catalogsources.yaml';

function idms(entry: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'config.openshift.io/v1',
    kind: 'ImageDigestMirrorSet',
    metadata: { name: 'x' },
    spec: { imageDigestMirrors: [entry] },
  };
}

describe('the CRD validator (test/helpers/crd.ts)', () => {
  withRealCrds.it('reads group, storage version and kind from the real CRDs', () => {
    expect(loadCrd(IDMS)).toMatchObject({
      group: 'config.openshift.io',
      version: 'v1',
      kind: 'ImageDigestMirrorSet',
    });
    expect(loadCrd(CS).apiVersion).toBe('operators.coreos.com/v1alpha1');
    expect(loadCrd('olm.operatorframework.io_clustercatalogs.yaml').apiVersion).toBe(
      'olm.operatorframework.io/v1',
    );
  });

  withRealCrds.it('accepts a valid object', () => {
    expect(
      validateAgainstCrd(IDMS, idms({ mirrors: ['mirror.local:5000/ocp/release'], source: 'quay.io/ocp' })),
    ).toEqual([]);
  });

  withRealCrds.it('rejects a wrong-typed field with its JSON path', () => {
    const errors = validateAgainstCrd(IDMS, idms({ mirrors: 'mirror.local/ocp', source: 'quay.io/ocp' }));
    expect(errors).toContainEqual({ path: '$.spec.imageDigestMirrors[0].mirrors', message: 'must be array' });
  });

  withRealCrds.it('rejects a value outside an enum', () => {
    const errors = validateAgainstCrd(
      IDMS,
      idms({ mirrors: ['m.local/a'], source: 'quay.io/a', mirrorSourcePolicy: 'Sometimes' }),
    );
    expect(errors.map((e) => e.path)).toEqual(['$.spec.imageDigestMirrors[0].mirrorSourcePolicy']);
    expect(errors[0]!.message).toMatch(/allowed values.*NeverContactSource/);
  });

  withRealCrds.it(
    'rejects a pattern violation, a missing required field, an unknown field and duplicate set items',
    () => {
      const errors = validateAgainstCrd(
        IDMS,
        idms({ mirrors: ['Bad Host/x', 'm.local/a', 'm.local/a'], sourc: 'x' }),
      );
      const paths = errors.map((e) => e.path);
      expect(paths).toContain('$.spec.imageDigestMirrors[0].mirrors[0]'); // pattern
      expect(paths).toContain('$.spec.imageDigestMirrors[0]'); // required source
      expect(paths).toContain('$.spec.imageDigestMirrors[0].sourc'); // unknown field
      expect(paths).toContain('$.spec.imageDigestMirrors[0].mirrors'); // x-kubernetes-list-type: set
    },
  );

  withRealCrds.it('checks apiVersion, kind and metadata.name against the CRD', () => {
    const obj = {
      ...idms({ source: 'quay.io/a' }),
      apiVersion: 'config.openshift.io/v1beta1',
      kind: 'Other',
    };
    delete (obj as { metadata?: unknown }).metadata;
    expect(validateAgainstCrd(IDMS, obj).map((e) => e.path)).toEqual([
      '$.apiVersion',
      '$.kind',
      '$.metadata.name',
    ]);
  });

  it('treats x-kubernetes-int-or-string as integer or string, and preserve-unknown-fields as open', () => {
    const schema = toJsonSchema({
      type: 'object',
      properties: {
        port: { 'x-kubernetes-int-or-string': true },
        free: {
          type: 'object',
          properties: { a: { type: 'string' } },
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    }) as { properties: Record<string, Record<string, unknown>>; additionalProperties: unknown };
    expect(schema.properties.port).toEqual({ anyOf: [{ type: 'integer' }, { type: 'string' }] });
    expect(schema.properties.free!.additionalProperties).toBeUndefined();
    expect(schema.additionalProperties).toBe(false);
  });

  withRealCrds.it('validates a CatalogSource spec, including nested types', () => {
    const cs = {
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name: 'cs', namespace: 'openshift-marketplace' },
      spec: {
        image: 'r.local/idx:v1',
        sourceType: 'grpc',
        updateStrategy: { registryPoll: { interval: 30 } },
      },
    };
    expect(validateAgainstCrd(CS, cs)).toContainEqual({
      path: '$.spec.updateStrategy.registryPoll.interval',
      message: 'must be string',
    });
  });
});
