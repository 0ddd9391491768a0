/**
 * Sprig's hashing and random-bytes functions that need real cryptography (sprig.ts): bcrypt and
 * htpasswd (bcryptjs, cost 10 and the `$2a$` prefix as Go's x/crypto/bcrypt writes), randBytes,
 * sha512sum, b32dec. A bcrypt costs about as much time as 200 thousand template steps, and is
 * paid for as such (budget.ts), so a chart cannot hash in a loop for minutes.
 */
import bcryptjs from 'bcryptjs';
import { createHash, randomBytes } from 'node:crypto';
import { checkChars } from './budget.js';
import { goInt, goString } from './convert.js';
import { f, type Add } from './sprig-def.js';

/** Go's bcrypt.DefaultCost. */
const BCRYPT_COST = 10;
/** What one bcrypt at cost 10 costs, in template steps (about 70 ms; a step is about 50 ns). */
const BCRYPT_STEPS = 200_000;

/** sprig's bcrypt: the hash, or sprig's message (not an error) for a password bcrypt refuses. */
function bcrypt(password: string): string {
  if (Buffer.byteLength(password) > 72)
    return 'failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes';
  const salt = bcryptjs.genSaltSync(BCRYPT_COST).replace(/^\$2b\$/, '$2a$');
  return bcryptjs.hashSync(password, salt);
}

/** sprig's htpasswd (v3.3, as Helm 3 has it): `user:<bcrypt>`; a user with a colon is a message. */
function htpasswd(user: string, password: string): string {
  if (user.includes(':')) return `invalid username: ${user}`;
  return `${user}:${bcrypt(password)}`;
}

/** sprig's randBytes: `n` random bytes in base64 (Go panics for a negative count). */
function randBytes(n: unknown): string {
  const count = goInt(n);
  if (count < 0n) throw new Error('runtime error: makeslice: len out of range');
  checkChars(`randBytes ${count}`, (count * 4n) / 3n + 4n);
  return randomBytes(Number(count)).toString('base64');
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/**
 * Go's base32.StdEncoding.DecodeString: padded blocks of 8; newlines are skipped. A bad character
 * is Go's CorruptInputError, which sprig's b32dec returns as its text.
 */
export function base32Decode(text: string): string {
  const s = text.replace(/[\r\n]/g, '');
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  let end = s.length;
  while (end > 0 && s[end - 1] === '=') end--;
  const pad = s.length - end;
  const corrupt = (at: number) => `illegal base32 data at input byte ${at}`;
  if (s.length % 8 !== 0) return corrupt(s.length - (s.length % 8));
  if (![0, 1, 3, 4, 6].includes(pad)) return corrupt(end);
  for (let i = 0; i < end; i++) {
    const v = BASE32.indexOf(s[i]!);
    if (v < 0) return corrupt(i);
    value = (value << 5) | v;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 255);
      bits -= 8;
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Add the bcrypt, htpasswd, randBytes, sha512sum and b32dec functions. */
export function addCryptoFunctions(add: Add): void {
  add(
    'bcrypt',
    f(
      1,
      1,
      (s: unknown) => bcrypt(goString(s)),
      () => BCRYPT_STEPS,
    ),
  );
  add(
    'htpasswd',
    f(
      2,
      2,
      (u: unknown, p: unknown) => htpasswd(goString(u), goString(p)),
      () => BCRYPT_STEPS,
    ),
  );
  add('randBytes', f(1, 1, randBytes));
  add(
    'sha512sum',
    f(1, 1, (s: unknown) => createHash('sha512').update(goString(s)).digest('hex')),
  );
  add(
    'b32dec',
    f(1, 1, (s: unknown) => base32Decode(goString(s))),
  );
}
