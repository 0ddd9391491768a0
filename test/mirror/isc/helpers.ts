import { AirgapError } from '../../../src/util/errors.js';
import { parseImageSetConfig, type IscProblem, type ParseOptions } from '../../../src/mirror/isc/index.js';

/** Join lines, so a test can count line numbers: lines[0] is line 1. */
export function yamlOf(...lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

/** The AirgapError that parsing `text` throws; fails the test if parsing succeeds. */
export function parseError(text: string, options: ParseOptions = {}): AirgapError {
  try {
    parseImageSetConfig(text, 'isc.yaml', options);
  } catch (e) {
    if (e instanceof AirgapError) return e;
    throw e;
  }
  throw new Error('expected parseImageSetConfig to throw');
}

/** The problems listed in a parse error (one even when there is only one). */
export function problemsOf(e: AirgapError): IscProblem[] {
  const problems = (e.details as { problems?: IscProblem[] } | undefined)?.problems;
  if (!problems) throw new Error(`no problems in error details: ${e.message}`);
  return problems;
}

/** Header lines 1-3 of a valid ImageSetConfiguration. */
export const HEADER = ['kind: ImageSetConfiguration', 'apiVersion: mirror.openshift.io/v2alpha1', 'mirror:'];
