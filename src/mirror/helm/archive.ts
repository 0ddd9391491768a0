/**
 * Chart archives (`.tgz`) read in memory, safely: gunzip bounded by the limits of a chart archive
 * (inflate.ts: 200× its size, and what is left of the 100 MiB a chart with everything it nests may
 * unpack to), the tar read up to its end (tar-read.ts), then only regular files and directories; an
 * absolute path, a `..` component, a link or a device refuses the whole archive. Helm archives
 * hold one top directory (`podinfo/…`), which is taken off the names.
 */
import { Parser, type ReadEntry } from 'tar';
import { AirgapError } from '../../util/errors.js';
import { MirrorError } from '../errors.js';
import { inflateSync } from '../inflate.js';
import { TarEnd } from '../tar-read.js';

/** A chart file: its path inside the chart (`templates/deployment.yaml`) and its bytes. */
export interface ChartFile {
  name: string;
  data: Buffer;
}

/** How many bytes a chart may unpack to, subcharts included. */
export const MAX_CHART_BYTES = 100 * 1024 * 1024;

/** What is left to unpack, shared by a chart and the archives it nests. */
export interface Budget {
  left: number;
}

export function unsafe(where: string, why: string): AirgapError {
  return new AirgapError(MirrorError.HELM_CHART_UNSAFE, `the chart archive ${where} ${why}`, {
    where,
    exitCode: 2,
    hint: 'use the chart as its repository publishes it (helm package makes archives without links or outside paths)',
  });
}

function invalid(where: string, why: string, cause?: unknown): AirgapError {
  return new AirgapError(MirrorError.HELM_CHART_INVALID, `${where} is not a chart archive: ${why}`, {
    where,
    exitCode: 2,
    cause,
  });
}

/** Normalise an entry name; refuse absolute paths and `..`. */
function safeName(where: string, raw: string): string {
  const name = raw.replace(/\\/g, '/');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw unsafe(where, `holds an absolute path: ${raw}`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw unsafe(where, `holds a path with "..": ${raw}`);
  return parts.join('/');
}

/** The files of a gzipped chart archive, named inside the chart (the top directory taken off). */
export function readChartArchive(bytes: Buffer, where: string, budget: Budget): ChartFile[] {
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b)
    throw invalid(where, 'it is not gzip-compressed');
  let tarBytes: Buffer;
  try {
    tarBytes = inflateSync(bytes, 'chart', `the chart archive ${where}`, {
      max: budget.left,
      maxWhy: `what is left of the ${MAX_CHART_BYTES / 1024 / 1024} MiB a chart may unpack to with its subcharts`,
    });
  } catch (e) {
    if (e instanceof AirgapError) throw e;
    throw invalid(where, (e as Error).message, e);
  }
  budget.left -= tarBytes.length;

  const files: ChartFile[] = [];
  let opened = 0;
  let problem: AirgapError | undefined;
  const parser = new Parser({ strict: true });
  parser.on('warn', (_code: string, message: string) => {
    problem ??= invalid(where, message);
  });
  parser.on('error', (e: Error) => {
    problem ??= invalid(where, e.message, e);
  });
  parser.on('entry', (entry: ReadEntry) => {
    try {
      const name = safeName(where, entry.path);
      switch (entry.type) {
        case 'Directory':
          entry.resume();
          return;
        case 'File':
        case 'OldFile':
        case 'ContiguousFile': {
          const chunks: Buffer[] = [];
          opened++;
          entry.on('data', (c: Buffer) => chunks.push(c));
          entry.on('end', () => files.push({ name, data: Buffer.concat(chunks) }));
          return;
        }
        case 'SymbolicLink':
        case 'Link':
          throw unsafe(where, `holds a link: ${entry.path} -> ${entry.linkpath ?? ''}`);
        default:
          throw unsafe(where, `holds a ${entry.type} entry: ${entry.path}`);
      }
    } catch (e) {
      problem ??= e instanceof AirgapError ? e : invalid(where, String(e));
      entry.resume();
    }
  });
  let archive: Buffer;
  try {
    archive = new TarEnd().take(tarBytes); // what follows the tar's end is not parsed
  } catch (e) {
    throw invalid(where, (e as Error).message, e);
  }
  parser.end(archive); // the parser works synchronously on a buffer: every entry has ended here
  if (problem) throw problem;
  if (files.length !== opened) throw invalid(where, 'it is truncated');

  // Take off the one top directory, as Helm does.
  const tops = new Set(files.map((f) => f.name.split('/')[0]));
  if (files.length === 0) throw invalid(where, 'it holds no files');
  if (tops.size !== 1 || files.some((f) => !f.name.includes('/')))
    throw invalid(where, 'its files are not under one top directory');
  return files.map((f) => ({ name: f.name.slice(f.name.indexOf('/') + 1), data: f.data }));
}
