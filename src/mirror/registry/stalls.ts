/**
 * A registry that stops answering. The agent gives every phase of a request a deadline (net/http.ts:
 * connecting, the response headers, each wait for body bytes), and a blob read also fails when the
 * source sends less than a minimum rate (copy/reader.ts); each such failure is a stall. Stalls are
 * counted per registry: a response read to its end resets the count, and {@link MAX_STALLS} in a
 * row mean the registry is given up for the rest of the run, so every request to it fails at once
 * with that reason and the images of other registries go on. Each stall is told to the user as it
 * happens, naming the registry and the request, so a silent wait is never silent on screen.
 */
import { AirgapError, messageOf } from '../../util/errors.js';
import { stallCode } from '../../net/retry.js';
import { MirrorError } from '../errors.js';
import { RegistryError } from './errors.js';

/** Stalls in a row (no response read to its end between them) after which a registry is given up. */
const MAX_STALLS = 3;

/** True for a stall: a phase deadline passed, or a source was too slow (copy/reader.ts). */
export function isStall(e: unknown): boolean {
  return (
    stallCode(e) !== undefined ||
    (e instanceof AirgapError &&
      (e.code === MirrorError.MIRROR_SOURCE_TOO_SLOW || e.code === MirrorError.REGISTRY_STALLED))
  );
}

/** What one stall was, in words: "no response for 60 s". */
export function stallReason(e: unknown, stallMs: number): string {
  if (e instanceof AirgapError) return messageOf(e);
  const secs = `${Math.round(stallMs / 100) / 10} s`;
  switch (stallCode(e)) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `no connection within ${secs}`;
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `no response for ${secs}`;
    case 'UND_ERR_BODY_TIMEOUT':
      return `no bytes for ${secs}`;
    default:
      return messageOf(e);
  }
}

/** The stalls of one registry. */
export class StallWatch {
  private inRow = 0;
  /** Set once the registry is given up: every later request fails with this. */
  givenUp?: RegistryError;

  constructor(
    private readonly registry: string,
    readonly stallMs: number,
    private readonly notice: (message: string) => void = () => undefined,
  ) {}

  /** A response was read to its end: the registry answers. */
  answered(): void {
    if (!this.givenUp) this.inRow = 0;
  }

  /**
   * `what` stalled with `e`. Returns the error to report for this request: REGISTRY_STALLED, or
   * REGISTRY_NOT_ANSWERING once the registry is given up.
   */
  stalled(what: string, e: unknown): RegistryError {
    if (this.givenUp) return this.givenUp;
    this.inRow++;
    const reason = stallReason(e, this.stallMs);
    if (this.inRow >= MAX_STALLS) {
      this.givenUp = new RegistryError(
        MirrorError.REGISTRY_NOT_ANSWERING,
        `gave up on ${this.registry}: it stopped answering (${this.inRow} stalls in a row, the last: ${what}: ${reason})`,
        {
          registry: this.registry,
          temporary: true,
          where: what,
          hint: `check ${this.registry} and the network (or proxy) to it, then re-run (it resumes); --stall-timeout sets how long a silence is tolerated`,
          cause: e,
        },
      );
      this.notice(`${this.registry} is not answering: giving up on it for this run (${reason})`);
      return this.givenUp;
    }
    this.notice(
      `${this.registry} is not answering: ${what}: ${reason} (stall ${this.inRow} of ${MAX_STALLS} before giving up on it)`,
    );
    return new RegistryError(MirrorError.REGISTRY_STALLED, `${what}: ${this.registry} stalled: ${reason}`, {
      registry: this.registry,
      temporary: true,
      where: what,
      hint: 'the registry accepted the request and then sent nothing in time; re-run to resume, or raise --stall-timeout for a slow link',
      cause: e,
    });
  }
}
