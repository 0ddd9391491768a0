import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CoreosStream } from '../../../src/mirror/openshift/payload.js';
import {
  COREOS_ARCHES,
  fileNameFromLocation,
  normalizeArch,
  openshiftMinor,
  openshiftVersionOfStream,
  parseStreamDocument,
  selectBootArtifacts,
  selectStream,
  type CoreosArch,
} from '../../../src/server/rhcos/stream.js';
import { syntheticStream } from '../../helpers/boot-files.js';
import { realdata, thrown, withRealdata } from '../../helpers/realdata.js';
import { ServerError } from '../../../src/server/errors.js';

const samplePath = (f: string) => realdata('samples', 'coreos', f);
const sampleText = (f: string) => readFileSync(samplePath(f), 'utf8');

/** The artifact as read straight from the JSON, for comparison. */
function raw(
  stream: CoreosStream,
  arch: string,
  format: string,
  key: string,
): { location: string; sha256: string } {
  const a = stream.architectures[arch] as {
    artifacts: { metal: { formats: Record<string, Record<string, { location: string; sha256: string }>> } };
  };
  return a.artifacts.metal.formats[format]![key]!;
}

withRealdata.describe('CoreOS stream metadata: the real samples', () => {
  const cases = [
    {
      file: 'installer-coreos-rhel-9.stream.json',
      stream: 'rhcos-4.21',
      release: '9.8.20260403-0',
      version: '4.21',
    },
    {
      file: 'installer-coreos-rhel-10.stream.json',
      stream: 'rhcos-4.22',
      release: '10.2.20260405-0',
      version: '4.22',
    },
    {
      file: '4.10-installer-coreos-bootimages.configmap.yaml',
      stream: 'rhcos-4.10',
      release: undefined,
      version: '4.10',
    },
  ];
  for (const c of cases) {
    it(`${c.file}: every architecture's live ISO, rootfs, kernel and initramfs, names from the URLs`, () => {
      const doc = parseStreamDocument(sampleText(c.file), samplePath(c.file));
      const stream = selectStream(doc);
      expect(stream.stream).toBe(c.stream);
      expect(openshiftVersionOfStream(stream.stream)).toBe(c.version);
      expect(Object.keys(stream.architectures).sort()).toEqual([...COREOS_ARCHES].sort());
      const arts = selectBootArtifacts(stream, { arches: COREOS_ARCHES, pxe: true, source: doc.source });
      expect(arts).toHaveLength(16);
      for (const a of arts) {
        const [format, key] = {
          iso: ['iso', 'disk'],
          rootfs: ['pxe', 'rootfs'],
          kernel: ['pxe', 'kernel'],
          initramfs: ['pxe', 'initramfs'],
        }[a.artifact] as [string, string];
        const r = raw(stream, a.architecture, format, key);
        expect(a.location).toBe(r.location);
        expect(a.sha256).toBe(r.sha256);
        expect(a.file).toBe(r.location.split('/').pop());
        if (c.release) expect(a.release).toBe(c.release);
      }
    });
  }

  it('names the files exactly as published (the naming changed between 4.10 and 4.21)', () => {
    const rhel9 = selectStream(parseStreamDocument(sampleText(cases[0]!.file), 'rhel9'));
    const x = selectBootArtifacts(rhel9, { arches: ['x86_64'], pxe: true, source: 'rhel9' });
    expect(x.map((a) => [a.artifact, a.file, a.sha256.slice(0, 8)])).toEqual([
      ['iso', 'rhcos-9.8.20260403-0-live-iso.x86_64.iso', '61528a93'],
      ['rootfs', 'rhcos-9.8.20260403-0-live-rootfs.x86_64.img', 'a874ce2a'],
      ['kernel', 'rhcos-9.8.20260403-0-live-kernel.x86_64', '702d1d7f'],
      ['initramfs', 'rhcos-9.8.20260403-0-live-initramfs.x86_64.img', 'aa2c109a'],
    ]);
    const old = selectStream(parseStreamDocument(sampleText(cases[2]!.file), 'cm'));
    const o = selectBootArtifacts(old, { arches: ['x86_64'], pxe: true, source: 'cm' });
    expect(o.map((a) => a.file)).toEqual([
      'rhcos-410.84.202111111322-0-live.x86_64.iso',
      'rhcos-410.84.202111111322-0-live-rootfs.x86_64.img',
      'rhcos-410.84.202111111322-0-live-kernel-x86_64',
      'rhcos-410.84.202111111322-0-live-initramfs.x86_64.img',
    ]);
    expect(o[0]!.release).toBe('410.84.202111111322-0');
    // Without --pxe: the ISO and the rootfs only.
    expect(selectBootArtifacts(old, { arches: ['ppc64le'], source: 'cm' }).map((a) => a.artifact)).toEqual([
      'iso',
      'rootfs',
    ]);
  });

  it('FCOS: one architecture, no OpenShift version; asking for another lists what it has (exit 2)', () => {
    const doc = parseStreamDocument(sampleText('fcos-stream.json'), samplePath('fcos-stream.json'));
    const s = selectStream(doc);
    expect(s.stream).toBe('stable');
    expect(openshiftVersionOfStream(s.stream)).toBeUndefined();
    const [iso] = selectBootArtifacts(s, { arches: ['x86_64'], source: doc.source });
    expect(iso!.file).toBe('fedora-coreos-33.20201201.3.0-live.x86_64.iso');
    const e = thrown(() => selectBootArtifacts(s, { arches: ['aarch64'], source: doc.source }));
    expect(e.code).toBe(ServerError.STREAM_ARCH_MISSING);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain('stable has no aarch64');
    expect(e.message).toContain('it has x86_64');
    expect(e.where).toBe(samplePath('fcos-stream.json'));
  });
});

