import { createHash, type Hash } from 'node:crypto';
import { AirgapError } from '../util/errors.js';
import { MirrorError } from './errors.js';

declare const validDigest: unique symbol;

/**
 * A content digest known to be well formed: `algorithm:hex` with one of the algorithms go-digest
 * validates (sha256, sha384, sha512) and exactly that many lowercase hex digits. Everything that
 * comes from outside (manifests, registry headers, plans, journals, layouts, archives,
 * references) is one of these only after {@link parseDigest}; only a Digest may become part of a
 * file path or a URL, so no digest a registry or an archive sends can name `../../x`.
 */
export type Digest = string & { readonly [validDigest]: true };

const DIGEST_FORMS = /^(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})$/;

/** Whether `v` is a well-formed digest. */
export function isDigest(v: unknown): v is Digest {
  return typeof v === 'string' && DIGEST_FORMS.test(v);
}

/**
 * `v` as a Digest, or MIRROR_DIGEST_INVALID naming `where` (`manifest … layers[2]`, `plan.json
 * images[4].digest`). The value is shown JSON-quoted and cut short: it came from outside.
 */
export function parseDigest(v: unknown, where: string): Digest {
  if (isDigest(v)) return v;
  const shown = JSON.stringify(typeof v === 'string' && v.length > 80 ? `${v.slice(0, 80)}…` : v);
  throw new AirgapError(MirrorError.MIRROR_DIGEST_INVALID, `${where}: ${shown} is not a digest`, {
    hint: 'a digest is algorithm:hex, e.g. sha256: and 64 lowercase hex digits; the content that names it was not read or written',
  });
}

/** `sha256:<hex>` of some bytes. */
export function sha256Digest(data: Uint8Array | string): Digest {
  return `sha256:${createHash('sha256').update(data).digest('hex')}` as Digest;
}

/**
 * The algorithm and hex of a digest, checked: the one way a digest becomes a file name
 * (`blobs/<algorithm>/<hex>`).
 */
export function digestParts(digest: string, where = 'digest'): { algorithm: string; hex: string } {
  const d = parseDigest(digest, where);
  const i = d.indexOf(':');
  return { algorithm: d.slice(0, i), hex: d.slice(i + 1) };
}

/** The hex part of a digest, checked (see {@link digestParts}). */
export function digestHex(digest: string): string {
  return digestParts(digest).hex;
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
