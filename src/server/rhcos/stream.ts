/**
 * CoreOS stream metadata (coreos/stream-metadata-go `Stream`) for bare metal: which files boot a
 * host, where they are, and their sha256. Paths, per architecture:
 *
 *   architectures.<arch>.artifacts.metal.release                 the RHCOS build (osImages `version`)
 *   architectures.<arch>.artifacts.metal.formats.iso.disk        the live ISO
 *   architectures.<arch>.artifacts.metal.formats.pxe.rootfs      the live rootfs (PXE and rootFSUrl)
 *   architectures.<arch>.artifacts.metal.formats.pxe.kernel      PXE kernel
 *   architectures.<arch>.artifacts.metal.formats.pxe.initramfs   PXE initramfs
 *
 * each `{ location, sha256, signature?, size? }`. The file name of an artifact is the last segment
 * of its `location` URL path, decoded, exactly as published (`rhcos-9.8.20260403-0-live-iso.x86_64.iso`
 * on 4.21, `rhcos-410.84.202111111322-0-live.x86_64.iso` and `…-live-kernel-x86_64` on 4.10): never
 * made up from a naming convention, which has changed between releases.
 *
 * A stream document is the stream JSON itself (`openshift-install coreos print-stream-json`, the
 * files on mirror.openshift.com), or the `coreos-bootimages` ConfigMap that carries it (as YAML or
 * JSON, e.g. `oc get configmap coreos-bootimages -n openshift-machine-config-operator -o yaml`):
 * `data.stream` is the default stream, and newer releases add `data.streams`, a map of every stream
 * the release ships by name (`rhel-9`, `rhel-10`).
 */
import { isYamlLimitError, parseYaml } from '../../config/yaml-load.js';
import { segmentProblem } from '../../util/path-segment.js';
import { AirgapError, messageOf, usageError, type ExitCode } from '../../util/errors.js';
import { parseBootImages, type BootImages, type CoreosStream } from '../../mirror/index.js';
import { ServerError } from '../errors.js';

/** The architectures RHCOS is built for, as the stream names them. */
export const COREOS_ARCHES = ['x86_64', 'aarch64', 'ppc64le', 's390x'] as const;
export type CoreosArch = (typeof COREOS_ARCHES)[number];

/** Other names people use for them (Go/OCI names). */
const ARCH_ALIASES: Record<string, CoreosArch> = { amd64: 'x86_64', arm64: 'aarch64' };

/** The stream's architecture name → the OCI platform name (for a multi-arch release payload). */
export const OCI_ARCH: Record<CoreosArch, string> = {
  x86_64: 'amd64',
  aarch64: 'arm64',
  ppc64le: 'ppc64le',
  s390x: 's390x',
};

/** What is fetched: the live ISO, the live rootfs, and with --pxe the PXE kernel and initramfs. */
export type BootArtifactKind = 'iso' | 'rootfs' | 'kernel' | 'initramfs';

/** Where each artifact sits under `artifacts.metal.formats`. */
const ARTIFACT_PATH: Record<BootArtifactKind, [format: string, key: string]> = {
  iso: ['iso', 'disk'],
  rootfs: ['pxe', 'rootfs'],
  kernel: ['pxe', 'kernel'],
  initramfs: ['pxe', 'initramfs'],
};

/** One file to fetch. */
export interface BootArtifact {
  architecture: CoreosArch;
  artifact: BootArtifactKind;
  /** `artifacts.metal.release`: the RHCOS build, e.g. `9.8.20260403-0`. */
  release: string;
  /** Absolute http(s) URL. */
  location: string;
  /** Lowercase hex. */
  sha256: string;
  /** When the metadata gives it (CoreOS streams do not). */
  size?: number;
  /** The basename of `location`'s path. */
  file: string;
  /** The JSON path of the artifact in the stream, for messages. */
  path: string;
}