describe('stream selection and checks', () => {
  const synthetic = syntheticStream('http://127.0.0.1:1', { arches: ['x86_64', 'aarch64'] });

  withRealdata.it('the generated stream has the nesting of the real one', () => {
    const real = JSON.parse(sampleText('installer-coreos-rhel-9.stream.json')) as CoreosStream;
    type Arch = { artifacts: { metal: { formats: Record<string, Record<string, object>> } } };
    const shape = (s: CoreosStream) => {
      const m = (s.architectures.x86_64 as Arch).artifacts.metal;
      return Object.fromEntries(Object.entries(m.formats).map(([f, v]) => [f, Object.keys(v).sort()]));
    };
    expect(shape(synthetic.stream)).toEqual(shape(real));
    expect(Object.keys(synthetic.stream).sort()).toEqual(Object.keys(real).sort());
    expect(Object.keys(synthetic.stream.metadata ?? {})).toEqual(Object.keys(real.metadata ?? {}));
    const keys = (s: CoreosStream) => Object.keys(s.architectures.x86_64 as object).sort();
    expect(keys(synthetic.stream)).toEqual(keys(real));
  });

  it('architecture names: the stream names and the OCI aliases', () => {
    expect(normalizeArch('amd64')).toBe('x86_64');
    expect(normalizeArch('ARM64')).toBe('aarch64');
    expect(normalizeArch('s390x')).toBe('s390x');
    const e = thrown(() => normalizeArch('ppc64el'));
    expect(e.code).toBe(ServerError.ARCH_INVALID);
    expect(e.exitCode).toBe(2);
    expect(e.hint).toContain('x86_64, aarch64, ppc64le, s390x');
  });

  withRealdata.it('a ConfigMap with several streams: the default, or one by key or by name', () => {
    const rhel9 = JSON.parse(sampleText('installer-coreos-rhel-9.stream.json')) as CoreosStream;
    const rhel10 = JSON.parse(sampleText('installer-coreos-rhel-10.stream.json')) as CoreosStream;
    const cm = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'coreos-bootimages', namespace: 'openshift-machine-config-operator' },
      data: {
        releaseVersion: '0.0.1-snapshot',
        stream: JSON.stringify(rhel9),
        streams: JSON.stringify({ 'rhel-9': rhel9, 'rhel-10': rhel10 }),
      },
    });
    const doc = parseStreamDocument(cm, 'cm.json');
    expect(selectStream(doc).stream).toBe('rhcos-4.21');
    expect(selectStream(doc, 'rhel-10').stream).toBe('rhcos-4.22');
    expect(selectStream(doc, 'rhcos-4.22').stream).toBe('rhcos-4.22');
    const e = thrown(() => selectStream(doc, 'rhel-11'));
    expect(e.code).toBe(ServerError.STREAM_NOT_FOUND);
    expect(e.message).toContain('rhel-9 (rhcos-4.21), rhel-10 (rhcos-4.22)');
  });

  it('file names come from the URL path, decoded, and are refused when unusable', () => {
    expect(fileNameFromLocation('https://h/a/b/rhcos%2B1.iso?x=1', 'p', 's')).toBe('rhcos+1.iso');
    for (const bad of [
      'https://h/a/b/',
      'https://h/a/..%2F..%2Fetc%2Fpasswd',
      'https://h/a/%2E%2E',
      'https://h/a/.hidden.iso',
      'https://h/a/x%00y',
      'https://h/a/x%5Cy',
      'https://h/a/%E0%A4%A',
      'not a url',
    ]) {
      const e = thrown(() =>
        fileNameFromLocation(bad, 'architectures.x86_64…iso.disk.location', 'stream.json'),
      );
      expect(e.code, bad).toBe(ServerError.STREAM_INVALID);
      expect(e.exitCode).toBe(2);
    }
    // `..` as a whole segment is resolved away by URL parsing: the name is then what remains.
    expect(fileNameFromLocation('https://h/a/../b.iso', 'p', 's')).toBe('b.iso');
  });

  it('missing artifacts and bad values are named with their JSON path', () => {
    const s = structuredClone(synthetic.stream);
    const x = s.architectures.x86_64 as {
      artifacts: { metal: { formats: Record<string, Record<string, unknown>> } };
    };
    delete x.artifacts.metal.formats.pxe!.kernel;
    const e = thrown(() => selectBootArtifacts(s, { arches: ['x86_64'], pxe: true, source: 'f.json' }));
    expect(e.code).toBe(ServerError.STREAM_ARTIFACT_MISSING);
    expect(e.message).toContain('architectures.x86_64.artifacts.metal.formats.pxe.kernel');
    expect(e.hint).toContain('--pxe');
    expect(selectBootArtifacts(s, { arches: ['x86_64'], source: 'f.json' })).toHaveLength(2);
    (x.artifacts.metal.formats.iso!.disk as { sha256: string }).sha256 = 'abc';
    expect(thrown(() => selectBootArtifacts(s, { arches: ['x86_64'], source: 'f.json' })).message).toContain(
      'formats.iso.disk.sha256',
    );
  });

  it('documents that are not stream metadata are STREAM_INVALID naming the source', () => {
    for (const text of ['{"kind":"Pod"}', '[1,2]', 'a: [', 'kind: ConfigMap\ndata: {}\n']) {
      const e = thrown(() => parseStreamDocument(text, '/tmp/x.json'));
      expect(e.code, text).toBe(ServerError.STREAM_INVALID);
      expect(`${e.message} ${e.where ?? ''}`).toContain('/tmp/x.json');
    }
  });

  it('a stream whose "metadata" is not a map of strings is STREAM_INVALID naming the field', () => {
    for (const metadata of [5, ['x'], { 'last-modified': 5 }]) {
      const text = JSON.stringify({ stream: 'rhcos-4.21', metadata, architectures: {} });
      const e = thrown(() => parseStreamDocument(text, '/tmp/x.json'));
      expect(e.code, text).toBe(ServerError.STREAM_INVALID);
      expect(e.message).toContain('"metadata" is not a map of strings');
    }
    const good = {
      stream: 'rhcos-4.21',
      metadata: { 'last-modified': '2026-04-03T00:00:00Z' },
      architectures: {},
    };
    expect(parseStreamDocument(JSON.stringify(good), '/tmp/x.json').stream).toEqual(good);
  });

  it('OpenShift x.y from a release version or a stream name', () => {
    expect(openshiftMinor('4.18.3')).toBe('4.18');
    expect(openshiftMinor('4.19.0-rc.2')).toBe('4.19');
    expect(openshiftVersionOfStream('rhcos-4.18')).toBe('4.18');
    expect(openshiftVersionOfStream('rhcos-4.180')).toBe('4.180');
    expect(openshiftVersionOfStream('stable')).toBeUndefined();
  });

  it('every generated architecture is selectable by alias', () => {
    const arts = selectBootArtifacts(synthetic.stream, {
      arches: ['amd64', 'arm64'].map(normalizeArch) as CoreosArch[],
      source: 's',
    });
    expect(arts.map((a) => `${a.architecture}/${a.artifact}`)).toEqual([
      'x86_64/iso',
      'x86_64/rootfs',
      'aarch64/iso',
      'aarch64/rootfs',
    ]);
  });
});
