/**
 * Sprig's path and URL functions (sprig.ts): base, dir, clean, ext, isAbs as Go's path package
 * gives them (slash-separated, lexical), the os* forms as path/filepath does on Linux (the same),
 * and urlParse/urlJoin as Go's net/url reads and writes a URL.
 */
import { goString } from './convert.js';
import { f, type Add } from './sprig-def.js';
import { isMap, typeOf, type GoMap } from './values.js';

/** Go's path.Clean: the shortest equivalent path, lexically (`a/../b/./c/` is `b/c`, "" is "."). */
function cleanPath(p: string): string {
  if (p === '') return '.';
  const rooted = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out.at(-1) !== '..') out.pop();
      else if (!rooted) out.push('..');
    } else out.push(seg);
  }
  const joined = out.join('/');
  if (rooted) return `/${joined}`;
  return joined === '' ? '.' : joined;
}

/** Go's path.Base: the last element, trailing slashes removed ("" is ".", "///" is "/"). */
function basePath(p: string): string {
  if (p === '') return '.';
  const trimmed = p.replace(/\/+$/, '');
  if (trimmed === '') return '/';
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

/** Go's path.Dir: all but the last element, cleaned. */
function dirPath(p: string): string {
  return cleanPath(p.slice(0, p.lastIndexOf('/') + 1));
}

/** Go's path.Ext: the suffix from the last dot of the last element, or "". */
function extPath(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

// ---- URLs (net/url)

const HEX = '0123456789ABCDEF';

/** Go's url escaping: bytes outside `keep` (and the unreserved ones) as %XX. */
function escape(s: string, keep: string): string {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c) || keep.includes(c)) out += c;
    else out += `%${HEX[b >> 4]}${HEX[b & 15]}`;
  }
  return out;
}

/** Go's url unescaping of %XX (a bad escape is Go's error, naming the URL `raw`). */
function unescape(s: string, raw: string): string {
  const bad = /%(?![0-9A-Fa-f]{2})/.exec(s);
  if (bad) {
    const esc = JSON.stringify(s.slice(bad.index, bad.index + 3));
    throw new Error(`unable to parse url: parse ${JSON.stringify(raw)}: invalid URL escape ${esc}`);
  }
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of s.matchAll(/%([0-9A-Fa-f]{2})/g)) {
    parts.push(Buffer.from(s.slice(last, m.index)), Buffer.from([parseInt(m[1]!, 16)]));
    last = m.index + 3;
  }
  parts.push(Buffer.from(s.slice(last)));
  return Buffer.concat(parts).toString('utf8');
}

interface Url {
  scheme: string;
  opaque: string;
  user?: { name: string; password?: string };
  host: string;
  path: string;
  query: string;
  fragment: string;
}

/** Go's url.Parse, for what charts give it (scheme, userinfo, host, path, query, fragment). */
function parseUrl(raw: string): Url {
  const u: Url = { scheme: '', opaque: '', host: '', path: '', query: '', fragment: '' };
  let rest = raw;
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    u.fragment = unescape(rest.slice(hash + 1), raw);
    rest = rest.slice(0, hash);
  }
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(rest);
  if (scheme) {
    u.scheme = scheme[1]!.toLowerCase();
    rest = rest.slice(scheme[0].length);
  } else if (/^[^/?]*:/.test(rest) && !rest.startsWith('/'))
    throw new Error(
      `unable to parse url: parse ${JSON.stringify(raw)}: first path segment in URL cannot contain colon`,
    );
  const q = rest.indexOf('?');
  if (q >= 0) {
    u.query = rest.slice(q + 1);
    rest = rest.slice(0, q);
  }
  if (u.scheme !== '' && !rest.startsWith('/')) {
    u.opaque = rest;
    return u;
  }
  if ((u.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash >= 0 ? rest.slice(2, slash) : rest.slice(2);
    rest = slash >= 0 ? rest.slice(slash) : '';
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      const info = authority.slice(0, at);
      const colon = info.indexOf(':');
      u.user =
        colon >= 0
          ? { name: unescape(info.slice(0, colon), raw), password: unescape(info.slice(colon + 1), raw) }
          : { name: unescape(info, raw) };
    }
    u.host = unescape(authority.slice(at + 1), raw);
  }
  u.path = unescape(rest, raw);
  return u;
}