/** A stream document read from somewhere: the default stream, and all of them when it names several. */
export interface StreamDocument {
  /** The default stream (`data.stream` of a ConfigMap, or the stream JSON itself). */
  stream: CoreosStream;
  /** `data.streams` of a ConfigMap that has it: name (`rhel-9`) → stream. */
  streams?: Record<string, CoreosStream>;
  /** Where it came from, for messages: a file path, a URL, an image. */
  source: string;
}

/** A stream architecture name from a flag: x86_64, aarch64, ppc64le, s390x; amd64 and arm64 too. */
export function normalizeArch(name: string): CoreosArch {
  const n = name.trim().toLowerCase();
  if ((COREOS_ARCHES as readonly string[]).includes(n)) return n as CoreosArch;
  const alias = ARCH_ALIASES[n];
  if (alias) return alias;
  throw usageError(ServerError.ARCH_INVALID, `--arch ${name} is not a CoreOS architecture`, {
    hint: `use one of ${COREOS_ARCHES.join(', ')} (amd64 and arm64 are understood), or all`,
  });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function invalid(message: string, source: string, exitCode: ExitCode, hint?: string): AirgapError {
  return new AirgapError(ServerError.STREAM_INVALID, message, {
    ...(message.includes(source) ? {} : { where: source }),
    exitCode,
    hint:
      hint ??
      'give CoreOS stream metadata: the JSON of `openshift-install coreos print-stream-json`, or the coreos-bootimages ConfigMap',
  });
}

function isStringMap(v: unknown): v is Record<string, string> {
  return isObject(v) && Object.values(v).every((s) => typeof s === 'string');
}

function checkStream(v: unknown, what: string, source: string, exitCode: ExitCode): CoreosStream {
  if (!isObject(v) || typeof v.stream !== 'string' || !isObject(v.architectures))
    throw invalid(
      `${what} is not CoreOS stream metadata (no "stream" name and "architectures" map)`,
      source,
      exitCode,
    );
  const stream = v.stream;
  const architectures = v.architectures;
  const metadata = v.metadata;
  if (metadata !== undefined && !isStringMap(metadata))
    throw invalid(
      `${what} is not CoreOS stream metadata: its "metadata" is not a map of strings (like "last-modified": "2026-04-03T…")`,
      source,
      exitCode,
    );
  return { ...v, stream, architectures, ...(metadata !== undefined ? { metadata } : {}) };
}

/**
 * Read a stream document from its text: stream JSON, or a coreos-bootimages ConfigMap in YAML or
 * JSON. Errors are STREAM_INVALID naming `source`, with `exitCode` (2 for a file the user gave).
 */
export function parseStreamDocument(text: string, source: string, exitCode: ExitCode = 2): StreamDocument {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // Not JSON: then it must be YAML, and that parse's error is the one reported.
    try {
      doc = parseYaml(text, { source, exitCode });
    } catch (e) {
      if (isYamlLimitError(e)) throw e;
      throw invalid(`${source} is neither JSON nor YAML: ${messageOf(e).split('\n')[0]}`, source, exitCode);
    }
  }
  return streamDocumentOf(doc, source, exitCode);
}

/** The same as {@link parseStreamDocument}, for a document already parsed (JSON from a URL). */
export function streamDocumentOf(doc: unknown, source: string, exitCode: ExitCode = 2): StreamDocument {
  if (isObject(doc) && doc.kind === 'ConfigMap') {
    let boot: BootImages;
    try {
      boot = parseBootImages(Buffer.from(JSON.stringify(doc)), source);
    } catch (e) {
      throw invalid(`the ConfigMap in ${source} holds no readable stream: ${messageOf(e)}`, source, exitCode);
    }
    return fromBootImages(boot, source);
  }
  return { stream: checkStream(doc, source, source, exitCode), source };
}

/** A release payload's coreos-bootimages as a stream document. */
export function fromBootImages(boot: BootImages, source: string): StreamDocument {
  return { stream: boot.streamJson, ...(boot.streams ? { streams: boot.streams } : {}), source };
}

