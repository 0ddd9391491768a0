/**
 * `airgap serve-images --asc-out`: the AgentServiceConfig osImages entries for what it serves,
 * checked against itself before they are written; a failure stops the server with a clear error.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { execa } from 'execa';
import * as yaml from 'js-yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeBootImagesManifest, type BootImagesManifest } from '../../src/server/rhcos/manifest.js';
import { REPO_ROOT } from '../helpers/cli.js';
import { validateAgainstCrd } from '../helpers/crd.js';
import { tempDir } from '../helpers/fixtures.js';
import { withRealCrds } from '../helpers/realdata.js';

const BIN = resolve(REPO_ROOT, 'bin/run.js');
const RELEASE = '9.6.20250101-0';
const ISO = `rhcos-${RELEASE}-live-iso.x86_64.iso`;
const ROOTFS = `rhcos-${RELEASE}-live-rootfs.x86_64.img`;

async function bootDir(openshiftVersion?: string): Promise<string> {
  const dir = await tempDir();
  await mkdir(join(dir, 'images'));
  const images = [];
  for (const [file, artifact] of [
    [ISO, 'iso'],
    [ROOTFS, 'rootfs'],
  ] as const) {
    const bytes = Buffer.from(`${file} `.repeat(500));
    await writeFile(join(dir, 'images', file), bytes);
    images.push({
      architecture: 'x86_64',
      artifact,
      release: RELEASE,
      file,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
      location: `https://example.invalid/${file}`,
      stream: 'stable',
    });
  }
  await writeBootImagesManifest(dir, {
    kind: 'AirgapBootImages',
    version: 1,
    stream: 'stable',
    ...(openshiftVersion ? { openshiftVersion } : {}),
    images,
  } as BootImagesManifest);
  return dir;
}

describe('airgap serve-images --asc-out', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await bootDir('4.18');
  });

  it('writes osImages with the IPv6 URL in brackets', async () => {
    const out = join(dir, 'os-images.yaml');
    const proc = execa(
      'node',
      [BIN, 'serve-images', '--dir', dir, '--port', '0', '--address', '::1', '--asc-out', out],
      {
        reject: false,
        stdin: 'ignore',
        timeout: 60_000,
      },
    );
    let err = '';
    await new Promise<void>((ok, fail) => {
      proc.stderr!.on('data', (d: Buffer) => {
        err += d.toString();
        if (err.includes('serve-images: running')) ok();
      });
      void proc.then(() => fail(new Error(err)));
    });
    proc.kill('SIGTERM');
    expect((await proc).exitCode, err).toBe(0);
    const patch = yaml.load(await readFile(out, 'utf8')) as { spec: { osImages: Record<string, string>[] } };
    const [entry] = patch.spec.osImages;
    expect(entry).toMatchObject({ cpuArchitecture: 'x86_64', openshiftVersion: '4.18', version: RELEASE });
    expect(entry!.url).toMatch(new RegExp(`^http://\\[::1\\]:\\d+/images/${ISO.replace(/\./g, '\\.')}$`));
    expect(entry!.rootFSUrl).toMatch(/\/images\/rhcos-.*-live-rootfs\.x86_64\.img$/);
  });

  withRealCrds.it('writes osImages valid against the AgentServiceConfig CRD', async () => {
    const out = join(dir, 'os-images.yaml'); // written by the test above
    const patch = yaml.load(await readFile(out, 'utf8')) as { spec: { osImages: Record<string, string>[] } };
    const storage = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } };
    const asc = {
      apiVersion: 'agent-install.openshift.io/v1beta1',
      kind: 'AgentServiceConfig',
      metadata: { name: 'agent' },
      spec: { databaseStorage: storage, filesystemStorage: storage, osImages: patch.spec.osImages },
    };
    expect(validateAgainstCrd('agent-install.openshift.io_agentserviceconfigs.yaml', asc)).toEqual([]);
  });

  it('stops with exit 2 and writes nothing when the OpenShift version is unknown', async () => {
    const bare = await bootDir();
    const out = join(bare, 'os-images.yaml');
    const r = await execa(
      'node',
      [BIN, 'serve-images', '--dir', bare, '--port', '0', '--address', '127.0.0.1', '--asc-out', out],
      {
        reject: false,
        stdin: 'ignore',
        timeout: 30_000,
      },
    );
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(/OS_IMAGES_VERSION[\s\S]*--openshift-version/);
    await expect(stat(out)).rejects.toThrow();
  });
});
