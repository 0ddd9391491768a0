import { Command, Flags } from '@oclif/core';
import { AirgapError, CommonError, isAirgapError, messageOf } from '../util/errors.js';
import { explainFsError } from '../util/fs-errors.js';

/**
 * What makes a flag repeatable: one value per use (`--ca-file a.crt --ca-file b.crt`), as
 * oc-mirror's are. oclif's plain `multiple` takes every word after the flag up to the next flag,
 * so `--ca-file ca.crt docker://host/ocp` swallowed the destination; every repeatable flag of
 * every command spreads this instead (a test checks).
 */
export const REPEATABLE = { multiple: true, multipleNonGreedy: true } as const;

/**
 * The base of every airgap command: `--verbose` and `--json`, and the one place where errors
 * become output. AirgapErrors print as `error [CODE]: what (where)` plus a hint, and exit 2 for
 * usage errors or 1 for failures; other errors print their message only. Stacks need --verbose.
 */
export abstract class AirgapCommand extends Command {
  static override baseFlags = {
    verbose: Flags.boolean({
      description: 'Show stack traces and extra detail on errors.',
      helpGroup: 'GLOBAL',
    }),
  };

  protected wantsVerbose(): boolean {
    return this.argv.includes('--verbose');
  }

  protected wantsJson(): boolean {
    return this.argv.includes('--json');
  }

  /** Print data as JSON on stdout (the --json contract: one document, nothing else on stdout). */
  protected printJson(data: unknown): void {
    process.stdout.write(`${JSON.stringify(data, null, 2)}\n`);
  }

  protected override async catch(
    err: Error & { exitCode?: number; oclif?: { exit?: number } },
  ): Promise<unknown> {
    const verbose = this.wantsVerbose();
    // oclif's own parse errors (unknown flag, missing argument) are usage errors.
    if (!isAirgapError(err) && err.oclif?.exit !== undefined) {
      if (err.oclif.exit === 0) return;
      process.stderr.write(
        `error: ${err.message}\n  hint: see \`airgap ${this.id?.replaceAll(':', ' ') ?? ''} --help\`\n`,
      );
      if (verbose && err.stack) process.stderr.write(`${err.stack}\n`);
      process.exitCode = 2;
      return;
    }
    const e = isAirgapError(err)
      ? err
      : (explainFsError(err) ?? new AirgapError(CommonError.INTERNAL, messageOf(err), { cause: err }));
    if (this.wantsJson()) {
      this.printJson({ error: e.toJSON() });
    }
    process.stderr.write(`error [${e.code}]: ${e.describe()}\n`);
    if (verbose && err.stack) process.stderr.write(`${err.stack}\n`);
    else if (e.code === CommonError.INTERNAL)
      process.stderr.write('  (run with --verbose for the stack trace)\n');
    process.exitCode = e.exitCode;
  }
}
