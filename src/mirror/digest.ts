import { createHash, type Hash } from 'node:crypto';
import { AirgapError } from '../util/errors.js';
import { MirrorError } from './errors.js';

/** `sha256:<hex>` of some bytes. */
export function sha256Digest(data: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

/** The hex part of a sha256 digest. */
export function digestHex(digest: string): string {
  const i = digest.indexOf(':');
  return digest.slice(i + 1);
}

/**
 * Hashes bytes as they stream past and checks them against the expected digest and size at the end.
 * Only sha256 is supported (all OpenShift content uses it); anything else is refused up front.
 */
export class DigestVerifier {
  private readonly hash: Hash;
  bytes = 0;

  constructor(
    readonly expected: string,
    readonly expectedSize?: number,
  ) {
    if (!expected.startsWith('sha256:')) {
      throw new AirgapError(
        MirrorError.MIRROR_DIGEST_UNSUPPORTED,
        `digest algorithm of ${expected} is not supported`,
        {
          hint: 'only sha256 content can be mirrored',
        },
      );
    }
    this.hash = createHash('sha256');
  }

  update(chunk: Uint8Array): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
  }

  /** Throws MIRROR_DIGEST_MISMATCH (or MIRROR_SIZE_MISMATCH) when the content is not what was asked for. */
  verify(what: string): void {
    if (this.expectedSize !== undefined && this.bytes !== this.expectedSize) {
      throw new AirgapError(
        MirrorError.MIRROR_SIZE_MISMATCH,
        `${what}: got ${this.bytes} bytes, the descriptor says ${this.expectedSize}`,
        {
          hint: 'the source sent truncated or padded content; it was not stored. Retry, or check the source registry',
        },
      );
    }
    const got = `sha256:${this.hash.digest('hex')}`;
    if (got !== this.expected) {
      throw new AirgapError(
        MirrorError.MIRROR_DIGEST_MISMATCH,
        `${what}: content hashes to ${got}, expected ${this.expected}`,
        {
          hint: 'the bytes were corrupted in transit or at the source; they were not stored. Retry, or check the source registry',
        },
      );
    }
  }
}
