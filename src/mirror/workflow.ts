/**
 * Which of oc-mirror v2's workflows a run's arguments describe, decided in one place from the
 * Locations it was given, and where that workflow keeps its state:
 *   mirrorToMirror  docker:// destination with --workspace file://<dir>   state in <dir>
 *   mirrorToDisk    file://<dir> destination                             state in <dir>/working-dir
 *   diskToMirror    docker:// destination with --from file://<dir>       state in <dir>/working-dir
 *   mirrorToLayout  oci:<dir> destination (no archive; airgap's own)     state in <dir>/.airgap
 * A dry run is any of them that plans and measures, and copies nothing. Every usage error of the
 * arguments is raised here, before anything is read, in the order people have always seen them.
 */
import { join, resolve } from 'node:path';
import { usageError, CommonError } from '../util/errors.js';
import { locationKind, parseLocation, type Location } from './location.js';

export type MirrorMode = 'mirrorToMirror' | 'mirrorToDisk' | 'diskToMirror' | 'mirrorToLayout';

/** The arguments that decide a workflow (a subset of MirrorOptions). */
export interface WorkflowArguments {
  destination: string;
  from?: string;
  workspace?: string;
  config?: string;
  plan?: string;
  dryRun?: boolean;
}

/** A run's workflow: what kind of run, where it writes, and where its state lives. */
export interface Workflow {
  mode: MirrorMode;
  dryRun: boolean;
  destination: Location;
  /** The archive directory a disk → mirror run pushes (absolute). */
  archiveDir?: string;
  /** The run's directory (absolute): plan, journal, lock, layouts and outputs. */
  workspace: string;
}

/** oc-mirror v2's workflow rules: which mode the arguments describe, or a usage error saying why none. */
export function workflowOf(o: Pick<WorkflowArguments, 'destination' | 'from' | 'workspace'>): MirrorMode {
  switch (locationKind(o.destination)) {
    case 'layout':
      if (o.from || o.workspace) {
        throw usageError(
          CommonError.FLAG_CONFLICT,
          'an oci: destination cannot be combined with --from or --workspace',
          {
            hint: 'an OCI layout keeps its own state: airgap mirror -c isc.yaml oci:/path/to/layout',
          },
        );
      }
      return 'mirrorToLayout';
    case 'directory':
      if (o.from || o.workspace) {
        throw usageError(
          CommonError.FLAG_CONFLICT,
          'a file:// destination cannot be combined with --from or --workspace',
          {
            hint: 'mirror to disk: airgap mirror -c isc.yaml file://<dir>; disk to registry: airgap mirror -c isc.yaml --from file://<dir> docker://<registry>',
          },
        );
      }
      return 'mirrorToDisk';
    case 'registry':
      return registryWorkflow(o);
  }
}

/** A registry destination: --from (an archive to push) or --workspace (registry → registry), exactly one. */
function registryWorkflow(o: Pick<WorkflowArguments, 'from' | 'workspace'>): MirrorMode {
  if (o.from && o.workspace) {
    throw usageError(CommonError.FLAG_CONFLICT, '--from and --workspace cannot be used together', {
      hint: 'use --from file://<archive dir> to push an archive, or --workspace file://<dir> to mirror registry to registry',
    });
  }
  if (!o.from && !o.workspace) {
    throw usageError(
      CommonError.FLAG_MISSING,
      'a docker:// destination needs --workspace (registry to registry) or --from (disk to registry)',
      {
        hint: 'e.g. airgap mirror -c isc.yaml --workspace file://./ws docker://mirror.example.com:8443/ocp',
      },
    );
  }
  return o.from ? 'diskToMirror' : 'mirrorToMirror';
}

/** -c or --plan say what to mirror: one of them, except for disk → mirror (the archive carries its plan). */
function checkWhatToMirror(o: Pick<WorkflowArguments, 'config' | 'plan'>, mode: MirrorMode): void {
  if (!o.config && !o.plan && mode !== 'diskToMirror') {
    throw usageError(
      CommonError.FLAG_MISSING,
      'say what to mirror: -c <ImageSetConfiguration> or --plan <plan.json>',
      {
        hint: 'write a configuration with `airgap mirror init`, or plan one with `airgap mirror plan -c isc.yaml`',
      },
    );
  }
  if (o.config && o.plan) {
    throw usageError(CommonError.FLAG_CONFLICT, '-c and --plan cannot be used together', {
      hint: 'a plan already holds what its configuration resolved to; give one of them',
    });
  }
}

/**
 * The workflow of a run's arguments: the mode, then what to mirror, then each Location parsed,
 * then the run's directories. Throws the usage error of the first thing that is wrong.
 */
export function resolveWorkflow(o: WorkflowArguments): Workflow {
  const mode = workflowOf(o);
  checkWhatToMirror(o, mode);
  const destination = parseLocation(o.destination, 'destination');
  const dryRun = Boolean(o.dryRun);
  switch (destination.kind) {
    case 'layout':
      return { mode, dryRun, destination, workspace: join(resolve(destination.path), '.airgap') };
    case 'directory':
      return { mode, dryRun, destination, workspace: join(resolve(destination.path), 'working-dir') };
    case 'registry': {
      if (mode === 'diskToMirror') {
        const archiveDir = resolve(parseLocation(o.from!, '--from').path);
        return { mode, dryRun, destination, archiveDir, workspace: join(archiveDir, 'working-dir') };
      }
      const workspace = resolve(parseLocation(o.workspace!, '--workspace').path);
      return { mode, dryRun, destination, workspace };
    }
  }
}
