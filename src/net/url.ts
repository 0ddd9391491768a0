/**
 * URLs from outside (a chart repository, an update service, a stream file, a download): one way to
 * show them and one rule for credentials written into them. A URL is shown only without its user
 * name and password ({@link shownUrl}); a URL that carries them is refused before any request
 * ({@link parseHttpUrl}), so a password given in a URL is never sent, printed, written into a plan
 * or a report, nor carried across the air gap. Credentials come from the auth file, per host.
 */
import { usageError } from '../util/errors.js';
import { NetError } from './errors.js';

/** `scheme://user:password@` at the start of a URL-looking string. */
const USERINFO = /^([a-z][a-z0-9+.-]*:\/\/)[^/?#@]*@/i;

/** A URL without its credentials, for messages and files; a string that is no URL loses any `user:pass@`. */
export function shownUrl(u: URL | string): string {
  if (typeof u === 'string') {
    if (!URL.canParse(u)) return u.replace(USERINFO, '$1');
    u = new URL(u);
  }
  const c = new URL(u.href);
  c.username = '';
  c.password = '';
  return c.href;
}

/** Whether a URL (or a URL-looking string) carries a user name or password. */
export function hasUrlCredentials(u: URL | string): boolean {
  if (typeof u !== 'string') return u.username !== '' || u.password !== '';
  return URL.canParse(u) ? hasUrlCredentials(new URL(u)) : USERINFO.test(u);
}

/** Why a URL with credentials is refused, and (for chart repositories) where they go instead. */
export function urlCredentialsHint(host?: string): string {
  const why =
    'remove the user name and password from the URL: airgap never keeps credentials in URLs, which end up in plans, reports and archives';
  return host
    ? `${why}; put them in the auth file instead, as auths["${host}"] (containers' auth.json), as for a registry`
    : why;
}

/**
 * `raw` parsed as an http(s) URL, or `<prefix>_URL_INVALID` (exit 2): not a URL, another scheme,
 * or credentials in it (named without them).
 */
export function parseHttpUrl(raw: string, prefix: string, hint = 'write an http:// or https:// URL'): URL {
  if (!URL.canParse(raw)) throw usageError(`${prefix}_URL_INVALID`, `not a URL: ${shownUrl(raw)}`, { hint });
  const target = new URL(raw);
  if (target.protocol !== 'http:' && target.protocol !== 'https:')
    throw usageError(`${prefix}_URL_INVALID`, `not an http(s) URL: ${shownUrl(target)}`, { hint });
  if (hasUrlCredentials(target)) {
    throw usageError(
      NetError.URL_CREDENTIALS,
      `${shownUrl(target)} is written with a user name and password; they were not sent`,
      { hint: urlCredentialsHint() },
    );
  }
  return target;
}