/**
 * Pick a stream. Without a name: the default one (`data.stream`, rhel-9 on releases that ship
 * several). With a name (`--os-stream`): the `data.streams` entry of that key (`rhel-10`) or whose
 * stream is so named (`rhcos-4.22`), then the default stream if it is so named. STREAM_NOT_FOUND
 * (exit 2) lists the streams there are.
 */
export function selectStream(doc: StreamDocument, name?: string): CoreosStream {
  if (name === undefined || name === '') return doc.stream;
  const streams = doc.streams ?? {};
  const byKey = streams[name];
  if (byKey) return byKey;
  const byName = Object.values(streams).find((s) => s.stream === name);
  if (byName) return byName;
  if (doc.stream.stream === name) return doc.stream;
  const have = doc.streams
    ? Object.entries(doc.streams).map(([k, s]) => `${k} (${s.stream})`)
    : [doc.stream.stream];
  throw usageError(
    ServerError.STREAM_NOT_FOUND,
    `${doc.source} has no stream ${name}; it has ${have.join(', ')}`,
    {
      hint: 'give --os-stream one of those names, or leave it out for the default stream',
    },
  );
}

/**
 * The file name of an artifact: the last segment of its URL path, percent-decoded. Refused (so that
 * nothing can be written outside the images directory or hidden in it): an empty name, `.`, `..`,
 * a name with `/`, `\`, a control character, or a leading `.`.
 */
export function fileNameFromLocation(location: string, where: string, source: string): string {
  let u: URL;
  try {
    u = new URL(location);
  } catch {
    // new URL fails only on a string that is not a URL: said so.
    throw invalid(`${where} is not an absolute URL: ${JSON.stringify(location)}`, source, 2);
  }
  const raw = u.pathname.slice(u.pathname.lastIndexOf('/') + 1);
  let name: string;
  try {
    name = decodeURIComponent(raw);
  } catch {
    // A malformed percent escape (URIError): said so.
    throw invalid(`${where} has a badly encoded file name: ${JSON.stringify(raw)}`, source, 2);
  }
  // One file name (util/path-segment.ts), and not a hidden one.
  const problem = name.startsWith('.') ? 'it starts with a dot' : segmentProblem(name);
  if (problem)
    throw invalid(
      `${where} (${location}) does not end in a usable file name (${JSON.stringify(name)}: ${problem})`,
      source,
      2,
      'the location must end in the file name, e.g. …/rhcos-9.8.20260403-0-live-iso.x86_64.iso',
    );
  return name;
}

/** `rhcos-4.18` → `4.18`; anything else (FCOS's `stable`) → undefined. */
export function openshiftVersionOfStream(stream: string): string | undefined {
  return /^rhcos-(\d+\.\d+)(?!\d)/.exec(stream)?.[1];
}

/** `4.18.3` (or `4.18.0-rc.1`) → `4.18`. */
export function openshiftMinor(version: string): string | undefined {
  return /^(\d+\.\d+)(?:\.|$)/.exec(version)?.[1];
}

/** The architectures of a stream that have metal artifacts, in the stream's order. */
function streamArches(stream: CoreosStream): string[] {
  return Object.keys(stream.architectures);
}

/**
 * The artifacts to fetch from `stream` for each architecture: the live ISO and rootfs, and with
 * `pxe` the kernel and initramfs. Errors, naming the source and the stream: STREAM_ARCH_MISSING
 * (listing the architectures it has), STREAM_ARTIFACT_MISSING (naming the JSON path and listing
 * the formats there are), STREAM_INVALID (a location, sha256 or release that is not usable); all exit 2.
 */
