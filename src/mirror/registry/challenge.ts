/** A parsed `WWW-Authenticate` challenge (RFC 7235): `Bearer realm="…",service="…",scope="…"` or `Basic realm="…"`. */
export interface Challenge {
  scheme: 'basic' | 'bearer';
  params: Record<string, string>;
}

export function parseChallenge(value: string | undefined): Challenge | undefined {
  if (!value) return undefined;
  const m = /^\s*(\w+)\s*(.*)$/s.exec(value);
  if (!m) return undefined;
  const scheme = m[1]!.toLowerCase();
  if (scheme !== 'basic' && scheme !== 'bearer') return undefined;
  const params: Record<string, string> = {};
  const re = /([\w-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g;
  for (let p = re.exec(m[2]!); p; p = re.exec(m[2]!)) {
    params[p[1]!.toLowerCase()] = p[2] !== undefined ? p[2].replace(/\\(.)/g, '$1') : p[3]!;
  }
  return { scheme, params };
}