/** Go's Userinfo.String: the name and password escaped. */
function userText(user: NonNullable<Url['user']>): string {
  const name = escape(user.name, "!$&'()*+,;=");
  return user.password === undefined ? name : `${name}:${escape(user.password, "!$&'()*+,;=")}`;
}

/** Go's URL.String. */
function formatUrl(u: Url): string {
  let out = u.scheme === '' ? '' : `${u.scheme}:`;
  if (u.opaque !== '') out += u.opaque;
  else {
    if (u.scheme !== '' || u.host !== '' || u.user) {
      if (u.host !== '' || u.path !== '' || u.user) out += '//';
      if (u.user) out += `${userText(u.user)}@`;
      out += escape(u.host, "!$&'()*+,;=:[]%");
    }
    const path = escape(u.path, "!$&'()*+,;=:@/");
    if (path !== '' && !path.startsWith('/') && u.host !== '') out += '/';
    else if (out === '' && /^[^/]*:/.test(path)) out += './';
    out += path;
  }
  if (u.query !== '') out += `?${u.query}`;
  if (u.fragment !== '') out += `#${escape(u.fragment, "!$&'()*+,;=:@/?")}`;
  return out;
}

/** Go's Hostname: the host without its port (and an IPv6 literal without brackets). */
function hostname(host: string): string {
  const v6 = /^\[([^\]]*)\]/.exec(host);
  if (v6) return v6[1]!;
  const colon = host.lastIndexOf(':');
  return colon >= 0 ? host.slice(0, colon) : host;
}

/** sprig's urlParse: the URL's parts as a dict of strings. */
function urlParse(v: unknown): GoMap {
  const u = parseUrl(goString(v));
  return {
    scheme: u.scheme,
    host: u.host,
    hostname: hostname(u.host),
    path: u.path,
    query: u.query,
    opaque: u.opaque,
    fragment: u.fragment,
    userinfo: u.user ? userText(u.user) : '',
  };
}

/** One part of urlJoin's dict: a string, or "" when missing (another type is sprig's error). */
function part(d: GoMap, key: string): string {
  if (!Object.hasOwn(d, key)) return '';
  const v = d[key];
  if (typeof v !== 'string') {
    const kind = v === null || v === undefined ? 'invalid' : typeOf(v);
    throw new Error(`unable to parse ${key} key, must be of type string, but ${kind} found`);
  }
  return v;
}

/** sprig's urlJoin: a URL written from urlParse's dict. */
function urlJoin(v: unknown): string {
  if (!isMap(v)) throw new Error(`wrong type for value; expected map[string]interface {}; got ${typeOf(v)}`);
  const info = part(v, 'userinfo');
  const u: Url = {
    scheme: part(v, 'scheme'),
    host: part(v, 'host'),
    path: part(v, 'path'),
    query: part(v, 'query'),
    opaque: part(v, 'opaque'),
    fragment: part(v, 'fragment'),
  };
  if (info !== '') u.user = parseUrl(`proto://${info}@host`).user;
  return formatUrl(u);
}

/** Add the path and URL functions. */
export function addPathFunctions(add: Add): void {
  add(
    ['base', 'osBase'],
    f(1, 1, (p: unknown) => basePath(goString(p))),
  );
  add(
    ['dir', 'osDir'],
    f(1, 1, (p: unknown) => dirPath(goString(p))),
  );
  add(
    ['clean', 'osClean'],
    f(1, 1, (p: unknown) => cleanPath(goString(p))),
  );
  add(
    ['ext', 'osExt'],
    f(1, 1, (p: unknown) => extPath(goString(p))),
  );
  add(
    ['isAbs', 'osIsAbs'],
    f(1, 1, (p: unknown) => goString(p).startsWith('/')),
  );
  add('urlParse', f(1, 1, urlParse));
  add('urlJoin', f(1, 1, urlJoin));
}