export function selectBootArtifacts(
  stream: CoreosStream,
  opts: { arches: readonly CoreosArch[]; pxe?: boolean; source: string },
): BootArtifact[] {
  const { source } = opts;
  const kinds: BootArtifactKind[] = opts.pxe ? ['iso', 'rootfs', 'kernel', 'initramfs'] : ['iso', 'rootfs'];
  const out: BootArtifact[] = [];
  for (const arch of opts.arches) {
    const a = stream.architectures[arch];
    if (!isObject(a)) {
      const have = streamArches(stream);
      throw usageError(
        ServerError.STREAM_ARCH_MISSING,
        `stream ${stream.stream} has no ${arch} boot images; it has ${have.length ? have.join(', ') : 'no architectures'}`,
        {
          where: source,
          hint: `ask for one of them with --arch (${have.join(', ')}), or use the stream of a release built for ${arch}`,
          details: { architecture: arch, available: have },
        },
      );
    }
    const base = `architectures.${arch}.artifacts.metal`;
    const metal = isObject(a.artifacts) ? a.artifacts.metal : undefined;
    if (!isObject(metal)) {
      const platforms = isObject(a.artifacts) ? Object.keys(a.artifacts) : [];
      throw usageError(
        ServerError.STREAM_ARTIFACT_MISSING,
        `stream ${stream.stream} has no bare-metal artifacts for ${arch} (${base} is missing; platforms: ${platforms.join(', ') || 'none'})`,
        { where: source, hint: 'use the stream of an OpenShift release, which publishes metal images' },
      );
    }
    if (typeof metal.release !== 'string' || metal.release === '')
      throw invalid(`stream ${stream.stream}: ${base}.release is missing`, source, 2);
    const formats = isObject(metal.formats) ? metal.formats : {};
    for (const kind of kinds) {
      const [format, key] = ARTIFACT_PATH[kind];
      const path = `${base}.formats.${format}.${key}`;
      const fmt = formats[format];
      const art = isObject(fmt) ? fmt[key] : undefined;
      if (!isObject(art)) {
        const have = Object.keys(formats).join(', ') || 'none';
        throw usageError(
          ServerError.STREAM_ARTIFACT_MISSING,
          `stream ${stream.stream} has no ${kind} for ${arch}: ${path} is missing (metal formats: ${have})`,
          {
            where: source,
            hint:
              kind === 'kernel' || kind === 'initramfs'
                ? 'leave out --pxe to fetch only the live ISO and rootfs'
                : 'use the stream of an OpenShift release, which publishes the live ISO and rootfs',
          },
        );
      }
      if (typeof art.location !== 'string' || art.location === '')
        throw invalid(`stream ${stream.stream}: ${path}.location is missing`, source, 2);
      const hex =
        typeof art.sha256 === 'string' && /^[0-9a-fA-F]{64}$/.test(art.sha256) ? art.sha256 : undefined;
      if (!hex) throw invalid(`stream ${stream.stream}: ${path}.sha256 is not a sha256`, source, 2);
      const u = (() => {
        try {
          return new URL(art.location as string);
        } catch {
          return undefined; // not a URL: refused below
        }
      })();
      if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:'))
        throw invalid(
          `stream ${stream.stream}: ${path}.location is not an http(s) URL: ${art.location}`,
          source,
          2,
        );
      const size =
        typeof art.size === 'number' && Number.isSafeInteger(art.size) && art.size >= 0
          ? art.size
          : undefined;
      out.push({
        architecture: arch,
        artifact: kind,
        release: metal.release,
        location: art.location,
        sha256: hex.toLowerCase(),
        ...(size !== undefined ? { size } : {}),
        file: fileNameFromLocation(art.location, `${path}.location`, source),
        path,
      });
    }
  }
  // Two artifacts may not claim one file name with different content.
  const byFile = new Map<string, BootArtifact>();
  for (const a of out) {
    const other = byFile.get(a.file);
    if (other && other.sha256 !== a.sha256)
      throw invalid(
        `stream ${stream.stream}: ${other.path} and ${a.path} both name the file ${a.file} with different sha256`,
        source,
        2,
      );
    byFile.set(a.file, a);
  }
  return out;
}
