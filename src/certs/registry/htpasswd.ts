/**
 * The registry's user and password: the user name and the password file checked (shared with
 * `airgap certs pull-secret`), and the htpasswd line the registry checks them against, bcrypt as
 * `htpasswd -B` writes it (bcryptjs: no native module to build on the bastion).
 */
import bcrypt from 'bcryptjs';
import { usageError, CommonError } from '../../util/errors.js';
import { readInputFile } from '../inspect.js';
import { CertsError } from '../errors.js';

/**
 * bcrypt cost of the htpasswd entry. The registry checks the hash on every request it serves (it
 * keeps no session), so the cost is paid per blob and per manifest: 10 is bcrypt's usual default,
 * about 50 ms of one core per request, and 2^5 times stronger than `htpasswd -B`'s default of 5.
 */
const HTPASSWD_BCRYPT_COST = 10;
/** bcrypt uses the first 72 bytes of a password and ignores the rest. */
export const BCRYPT_MAX_PASSWORD_BYTES = 72;

/**
 * Check a registry user name: not empty, no colon (Basic auth and htpasswd split there), no control
 * characters, no spaces at either end, and not starting with `#` (a comment in htpasswd).
 */
export function checkUsername(username: string, flag = '--username'): string {
  const bad = (why: string): never => {
    throw usageError(CommonError.FLAG_INVALID, `${flag} is not a usable registry user name: ${why}`, {
      hint: 'use letters, digits and punctuation other than ":", e.g. --username admin',
    });
  };
  if (username === '') bad('it is empty');
  if (username.includes(':')) bad('it contains ":"');
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(username)) bad('it contains a control character');
  if (username.trim() !== username) bad('it starts or ends with a space');
  if (username.startsWith('#')) bad('it starts with "#", which htpasswd reads as a comment');
  return username;
}

/**
 * Read a password from a file: the whole file, less one final newline (`\n` or `\r\n`, as `echo`
 * or an editor leaves it). It must not be empty and must be one line. The password never appears
 * in an error.
 */
export async function readPasswordFile(path: string, flag = '--password-file'): Promise<string> {
  let password = (await readInputFile(path, flag, 'password file')).toString('utf8');
  if (password.endsWith('\r\n')) password = password.slice(0, -2);
  else if (password.endsWith('\n')) password = password.slice(0, -1);
  if (password === '') {
    throw usageError(CertsError.PASSWORD_INVALID, `the password file ${flag} ${path} is empty`, {
      where: path,
      hint: 'write the password into the file, e.g. (umask 077; printf %s "$PASSWORD" > registry.pass)',
    });
  }
  if (/[\r\n]/.test(password)) {
    throw usageError(
      CertsError.PASSWORD_INVALID,
      `the password file ${flag} ${path} holds more than one line`,
      {
        where: path,
        hint: 'put only the password in the file, on one line',
      },
    );
  }
  return password;
}

/** One htpasswd line, `user:$2y$<cost>$…\n`, exactly as `htpasswd -B` writes it. */
export function htpasswdEntry(username: string, password: string, cost = HTPASSWD_BCRYPT_COST): string {
  checkUsername(username);
  if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_PASSWORD_BYTES) {
    // bcrypt would silently use only the first 72 bytes; say so instead.
    throw usageError(
      CertsError.PASSWORD_INVALID,
      `the password is longer than ${BCRYPT_MAX_PASSWORD_BYTES} bytes, and bcrypt ignores everything after that`,
      { hint: `use a password of at most ${BCRYPT_MAX_PASSWORD_BYTES} bytes` },
    );
  }
  // bcryptjs writes the $2b$ prefix; $2y$ (what htpasswd writes) names the same algorithm.
  const salt = bcrypt.genSaltSync(cost).replace(/^\$2b\$/, '$2y$');
  return `${username}:${bcrypt.hashSync(password, salt)}\n`;
}
