/**
 * Template errors, worded as Go's text/template words them:
 *
 * - parse: `template: <file>:<line>:<col>: <what>`
 * - execution: `template: <file>:<line>:<col>: executing "<template>" at <<node>>: <what>`
 *
 * The column is Go's: the byte offset in the line, from 0. A `fail` or `required` message is kept
 * apart (`failure`) through every include and tpl that wraps it, so the chart renderer can say it
 * as Helm does (`execution error at (<file>:<line>:<col>): <message>`).
 */
import { AirgapError } from '../../../util/errors.js';
import { MirrorError } from '../../errors.js';

export class TemplateError extends AirgapError {
  constructor(
    code: MirrorError,
    message: string,
    /** `<file>:<line>:<col>` of the outermost template the error passed through. */
    readonly location: string,
    /** A `fail` or `required` message, as the chart author wrote it. */
    readonly failure?: string,
  ) {
    super(code, message, { where: location, exitCode: 2 });
  }
}

/** What `fail` and `required` throw: the author's message, carried up unchanged. */
export class TemplateFailure extends Error {
  constructor(readonly failure: string) {
    super(failure);
  }
}

/** `<file>:<line>:<col>` of a byte offset in a source text (Go's ErrorContext). */
export function locate(file: string, source: string, pos: number): string {
  const before = source.slice(0, pos);
  const line = 1 + (before.match(/\n/g)?.length ?? 0);
  const lineStart = before.lastIndexOf('\n') + 1;
  const col = Buffer.byteLength(before.slice(lineStart), 'utf8');
  return `${file}:${line}:${col}`;
}

export function parseError(file: string, source: string, pos: number, what: string): TemplateError {
  const where = locate(file, source, pos);
  return new TemplateError(MirrorError.HELM_TEMPLATE_PARSE, `template: ${where}: ${what}`, where);
}

/** Input quoted in a message, cut to `max` characters (`abc…`): a message stays readable. */
export function clip(s: string, max = 80): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** A message cut in its middle to `max` characters: where it starts and the innermost cause at its end stay. */
export function clipMiddle(s: string, max = 1000): string {
  if (s.length <= max) return s;
  const head = Math.floor(max / 3);
  return `${s.slice(0, head)} … ${s.slice(s.length - (max - head - 3))}`;
}
