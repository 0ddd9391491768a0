/**
 * The AgentServiceConfig osImages entries for what the running server serves: checked against the
 * server itself, valid against the real AgentServiceConfig CRD, IPv6 hosts in brackets.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveImages, type RunningImageServer } from '../../src/server/listen.js';
import { osImageEntries, writeOsImages } from '../../src/server/os-images.js';
import { writeBootImagesManifest, type BootImageEntry } from '../../src/server/rhcos/manifest.js';
import { validateAgainstCrd } from '../helpers/crd.js';
import { tempDir } from '../helpers/fixtures.js';
import { withRealCrds } from '../helpers/realdata.js';
import { ServerError } from '../../src/server/errors.js';

const RELEASE = '9.6.20250101-0';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A full AgentServiceConfig around the entries, as it is applied (the CRD requires the storage fields). */
function agentServiceConfig(osImages: unknown): unknown {
  const storage = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '10Gi' } } };
  return {
    apiVersion: 'agent-install.openshift.io/v1beta1',
    kind: 'AgentServiceConfig',
    metadata: { name: 'agent' },
    spec: {
      databaseStorage: storage,
      filesystemStorage: storage,
      mirrorRegistryRef: { name: 'custom-registries' },
      osImages,
    },
  };
}

describe('osImages for the served boot images', () => {
  let dir: string;
  let server: RunningImageServer;
  const files: Record<string, Buffer> = {
    [`rhcos-${RELEASE}-live-iso.x86_64.iso`]: Buffer.from('iso bytes '.repeat(1000)),
    [`rhcos-${RELEASE}-live-rootfs.x86_64.img`]: Buffer.from('rootfs bytes '.repeat(1000)),
  };

  beforeAll(async () => {
    dir = await tempDir();
    await mkdir(join(dir, 'images'));
    const images: BootImageEntry[] = [];
    for (const [file, bytes] of Object.entries(files)) {
      await writeFile(join(dir, 'images', file), bytes);
      images.push({
        architecture: 'x86_64',
        artifact: file.endsWith('.iso') ? 'iso' : 'rootfs',
        release: RELEASE,
        file,
        sha256: sha(bytes),
        size: bytes.length,
        location: `https://rhcos.mirror.openshift.com/art/storage/prod/streams/rhel-9.6/builds/${RELEASE}/x86_64/${file}`,
        stream: 'rhcos-4.18',
        openshiftVersion: '4.18',
      });
    }
    await writeBootImagesManifest(dir, {
      kind: 'AirgapBootImages',
      version: 1,
      stream: 'rhcos-4.18',
      openshiftVersion: '4.18',
      images,
    } as Parameters<typeof writeBootImagesManifest>[1]);
    server = await serveImages({ dir, port: 0, addresses: ['127.0.0.1', '::1'] });
  });

  afterAll(async () => {
    await server?.close(0);
  });

  it('writes entries that answer, and put IPv6 hosts in brackets', async () => {
    const out = join(dir, 'asc-os-images.yaml');
    const v6 = `http://[::1]:${server.port}`;
    const r = await writeOsImages({ dir, servedUrls: server.urls, publicUrl: v6, out });
    expect(r.entries).toEqual([
      {
        cpuArchitecture: 'x86_64',
        openshiftVersion: '4.18',
        version: RELEASE,
        url: `${v6}/images/rhcos-${RELEASE}-live-iso.x86_64.iso`,
        rootFSUrl: `${v6}/images/rhcos-${RELEASE}-live-rootfs.x86_64.img`,
      },
    ]);
    const patch = yaml.load(await readFile(out, 'utf8')) as { spec: { osImages: unknown } };
    expect(patch.spec.osImages).toEqual(r.entries);
    // The URLs really serve the files (what assisted-image-service will download).
    const res = await fetch(r.entries[0]!.url);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(files[`rhcos-${RELEASE}-live-iso.x86_64.iso`]);
  });

  withRealCrds.it('writes entries valid against the real CRD', async () => {
    const out = join(dir, 'asc-os-images.yaml'); // written by the test above
    const patch = yaml.load(await readFile(out, 'utf8')) as { spec: { osImages: unknown } };
    expect(
      validateAgainstCrd(
        'agent-install.openshift.io_agentserviceconfigs.yaml',
        agentServiceConfig(patch.spec.osImages),
      ),
    ).toEqual([]);
  });

  it('refuses URLs that do not answer, naming each, and a version it cannot know', async () => {
    const gone = `rhcos-${RELEASE}-live-rootfs.x86_64.img`;
    await rm(join(dir, 'images', gone));
    await expect(
      writeOsImages({ dir, servedUrls: server.urls, publicUrl: `http://127.0.0.1:${server.port}` }),
    ).rejects.toMatchObject({
      code: ServerError.OS_IMAGES_UNREACHABLE,
      message: expect.stringContaining(`${gone} answers 404`),
    });
    await writeFile(join(dir, 'images', gone), files[gone]!);
    expect(() => osImageEntries({ images: [] }, 'http://x:8080')).toThrow(/OpenShift version/);
    expect(() => osImageEntries({ openshiftVersion: '4.18', images: [] }, 'http://x:8080')).toThrow(
      /no live ISO/,
    );
    expect(() => osImageEntries({ openshiftVersion: '4.18', images: [] }, 'ftp://x')).toThrow();
  });
});
