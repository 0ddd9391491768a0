/**
 * Configuration errors through the real CLI name the file, line and column they are at: the key of
 * an unknown field, the value of a bad one, in block and flow style, past a quoted key and a block
 * scalar; and a YAML syntax error at the place js-yaml stopped. Nothing here needs a registry: the
 * configuration is refused before anything is fetched.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { airgap } from '../helpers/cli.js';

describe('configuration errors through the CLI', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'airgap-positions-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('place each field problem at its file:line:column', async () => {
    const isc = join(dir, 'isc.yaml');
    await writeFile(
      isc,
      [
        'kind: ImageSetConfiguration',
        'apiVersion: mirror.openshift.io/v2alpha1',
        'mirror:',
        '  additionalImages:',
        '    - name: quay.io/a/b:v1',
        '    - {name: quay.io/a/c:v1, tagret: v2}', // line 6: unknown key, flow style
        '  operators:',
        '    - catalog: registry.redhat.io/redhat/redhat-operator-index:v4.18',
        '      "packages":', // a quoted key
        '        - name: foo',
        '          channels:',
        '            - name: stable',
        '              minVersoin: 1.0.0', // line 13: unknown key, block style
        '  platform:',
        '    architectures: [amd64, arm65]', // line 15: bad value in a flow list
        '    channels:',
        '      - name: >-',
        '          stable-4.18',
        '        typ: ocp', // line 19: after a block scalar
        '',
      ].join('\n'),
    );
    const r = await airgap(['mirror', '-c', isc, `file://${dir}/out`]);
    expect(r.exitCode, r.stderr).toBe(2);
    for (const [at, what] of [
      ['6:30', 'unknown field mirror.additionalImages[1].tagret'],
      ['13:15', 'unknown field mirror.operators[0].packages[0].channels[0].minVersoin'],
      ['15:28', 'mirror.platform.architectures[1] is "arm65"'],
      ['19:9', 'unknown field mirror.platform.channels[0].typ'],
    ])
      expect(r.stderr).toContain(`${isc}:${at}: ${what}`);
  });

  it('place a YAML syntax error where js-yaml stopped', async () => {
    const bad = join(dir, 'bad.yaml');
    await writeFile(
      bad,
      [
        'kind: ImageSetConfiguration',
        'mirror:',
        '  additionalImages:',
        '    - name: a',
        '   - name: b',
        '',
      ].join('\n'),
    );
    const r = await airgap(['mirror', '-c', bad, `file://${dir}/out`]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`${bad} is not valid YAML: bad indentation of a mapping entry (${bad}:5:4)`);
  });
});
