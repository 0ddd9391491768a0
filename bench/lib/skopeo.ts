/**
 * skopeo 1.9 the way the benchmark drives it: the two ways oc-mirror-style mirroring is done with
 * skopeo (one `skopeo copy` per image, or one `skopeo sync` from a YAML list), plus `inspect --raw`
 * to read digests back. Every call passes an explicit accept-anything policy, auth file and cert
 * dirs, so nothing on the host (/etc/containers, ~/.docker) takes part.
 */
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import * as yaml from 'js-yaml';
import { addStats, cleanEnv, statsOf, timed, zeroStats } from './proc.js';
import type { ToolRun } from './report.js';

/** How skopeo reaches the source and destination registries. */
export interface SkopeoSetup {
  /** An accept-anything signature policy file. */
  policy: string;
  /** auth.json with credentials for both registries. */
  authFile: string;
  /** certs.d-style directories (holding ca.crt) for each side. */
  srcCertDir: string;
  destCertDir: string;
  /** Scratch directory for GNU time output and generated files. */
  scratch: string;
}

/** Write the accept-anything policy skopeo needs into `dir`; returns its path. */
export async function writePolicy(dir: string): Promise<string> {
  const path = join(dir, 'policy.json');
  await writeFile(path, `${JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] })}\n`);
  return path;
}

/** One image for skopeo: `docker://` source and destination references. */
export interface CopyJob {
  src: string;
  dest: string;
}

function failure(what: string, r: { exitCode: number; stderr: string }): Error {
  return new Error(`${what} failed (exit ${r.exitCode}): ${r.stderr.trim().slice(-2000)}`);
}

/**
 * `skopeo copy --all --preserve-digests` once per image, one after the other — what oc-mirror v2
 * does per image, here as a plain shell loop would. Wall time includes every process start.
 */
export async function copyLoop(s: SkopeoSetup, jobs: CopyJob[]): Promise<ToolRun> {
  let total = zeroStats;
  const started = process.hrtime.bigint();
  for (const job of jobs) {
    const r = await timed(
      'skopeo',
      [
        '--policy',
        s.policy,
        'copy',
        '--quiet',
        '--all',
        '--preserve-digests',
        '--authfile',
        s.authFile,
        '--src-cert-dir',
        s.srcCertDir,
        '--dest-cert-dir',
        s.destCertDir,
        job.src,
        job.dest,
      ],
      { timeFile: join(s.scratch, 'time.txt') },
    );
    if (r.exitCode !== 0) throw failure(`skopeo copy ${job.src} ${job.dest}`, r);
    total = addStats(total, r);
  }
  // Wall time of the whole loop (the per-process sum misses the gaps between processes).
  return { ...total, wallMs: Number(process.hrtime.bigint() - started) / 1e6, processes: jobs.length };
}

/** The images of one registry for a `skopeo sync --src yaml` file: repository → tags and/or digests. */
export type SyncImages = Record<string, string[]>;

/**
 * Write the YAML source file `skopeo sync --src yaml` reads. skopeo 1.9 takes the source's cert dir
 * from this file only (it replaces --src-cert-dir), so it is written here too.
 */
export async function writeSyncYaml(s: SkopeoSetup, registry: string, images: SyncImages): Promise<string> {
  const path = join(s.scratch, 'sync.yaml');
  await writeFile(path, yaml.dump({ [registry]: { images, 'cert-dir': s.srcCertDir } }));
  return path;
}

/** One `skopeo sync --src yaml --dest docker --all --preserve-digests` of `yamlFile` into `dest`. */
export async function sync(s: SkopeoSetup, yamlFile: string, dest: string): Promise<ToolRun> {
  const r = await timed(
    'skopeo',
    [
      '--policy',
      s.policy,
      'sync',
      '--all',
      '--preserve-digests',
      '--src',
      'yaml',
      '--dest',
      'docker',
      '--src-authfile',
      s.authFile,
      '--dest-authfile',
      s.authFile,
      '--src-cert-dir',
      s.srcCertDir,
      '--dest-cert-dir',
      s.destCertDir,
      yamlFile,
      dest,
    ],
    { timeFile: join(s.scratch, 'time.txt') },
  );
  if (r.exitCode !== 0) throw failure(`skopeo sync ${yamlFile} ${dest}`, r);
  return { ...statsOf(r), processes: 1 };
}

/** sha256 of the manifest `ref` (`docker://…`) serves, read with `skopeo inspect --raw`. */
export async function rawDigest(
  s: Pick<SkopeoSetup, 'policy' | 'authFile'>,
  certDir: string,
  ref: string,
): Promise<string> {
  const r = await execa(
    'skopeo',
    ['--policy', s.policy, 'inspect', '--raw', '--authfile', s.authFile, '--cert-dir', certDir, ref],
    {
      encoding: 'buffer',
      stripFinalNewline: false, // the manifest's exact bytes: its digest
      reject: false,
      stdin: 'ignore',
      env: cleanEnv(),
      extendEnv: false,
      timeout: 120_000,
    },
  );
  if (r.exitCode !== 0) {
    throw failure(`skopeo inspect --raw ${ref}`, {
      exitCode: r.exitCode ?? -1,
      stderr: Buffer.from(r.stderr).toString(),
    });
  }
  return `sha256:${createHash('sha256').update(r.stdout).digest('hex')}`;
}
