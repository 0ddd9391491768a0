/**
 * containers-registries.d(5) as airgap reads it: real directories of YAML files in a temp dir, the
 * most specific namespace winning setting by setting, errors at file:line, and the snippet that
 * makes nodes read the mirror's Sigstore attachments. (Where skopeo itself finds signatures with
 * the same files is checked in policy-skopeo.test.ts.)
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { MirrorError } from '../../../src/mirror/errors.js';
import {
  loadRegistriesD,
  lookasideSignatureUrl,
  parseRegistriesDFile,
  registriesDFileName,
  registriesDSnippet,
} from '../../../src/mirror/signatures/registries-d.js';
import { tempDir } from '../../helpers/fixtures.js';
import { rejection } from '../../helpers/realdata.js';

const DIGEST = `sha256:${'ab'.repeat(32)}`;

let root: string;

/** A registries.d directory holding these files. */
async function registriesD(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(root, 'd-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

beforeAll(async () => {
  root = await tempDir('airgap-registries-d-');
});

describe('lookup', () => {
  it('takes each setting from the most specific namespace that sets it, then default-docker', async () => {
    const dir = await registriesD({
      '00-default.yaml': 'default-docker:\n  lookaside: https://sigs.example.com/default\n',
      'quay.yaml': [
        'docker:',
        '  quay.io:',
        '    lookaside: https://sigs.example.com/quay',
        '    lookaside-staging: file:///var/lib/containers/staging',
        '    use-sigstore-attachments: true',
        '  quay.io/openshift:',
        '    use-sigstore-attachments: false',
        '  quay.io/openshift/release:',
        '    sigstore: https://legacy.example.com/release',
        '  quay.io/openshift/release:4.18.1:',
        '    lookaside: https://sigs.example.com/exact',
        '  "*.example.com":',
        '    use-sigstore-attachments: true',
        '    lookaside: https://sigs.example.com/wildcard',
        '',
      ].join('\n'),
      'ignored.yml': 'default-docker:\n  lookaside: https://never.example.com\n',
    });
    const d = await loadRegistriesD(dir);
    expect(d.lookasideFor('quay.io/openshift/release:4.18.1')).toMatchObject({
      url: 'https://sigs.example.com/exact',
      scope: 'quay.io/openshift/release:4.18.1',
    });
    // The legacy `sigstore` key is the lookaside.
    expect(d.lookasideFor(`quay.io/openshift/release@${DIGEST}`)?.url).toBe(
      'https://legacy.example.com/release',
    );
    // quay.io/openshift sets no lookaside: the host's applies; but its use-sigstore-attachments: false wins.
    expect(d.lookasideFor('quay.io/openshift/other:1')).toMatchObject({
      url: 'https://sigs.example.com/quay',
      scope: 'quay.io',
      where: `${join(dir, 'quay.yaml')}:2:3`,
    });
    expect(d.useSigstoreAttachments('quay.io/openshift/other:1')).toBe(false);
    expect(d.useSigstoreAttachments('quay.io/elsewhere/app:1')).toBe(true);
    // Writing goes to staging first.
    expect(d.lookasideFor('quay.io/elsewhere/app:1', { write: true })?.url).toBe(
      'file:///var/lib/containers/staging',
    );
    expect(d.lookasideFor('registry.example.com:5000/app:1')?.url).toBe('https://sigs.example.com/wildcard');
    expect(d.useSigstoreAttachments('registry.example.com/app:1')).toBe(true);
    expect(d.lookasideFor('docker.io/library/busybox:1')).toMatchObject({
      url: 'https://sigs.example.com/default',
      scope: 'default-docker',
    });
    expect(d.useSigstoreAttachments('busybox')).toBe(false);
  });

  it('builds signature URLs as containers/image does: repository path without the host, algorithm=hex, from 1', () => {
    expect(lookasideSignatureUrl('https://sigs.example.com/store', `quay.io/ns/app:v1`, DIGEST, 1)).toBe(
      `https://sigs.example.com/store/ns/app@sha256=${'ab'.repeat(32)}/signature-1`,
    );
    expect(lookasideSignatureUrl('file:///sigs', `busybox@${DIGEST}`, DIGEST, 2)).toBe(
      `file:///sigs/library/busybox@sha256=${'ab'.repeat(32)}/signature-2`,
    );
  });

  it('treats a missing directory as empty only when asked to', async () => {
    const missing = join(root, 'no-such-dir');
    const empty = await loadRegistriesD(missing, { missingOk: true });
    expect(empty.lookasideFor('quay.io/a/b:1')).toBeUndefined();
    expect(empty.useSigstoreAttachments('quay.io/a/b:1')).toBe(false);
    const e = await rejection(loadRegistriesD(missing));
    expect(e).toMatchObject({ code: MirrorError.REGISTRIES_D_UNREADABLE, exitCode: 2 });
    expect(e.message).toContain(`${missing}: it does not exist`);
  });
});

describe('files that are wrong', () => {
  it('reports a YAML syntax error at its line and column', async () => {
    const dir = await registriesD({ 'bad.yaml': 'docker:\n  quay.io:\n    lookaside: [https://x\n' });
    const e = await rejection(loadRegistriesD(dir));
    expect(e).toMatchObject({ code: MirrorError.REGISTRIES_D_INVALID, exitCode: 2 });
    expect(e.message).toMatch(/bad.yaml is not valid YAML/);
    expect(e.where).toMatch(new RegExp(`${join(dir, 'bad.yaml')}:4:1$`));
  });

  it('refuses a namespace or default-docker defined in two files, naming both places', async () => {
    const dir = await registriesD({
      'a.yaml': 'docker:\n  quay.io:\n    use-sigstore-attachments: true\n',
      'b.yaml': '# second\ndocker:\n  quay.io:\n    lookaside: https://x.example.com\n',
    });
    const e = await rejection(loadRegistriesD(dir));
    expect(e.code).toBe(MirrorError.REGISTRIES_D_INVALID);
    expect(e.message).toBe(
      `docker scope "quay.io" is defined twice: at ${join(dir, 'a.yaml')}:2:3 and at ${join(dir, 'b.yaml')}:3:3`,
    );
    const twice = await registriesD({
      'a.yaml': 'default-docker:\n  lookaside: https://a.example.com\n',
      'b.yaml': 'default-docker:\n  lookaside: https://b.example.com\n',
    });
    expect((await rejection(loadRegistriesD(twice))).message).toMatch(/^"default-docker" is defined twice/);
  });

  it('refuses bad values with their line, and warns about fields containers/image ignores', () => {
    const e = (() => {
      try {
        parseRegistriesDFile(
          'docker:\n  quay.io:\n    lookaside: ftp://sigs.example.com\n    use-sigstore-attachments: "yes"\n',
          'r.yaml',
        );
      } catch (err) {
        return err as { message: string; exitCode: number };
      }
      throw new Error('expected an error');
    })();
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(
      'r.yaml:3:16: docker["quay.io"] lookaside "ftp://sigs.example.com" is not a file://',
    );
    expect(e.message).toContain(
      'r.yaml:4:31: docker["quay.io"] use-sigstore-attachments must be true or false',
    );
    const parsed = parseRegistriesDFile('docker:\n  quay.io:\n    use-sigstore-attachment: true\n', 'w.yaml');
    expect(parsed.warnings).toEqual([
      'w.yaml:3:5: w.yaml sets "use-sigstore-attachment", which containers/image ignores (did you mean use-sigstore-attachments?)',
    ]);
    // An empty file, or a namespace with nothing set, is allowed.
    expect(parseRegistriesDFile('', 'empty.yaml').docker.size).toBe(0);
    expect(parseRegistriesDFile('docker:\n  quay.io:\n', 'n.yaml').docker.get('quay.io')).toBeDefined();
  });
});

describe('the snippet for the mirror', () => {
  it('is the file oc-mirror writes: <host>.yaml turning on use-sigstore-attachments, read back the same', async () => {
    const host = 'mirror.example.com:8443';
    const text = registriesDSnippet(host);
    expect(yaml.load(text)).toEqual({ docker: { [host]: { 'use-sigstore-attachments': true } } });
    expect(registriesDFileName(host)).toBe('mirror.example.com:8443.yaml');
    const dir = await mkdtemp(join(root, 'snippet-'));
    await writeFile(join(dir, registriesDFileName(host)), text);
    const d = await loadRegistriesD(dir);
    expect(d.useSigstoreAttachments(`${host}/ocp/release@${DIGEST}`)).toBe(true);
    expect(d.useSigstoreAttachments('quay.io/ocp/release:1')).toBe(false);
    expect(() => registriesDSnippet('https://mirror.example.com')).toThrow(/is not a registry host/);
  });
});
