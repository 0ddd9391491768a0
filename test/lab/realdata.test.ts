/**
 * lab/realdata.ts, the one module that knows where the reference material is: where it looks (beside
 * the repository, or where AIRGAP_REALDATA / AIRGAP_CRD_DIR say), whether it is there, and the one
 * line that says why not and what to do.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  crdDir,
  CRD_DIR_ENV,
  hasRealCrds,
  hasRealdata,
  realCrdsAbsence,
  realdata,
  realdataAbsence,
  realdataBeside,
  REALDATA_ENV,
} from '../../lab/realdata.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

const saved = { realdata: process.env[REALDATA_ENV], crds: process.env[CRD_DIR_ENV] };
afterEach(() => {
  for (const [k, v] of [
    [REALDATA_ENV, saved.realdata],
    [CRD_DIR_ENV, saved.crds],
  ] as const) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

describe('lab/realdata.ts', () => {
  it('looks beside the repository unless AIRGAP_REALDATA says where', () => {
    delete process.env[REALDATA_ENV];
    delete process.env[CRD_DIR_ENV];
    expect(realdata('samples', 'x.json')).toBe(
      join(REPO_ROOT, '..', 'shared', 'realdata', 'samples', 'x.json'),
    );
    expect(crdDir()).toBe(join(realdataBeside(), 'crds'));
    process.env[REALDATA_ENV] = '/srv/reference';
    expect(realdata('samples')).toBe('/srv/reference/samples');
    expect(crdDir()).toBe('/srv/reference/crds');
    process.env[CRD_DIR_ENV] = '/srv/crds';
    expect(crdDir()).toBe('/srv/crds');
  });

  it('says what is missing and how to give it, in one line each; nothing when it is there', async () => {
    const dir = await tempDir('airgap-realdata-');
    process.env[REALDATA_ENV] = join(dir, 'nowhere');
    delete process.env[CRD_DIR_ENV];
    expect(hasRealdata()).toBe(false);
    expect(hasRealCrds()).toBe(false);
    expect(realdataAbsence()).toBe(
      `${join(dir, 'nowhere')} (the real CRDs and samples) is not here; put it beside the repository or set AIRGAP_REALDATA to where it is`,
    );
    expect(realCrdsAbsence()).toBe(`${join(dir, 'nowhere', 'crds')} is not here`);

    // A file where the directory belongs is not the material either.
    await writeFile(join(dir, 'file'), 'x');
    process.env[REALDATA_ENV] = join(dir, 'file');
    expect(hasRealdata()).toBe(false);

    await mkdir(join(dir, 'reference', 'crds'), { recursive: true });
    process.env[REALDATA_ENV] = join(dir, 'reference');
    expect(hasRealdata()).toBe(true);
    expect(hasRealCrds()).toBe(true);
    expect(realdataAbsence()).toBeUndefined();
    expect(realCrdsAbsence()).toBeUndefined();
    process.env[CRD_DIR_ENV] = join(dir, 'no-crds');
    expect(hasRealCrds()).toBe(false);
    expect(realCrdsAbsence()).toBe(`${join(dir, 'no-crds')} is not here`);
  });
});
