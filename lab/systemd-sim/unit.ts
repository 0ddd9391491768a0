/**
 * Unit files as systemd 252 reads them: sections of `Key=Value` lines, `#`/`;` comments, a trailing
 * backslash continuing a line (comment lines inside a continuation are skipped), an empty
 * assignment resetting a list; and Exec lines split into commands the way systemd does (quotes,
 * C escapes, the `-@:+!` prefixes, specifiers, `$VAR` and `${VAR}`).
 *
 * Runs under Node's type stripping (no enums, no parameter properties; imports end in .js and are
 * mapped to .ts by ts-resolve.mjs).
 */

/** `section → key → values in order` (a key may repeat). */
export type UnitFile = Map<string, Map<string, string[]>>;

/** Parse a unit file's text. */
export function parseUnitFile(text: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i]!.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      line = line.slice(0, -1) + ' ';
      const next = lines[++i]!.trim();
      if (next.startsWith('#') || next.startsWith(';')) {
        line = line.trimEnd() + '\\';
        continue;
      }
      line += next;
    }
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = unit.get(header[1]!) ?? new Map<string, string[]>();
      unit.set(header[1]!, section);
      continue;
    }
    const eq = line.indexOf('=');
    if (eq < 0 || !section) continue; // systemd warns and ignores it
    const key = line.slice(0, eq).trim();
    const value = line.slice(eq + 1).trim();
    if (value === '') section.set(key, []);
    else section.set(key, [...(section.get(key) ?? []), value]);
  }
  return unit;
}

/** The last value of `key` in `section`, as systemd reads single-valued settings. */
export function setting(unit: UnitFile, section: string, key: string): string | undefined {
  const values = unit.get(section)?.get(key);
  return values?.[values.length - 1];
}

/** All values of `key` in `section` (since the last empty assignment). */
export function settings(unit: UnitFile, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}

/**
 * How long a stop may take when the unit does not say (TimeoutStopSec=): systemd's
 * DefaultTimeoutStopSec, 90 s. A shorter one killed a registry whose podman was slow to stop on a
 * loaded machine, and the unit ended "failed" where systemd would have waited.
 */
export function timeoutStopMs(unit: UnitFile | undefined): number {
  return timeSpanMs(unit ? setting(unit, 'Service', 'TimeoutStopSec') : undefined, 90_000);
}

/** A systemd time span ("10", "10s", "500ms", "1min 30s", "infinity") in milliseconds. */
export function timeSpanMs(value: string | undefined, fallbackMs: number): number {
  if (value === undefined || value === '') return fallbackMs;
  if (value === 'infinity') return Number.POSITIVE_INFINITY;
  const units: Record<string, number> = {
    us: 0.001,
    ms: 1,
    s: 1000,
    sec: 1000,
    m: 60_000,
    min: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  for (const m of value.matchAll(/(\d+(?:\.\d+)?)\s*([a-z]*)/g))
    total += Number(m[1]) * (units[m[2] || 's'] ?? 1000);
  return total;
}

/** One command of an Exec line. */
export interface ExecCommand {
  /** `-`: a failure is ignored. */
  ignoreFailure: boolean;
  /** The program (absolute; a bare name is looked up in systemd's fixed path). */
  path: string;
  /** argv, argv[0] included (differs from `path` with the `@` prefix). */
  argv: string[];
}

const C_ESCAPES: Record<string, string> = {
  n: '\n',
  t: '\t',
  r: '\r',
  a: '\x07',
  b: '\b',
  f: '\f',
  v: '\v',
  s: ' ',
};

/** Split an Exec value into words: whitespace separates, quotes group, backslash escapes. */
export function splitWords(value: string): string[] {
  const words: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /\s/.test(value[i]!)) i++;
    if (i >= value.length) break;
    let word = '';
    while (i < value.length && !/\s/.test(value[i]!)) {
      const c = value[i]!;
      if (c === '"' || c === "'") {
        const close = value.indexOf(c, i + 1);
        if (close < 0) throw new Error(`unbalanced quotes in: ${value}`);
        word += unescape(value.slice(i + 1, close));
        i = close + 1;
      } else if (c === '\\' && i + 1 < value.length) {
        const [s, len] = escapeAt(value, i);
        word += s;
        i += len;
      } else {
        word += c;
        i++;
      }
    }
    words.push(word);
  }
  return words;
}

