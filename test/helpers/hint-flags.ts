/**
 * Every hint, note and warning the CLI prints may name only flags that exist where it sends the
 * user: flags of the command that printed it, or of the `airgap <command>` the sentence names.
 * The CLI helpers check each run's stderr with {@link strayHintFlags}, so every CLI test that meets
 * a hint checks it (a hint saying `--ca-file` from a command without one sent users to a dead end).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

interface Manifest {
  commands: Record<string, { flags: Record<string, { aliases?: string[] }> }>;
}

/** Programs other than airgap that hints quote; their flags are theirs. */
const OTHER_PROGRAMS = new Set([
  'skopeo',
  'oc',
  'gpg',
  'podman',
  'openssl',
  'curl',
  'rsync',
  'cp',
  'kubectl',
  'sha256sum',
  'update-ca-trust',
  'registry',
  'docker',
  'cosign',
  'hcp',
  'tar',
  'node',
  'npm',
  'oc-mirror',
  'sudo',
  'systemctl',
]);

let manifest: Manifest | undefined;
function commands(): Manifest['commands'] {
  manifest ??= JSON.parse(
    readFileSync(resolve(import.meta.dirname, '../../oclif.manifest.json'), 'utf8'),
  ) as Manifest;
  return manifest.commands;
}

/** Every name a command's flags answer to (`output`, its alias `out`, `no-graph`). */
function flagNames(id: string): Set<string> {
  const names = new Set<string>();
  for (const [name, flag] of Object.entries(commands()[id]?.flags ?? {})) {
    for (const n of [name, ...(flag.aliases ?? [])]) names.add(n).add(n.replace(/^no-/, ''));
  }
  return names;
}

/** The command id (`mirror:plan`) that argv runs, or undefined (help, unknown). */
export function commandOf(argv: readonly string[]): string | undefined {
  const words: string[] = [];
  for (const a of argv) {
    if (a.startsWith('-')) break;
    words.push(a);
  }
  for (let n = words.length; n > 0; n--) {
    const id = words.slice(0, n).join(':');
    if (commands()[id]) return id;
  }
  return undefined;
}

/** The lines of stderr that advise the user: `hint:`, `note:`, `warning:` and their continuations. */
function adviceOf(stderr: string): string[] {
  const out: string[] = [];
  let inside = -1;
  for (const line of stderr.split('\n')) {
    const indent = line.length - line.trimStart().length;
    if (/^\s*(hint|note|warning):/.test(line)) {
      out.push(line);
      inside = indent;
    } else if (inside >= 0 && indent > inside && line.trim() !== '') {
      out[out.length - 1] += ` ${line.trim()}`;
    } else {
      inside = -1;
    }
  }
  return out;
}

/**
 * Flags named in `stderr`'s advice that the command they are attributed to does not have, as
 * `--flag (airgap mirror plan)`.
 */
export function strayHintFlags(argv: readonly string[], stderr: string): string[] {
  const self = commandOf(argv);
  if (self === undefined) return [];
  const stray: string[] = [];
  for (const line of adviceOf(stderr)) {
    // A flag may belong to the printing command or to any `airgap <command>` the line names before
    // it ("run `airgap mirror` again, without --remove-signatures"). After another program's name
    // (`skopeo inspect --raw`), flags are that program's until the clause ends (quotes, brackets,
    // punctuation).
    const owners = new Set([self]);
    for (const clause of line.split(/[`'"();,]/)) {
      let foreign = false;
      const tokens = clause.split(/\s+/).filter((w) => w !== '');
      for (let i = 0; i < tokens.length; i++) {
        const t = tokens[i]!;
        if (t === 'airgap') {
          const id = commandOf(tokens.slice(i + 1));
          if (id) owners.add(id);
          foreign = id === undefined;
          continue;
        }
        if (OTHER_PROGRAMS.has(t)) {
          foreign = true;
          continue;
        }
        const m = /^--(?:no-)?([a-z][a-z0-9-]*)/.exec(t);
        if (!m || foreign || m[1] === 'help') continue;
        if (![...owners].some((o) => flagNames(o).has(m[1]!))) {
          const named = [...owners].map((o) => `airgap ${o.replaceAll(':', ' ')}`).join(', ');
          stray.push(`--${m[1]} (${named}): ${line.trim()}`);
        }
      }
    }
  }
  return stray;
}
