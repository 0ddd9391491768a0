/**
 * The command manifest (oclif.manifest.json, written by `npm run build`) is what `airgap --help`
 * and command lookup read instead of loading every command module at start-up. A stale one would
 * show flags that are gone and hide new ones, so it must describe exactly the built commands.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { airgap, REPO_ROOT } from '../helpers/cli.js';

interface Manifest {
  commands: Record<string, { flags: Record<string, unknown> }>;
}

type FlagDef = { multiple?: boolean; multipleNonGreedy?: boolean };

/** Every built command module's flags (own and base), by command id (topics joined by colons). */
async function builtFlags(): Promise<Map<string, Record<string, FlagDef>>> {
  const dir = join(REPO_ROOT, 'dist', 'commands');
  const out = new Map<string, Record<string, FlagDef>>();
  for (const entry of await readdir(dir, { recursive: true })) {
    if (!entry.endsWith('.js')) continue;
    const parts = relative(dir, join(dir, entry)).replace(/\.js$/, '').split(sep);
    if (parts.at(-1) === 'index') parts.pop();
    const mod = (await import(pathToFileURL(join(dir, entry)).href)) as {
      default?: { flags?: Record<string, FlagDef>; baseFlags?: Record<string, FlagDef> };
    };
    if (!mod.default) continue;
    out.set(parts.join(':'), { ...mod.default.baseFlags, ...mod.default.flags });
  }
  return out;
}

/** Every built command: its id and its flag names. */
async function builtCommands(): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const [id, flags] of await builtFlags()) out.set(id, Object.keys(flags).sort());
  return out;
}

describe('the command manifest', () => {
  it('lists exactly the built commands, each with its current flags', async () => {
    const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as Manifest;
    const built = await builtCommands();
    expect(Object.keys(manifest.commands).sort()).toEqual([...built.keys()].sort());
    for (const [id, flags] of built) {
      const listed = Object.keys(manifest.commands[id]!.flags).filter((f) => f !== 'help');
      expect({ id, flags: listed.sort() }).toEqual({ id, flags: flags.filter((f) => f !== 'help') });
    }
  });

  it('every repeatable flag of every command takes one value per use (flags go in any order)', async () => {
    const greedy: string[] = [];
    let repeatable = 0;
    for (const [id, flags] of await builtFlags())
      for (const [name, f] of Object.entries(flags)) {
        if (!f.multiple) continue;
        repeatable++;
        if (!f.multipleNonGreedy) greedy.push(`${id} --${name}`);
      }
    expect(repeatable).toBeGreaterThan(10);
    expect(greedy).toEqual([]);
  });

  it('is what help reads: every topic and command is listed without loading them', async () => {
    const r = await airgap(['--help']);
    expect(r.exitCode).toBe(0);
    for (const topic of ['mirror', 'certs', 'images', 'install', 'cluster', 'serve-images'])
      expect(r.stdout).toContain(topic);
  });
});

/**
 * Flags that the source names but that belong to other programs (skopeo, gpg, opm, rsync,
 * firewall-cmd, podman, hcp, oc-mirror, helm, operators a chart runs) or are not flags at all
 * (`--for` in prose).
 */
const OTHER_PROGRAMS_FLAGS = new Set([
  'add-port', // firewall-cmd
  'armor', // gpg
  'export', // gpg
  'cache-dir', // opm serve
  'cache-enforce-integrity', // opm serve
  'cache-only', // opm serve
  'pprof-addr', // opm serve
  'termination-log', // opm serve
  'copy-links', // rsync
  'default-dual', // hcp
  'enable-uwm-telemetry-remote-write', // MCE
  'max-nested-paths', // oc-mirror
  'net', // podman
  'pull', // podman run
  'input', // podman load
  'format', // podman save / inspect
  'filter', // podman ps
  'ignore', // podman rm
  'pager', // journalctl --no-pager
  'rm', // podman
  'time', // podman
  'now', // systemctl
  'permanent', // firewall-cmd
  'reload', // firewall-cmd
  'patch-file', // oc
  'type', // oc
  'raw', // skopeo inspect
  'registries-conf', // skopeo
  'registry-referrers-mode', // cosign
  'speed-limit', // curl
  'api-versions', // helm template
  'kube-version', // helm template
  'prometheus-config-reloader', // prometheus-operator, in a chart's args
  'acme-http01-solver-image', // cert-manager, in a chart's args
  'flag', // prose: `--flag=value`
  'delete-untagged', // registry garbage-collect
  'for', // prose
  'help', // every command
  'registries', // --registries.d, cut at the dot
]);

describe('flags named in messages', () => {
  it('every --flag the source names is a flag of some airgap command, or listed as another program’s', async () => {
    const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'oclif.manifest.json'), 'utf8')) as {
      commands: Record<string, { flags: Record<string, { aliases?: string[] }> }>;
    };
    const known = new Set<string>();
    for (const command of Object.values(manifest.commands)) {
      for (const [name, flag] of Object.entries(command.flags)) {
        for (const n of [name, ...(flag.aliases ?? [])]) known.add(n).add(n.replace(/^no-/, ''));
      }
    }
    const unknown: string[] = [];
    const src = join(REPO_ROOT, 'src');
    for (const entry of await readdir(src, { recursive: true })) {
      if (!entry.endsWith('.ts')) continue;
      const lines = (await readFile(join(src, entry), 'utf8')).split('\n');
      lines.forEach((line, i) => {
        for (const m of line.matchAll(/(?<![\w-])--(?:no-)?([a-z][a-z0-9-]+)/g)) {
          if (!known.has(m[1]!) && !OTHER_PROGRAMS_FLAGS.has(m[1]!))
            unknown.push(`src/${entry}:${i + 1} --${m[1]}`);
        }
      });
    }
    expect(unknown).toEqual([]);
  });
});