function escapeAt(s: string, i: number): [string, number] {
  const c = s[i + 1]!;
  if (c in C_ESCAPES) return [C_ESCAPES[c]!, 2];
  if (c === 'x') return [String.fromCharCode(parseInt(s.slice(i + 2, i + 4), 16)), 4];
  return [c, 2];
}

function unescape(s: string): string {
  let out = '';
  for (let i = 0; i < s.length;) {
    if (s[i] === '\\' && i + 1 < s.length) {
      const [e, len] = escapeAt(s, i);
      out += e;
      i += len;
    } else out += s[i++];
  }
  return out;
}

/** The unit-name specifiers systemd expands in Exec lines and most settings. */
export function expandSpecifiers(value: string, unitName: string): string {
  const prefix = unitName.replace(/\.[^.]+$/, '');
  const at = prefix.indexOf('@');
  const map: Record<string, string> = {
    n: unitName,
    N: prefix,
    p: at < 0 ? prefix : prefix.slice(0, at),
    i: at < 0 ? '' : prefix.slice(at + 1),
    t: '/run',
    S: '/var/lib',
    C: '/var/cache',
    L: '/var/log',
    E: '/etc',
    h: '/root',
    u: 'root',
    U: '0',
    '%': '%',
  };
  return value.replace(/%(.)/g, (whole, c: string) => map[c] ?? whole);
}

const SYSTEMD_PATH = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Parse one Exec value (after specifier expansion) into a command, `env` substituted. */
export function parseExec(
  value: string,
  env: Record<string, string | undefined>,
  exists: (p: string) => boolean,
): ExecCommand {
  let rest = value.trim();
  let ignoreFailure = false;
  let argv0Given = false;
  let substitute = true;
  for (;;) {
    const c = rest[0];
    if (c === '-') ignoreFailure = true;
    else if (c === '@') argv0Given = true;
    else if (c === ':') substitute = false;
    else if (c !== '+' && c !== '!') break;
    rest = rest.slice(1);
  }
  const words: string[] = [];
  for (const word of splitWords(rest)) {
    if (!substitute) words.push(word);
    else if (/^\$[A-Za-z_][A-Za-z0-9_]*$/.test(word)) {
      // `$VAR` alone is split at whitespace into several words; unset or empty gives none.
      words.push(...(env[word.slice(1)] ?? '').split(/\s+/).filter((w) => w !== ''));
    } else words.push(word.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, k: string) => env[k] ?? ''));
  }
  if (words.length === 0) throw new Error(`empty command line: ${value}`);
  let path = words[0]!;
  if (!path.startsWith('/')) {
    if (path.includes('/')) throw new Error(`neither a valid executable name nor an absolute path: ${path}`);
    const found = SYSTEMD_PATH.map((d) => `${d}/${path}`).find(exists);
    if (!found) throw new Error(`unable to locate executable '${path}'`);
    path = found;
  }
  return { ignoreFailure, path, argv: argv0Given ? words.slice(1) : [path, ...words.slice(1)] };
}

/** Environment= values: each a list of `K=V` words, quotes allowed. */
export function unitEnvironment(values: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const value of values) {
    for (const word of splitWords(value)) {
      const eq = word.indexOf('=');
      if (eq > 0) env[word.slice(0, eq)] = word.slice(eq + 1);
    }
  }
  return env;
}

/** EnvironmentFile= contents: `K=V` lines, `#` comments, optional quotes around V. */
export function parseEnvironmentFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    let v = line.slice(eq + 1).trim();
    if (v.length >= 2 && (v[0] === '"' || v[0] === "'") && v.endsWith(v[0])) v = unescape(v.slice(1, -1));
    env[line.slice(0, eq).trim()] = v;
  }
  return env;
}
