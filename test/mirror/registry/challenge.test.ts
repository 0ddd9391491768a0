import { describe, expect, it } from 'vitest';
import { parseChallenge } from '../../../src/mirror/registry/challenge.js';

describe('parseChallenge: Bearer', () => {
  it('reads realm, service and scope as Docker Hub sends them', () => {
    expect(
      parseChallenge(
        'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/busybox:pull"',
      ),
    ).toEqual({
      scheme: 'bearer',
      params: {
        realm: 'https://auth.docker.io/token',
        service: 'registry.docker.io',
        scope: 'repository:library/busybox:pull',
      },
    });
  });

  it('keeps commas and spaces inside quoted values', () => {
    const c = parseChallenge(
      'Bearer realm="https://quay.io/v2/auth",service="quay.io",scope="repository:org/app:pull,push repository:org/base:pull"',
    );
    expect(c?.params.scope).toBe('repository:org/app:pull,push repository:org/base:pull');
    expect(c?.params.service).toBe('quay.io');
    expect(Object.keys(c?.params ?? {}).sort()).toEqual(['realm', 'scope', 'service']);
  });

  it('allows spaces around = and after commas, and any order of parameters', () => {
    expect(parseChallenge('Bearer   scope = "a:b:pull" ,  realm= "https://r/token" , service ="s"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://r/token', service: 's', scope: 'a:b:pull' },
    });
  });

  it('reads unquoted (token) values up to the next comma', () => {
    expect(parseChallenge('Bearer realm=https://r.example.com/token,service=r.example.com')?.params).toEqual({
      realm: 'https://r.example.com/token',
      service: 'r.example.com',
    });
  });

  it('unescapes backslash-escaped characters in quoted values', () => {
    expect(
      parseChallenge('Bearer realm="https://r/token",error_description="say \\"hi\\" \\\\ bye"')?.params,
    ).toEqual({
      realm: 'https://r/token',
      error_description: 'say "hi" \\ bye',
    });
  });

  it('keeps the error parameter of an insufficient_scope challenge', () => {
    expect(
      parseChallenge(
        'Bearer realm="https://r/token",service="r",scope="repository:a:push",error="insufficient_scope"',
      )?.params.error,
    ).toBe('insufficient_scope');
  });

  it('is case-insensitive in the scheme and parameter names, not in values', () => {
    expect(parseChallenge('BEARER Realm="https://R/Token",SERVICE="Reg"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://R/Token', service: 'Reg' },
    });
  });

  it('accepts an empty quoted value and a Bearer with no parameters', () => {
    expect(parseChallenge('Bearer realm="https://r/token",scope=""')?.params).toEqual({
      realm: 'https://r/token',
      scope: '',
    });
    expect(parseChallenge('Bearer')).toEqual({ scheme: 'bearer', params: {} });
    expect(parseChallenge('  bearer  ')).toEqual({ scheme: 'bearer', params: {} });
  });
});

describe('parseChallenge: Basic', () => {
  it('reads a Basic challenge with its realm', () => {
    expect(parseChallenge('Basic realm="Registry Realm"')).toEqual({
      scheme: 'basic',
      params: { realm: 'Registry Realm' },
    });
  });

  it('reads a Basic challenge with a charset and no realm', () => {
    expect(parseChallenge('basic charset="UTF-8"')).toEqual({
      scheme: 'basic',
      params: { charset: 'UTF-8' },
    });
    expect(parseChallenge('Basic')).toEqual({ scheme: 'basic', params: {} });
  });
});

describe('parseChallenge: what it does not understand', () => {
  it.each([
    ['a missing header', undefined],
    ['an empty header', ''],
    ['Digest', 'Digest realm="r", nonce="abc", qop="auth"'],
    ['Negotiate', 'Negotiate'],
    ['NTLM', 'NTLM TlRMTVNTUAABAAAA'],
    ['a scheme that only starts with Bearer', 'Bearerx realm="r"'],
    ['a scheme that only starts with Basic', 'BasicAuth realm="r"'],
    ['punctuation', '!!!'],
    ['whitespace', '   '],
    ['a parameter without a scheme', 'realm="https://r/token"'],
    ['a quoted scheme', '"Bearer" realm="r"'],
  ])('%s → undefined', (_what, header) => {
    expect(parseChallenge(header)).toBeUndefined();
  });

  it('ignores garbage between parameters of a known scheme', () => {
    expect(parseChallenge('Bearer ;;; realm="https://r/token" ??? service="s"')).toEqual({
      scheme: 'bearer',
      params: { realm: 'https://r/token', service: 's' },
    });
  });
});
