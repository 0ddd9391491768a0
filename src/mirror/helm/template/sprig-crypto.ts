/**
 * Sprig's hashing and random-bytes functions that need real cryptography (sprig.ts): bcrypt and
 * htpasswd (bcryptjs, cost 10 and the `$2a$` prefix as Go's x/crypto/bcrypt writes), randBytes,
 * sha512sum, b32dec. A bcrypt costs about as much time as 200 thousand template steps, and is
 * paid for as such (budget.ts), so a chart cannot hash in a loop for minutes.
 */
import bcryptjs from 'bcryptjs';
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  scryptSync,
} from 'node:crypto';
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
function base32Decode(text: string): string {
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

// ---- derivePassword: the Master Password algorithm (scrypt, then HMAC-SHA256 picks the characters)

const PASSWORD_TEMPLATES: Record<string, string[]> = {
  maximum: ['anoxxxxxxxxxxxxxxxxx', 'axxxxxxxxxxxxxxxxxno'],
  long: [
    'CvcvnoCvcvCvcv',
    'CvcvCvcvnoCvcv',
    'CvcvCvcvCvcvno',
    'CvccnoCvcvCvcv',
    'CvccCvcvnoCvcv',
    'CvccCvcvCvcvno',
    'CvcvnoCvccCvcv',
    'CvcvCvccnoCvcv',
    'CvcvCvccCvcvno',
    'CvcvnoCvcvCvcc',
    'CvcvCvcvnoCvcc',
    'CvcvCvcvCvccno',
    'CvccnoCvccCvcv',
    'CvccCvccnoCvcv',
    'CvccCvccCvcvno',
    'CvcvnoCvccCvcc',
    'CvcvCvccnoCvcc',
    'CvcvCvccCvccno',
    'CvccnoCvcvCvcc',
    'CvccCvcvnoCvcc',
    'CvccCvcvCvccno',
  ],
  medium: ['CvcnoCvc', 'CvcCvcno'],
  short: ['Cvcn'],
  basic: ['aaanaaan', 'aannaaan', 'aaannaaa'],
  pin: ['nnnn'],
};

const TEMPLATE_CHARACTERS: Record<string, string> = {
  V: 'AEIOU',
  C: 'BCDFGHJKLMNPQRSTVWXYZ',
  v: 'aeiou',
  c: 'bcdfghjklmnpqrstvwxyz',
  A: 'AEIOUBCDFGHJKLMNPQRSTVWXYZ',
  a: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz',
  n: '0123456789',
  o: "@&%?,=[]_:-+*$#!'^~;()/.",
  x: 'AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()',
};

const MASTER_PASSWORD_SEED = 'com.lyndir.masterpassword';

/** A string with its UTF-8 length before it (big-endian uint32), as the algorithm salts. */
const lengthPrefixed = (s: string) => {
  const b = Buffer.from(s);
  const n = Buffer.alloc(4);
  n.writeUInt32BE(b.length);
  return Buffer.concat([n, b]);
};

/** sprig's derivePassword: the site's password for this user, counter and template (deterministic). */
function derivePassword(counter: bigint, kind: string, password: string, user: string, site: string): string {
  const templates = PASSWORD_TEMPLATES[kind];
  if (!templates) return `cannot find password template ${kind}`;
  const seedText = Buffer.from(MASTER_PASSWORD_SEED);
  const key = scryptSync(password, Buffer.concat([seedText, lengthPrefixed(user)]), 64, {
    N: 32768,
    r: 8,
    p: 2,
    maxmem: 64 * 1024 * 1024,
  });
  const count = Buffer.alloc(4);
  count.writeUInt32BE(Number(BigInt.asUintN(32, counter)));
  const seed = createHmac('sha256', key)
    .update(Buffer.concat([seedText, lengthPrefixed(site), count]))
    .digest();
  const template = templates[seed[0]! % templates.length]!;
  return Array.from(template, (c, i) => {
    const chars = TEMPLATE_CHARACTERS[c]!;
    return chars[seed[i + 1]! % chars.length];
  }).join('');
}

// ---- encryptAES / decryptAES: AES-256-CBC, the password as the key (zero-padded), PKCS#7 padding

const aesKey = (password: string) => {
  const key = Buffer.alloc(32);
  Buffer.from(password).copy(key, 0, 0, 32);
  return key;
};

/** sprig's encryptAES: base64 of a random IV and the ciphertext ("" stays ""). */
function encryptAES(password: string, plaintext: string): string {
  if (plaintext === '') return '';
  checkChars('encryptAES', ((plaintext.length + 32) * 4) / 3);
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', aesKey(password), iv);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final()]).toString('base64');
}

/** sprig's decryptAES: the plaintext, the padding taken off unchecked (as sprig does). */
function decryptAES(password: string, text: string): string {
  if (text === '') return '';
  const crypt = Buffer.from(text, 'base64');
  if (crypt.length < 16) throw new Error('runtime error: slice bounds out of range');
  const body = crypt.subarray(16);
  if (body.length % 16 !== 0) throw new Error('crypto/cipher: input not full blocks');
  const decipher = createDecipheriv('aes-256-cbc', aesKey(password), crypt.subarray(0, 16));
  decipher.setAutoPadding(false);
  const out = Buffer.concat([decipher.update(body), decipher.final()]);
  const pad = out.length > 0 ? out[out.length - 1]! : 0;
  if (out.length === 0 || pad > out.length) throw new Error('runtime error: slice bounds out of range');
  return out.subarray(0, out.length - pad).toString('utf8');
}

/** Add the bcrypt, htpasswd, randBytes, sha512sum, b32dec, derivePassword and AES functions. */
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
    'derivePassword',
    f(
      5,
      5,
      (n: unknown, kind: unknown, pw: unknown, user: unknown, site: unknown) =>
        derivePassword(goInt(n), goString(kind), goString(pw), goString(user), goString(site)),
      () => BCRYPT_STEPS,
    ),
  );
  add(
    'encryptAES',
    f(2, 2, (pw: unknown, s: unknown) => encryptAES(goString(pw), goString(s))),
  );
  add(
    'decryptAES',
    f(2, 2, (pw: unknown, s: unknown) => decryptAES(goString(pw), goString(s))),
  );
  add(
    'b32dec',
    f(1, 1, (s: unknown) => base32Decode(goString(s))),
  );
}
