/**
 * One module knows where the reference material is (lab/realdata.ts): nothing else under src/, lab/,
 * bench/, scripts/ or test/ names the directory beside the repository or the realdata directory in
 * a path, or reads the variables that move them; they ask the helper. src/ does not mention the
 * realdata at all: the product never reads it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

const DIRS = ['src', 'lab', 'bench', 'scripts', 'test'];
const TEXT = /\.(ts|js|mjs|cjs|sh|json|ya?ml|md|txt)$/;
/** The helper itself and its test, and this file (whose patterns name what they look for). */
const EXEMPT = new Set(['lab/realdata.ts', 'test/lab/realdata.test.ts', 'test/lint/realdata-helper.test.ts']);

const q = `['"\`]`;
/** What names the place of the reference material, and why it may not. */
const RULES: { re: RegExp; why: string }[] = [
  { re: /\.\.[\\/]shared\b/, why: 'names ../shared' },
  { re: new RegExp(`${q}\\.\\.${q}\\s*,\\s*${q}shared${q}`), why: "names '..', 'shared'" },
  { re: /\bshared[\\/]realdata\b/, why: 'names shared/realdata' },
  { re: new RegExp(`${q}shared${q}\\s*,\\s*${q}realdata${q}`), why: "names 'shared', 'realdata'" },
  { re: new RegExp(`(${q}|[\\\\/])realdata(${q}|[\\\\/])`), why: 'names the realdata directory in a path' },
  {
    re: /process\.env(\.|\[\s*['"`])AIRGAP_(REALDATA|CRD_DIR)\b/,
    why: 'reads AIRGAP_REALDATA or AIRGAP_CRD_DIR itself',
  },
];

/** The problems of one file (path relative to the repository, `/`-separated). */
export function problems(path: string, text: string): string[] {
  if (EXEMPT.has(path)) return [];
  const out: string[] = [];
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    for (const r of RULES) if (r.re.test(line)) out.push(`${path}:${i + 1}: ${r.why}: ${line.trim()}`);
    if (path.startsWith('src/') && /realdata/i.test(line))
      out.push(`${path}:${i + 1}: src/ mentions the realdata: ${line.trim()}`);
  });
  return out;
}

/** Every text file under `dir` (no dependencies, no build output). */
function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...files(p));
    else if (e.isFile() && TEXT.test(e.name)) out.push(p);
  }
  return out;
}

describe('the realdata helper is the one place that knows where the reference material is', () => {
  it('nothing under src/, lab/, bench/, scripts/ or test/ names it but lab/realdata.ts', () => {
    const found: string[] = [];
    let scanned = 0;
    for (const d of DIRS) {
      for (const f of files(join(REPO_ROOT, d))) {
        const rel = relative(REPO_ROOT, f).split(sep).join('/');
        found.push(...problems(rel, readFileSync(f, 'utf8')));
        scanned++;
      }
    }
    expect(scanned).toBeGreaterThan(300);
    expect(found, 'ask lab/realdata.ts (realdata(), crdDir(), hasRealdata()…) instead').toEqual([]);
  });

  it('catches the ways a path to it gets written, and lets the helper be used', () => {
    const bad: [string, string][] = [
      [
        'lab/hub/index.ts',
        "  return process.env.AIRGAP_CRD_DIR ?? resolve(root, '../shared/realdata/crds');",
      ],
      ['test/helpers/crd.ts', "const dir = resolve(root, '..', 'shared', 'realdata', 'crds');"],
      ['bench/install.ts', "const crds = join(here, '../../shared/realdata/crds');"],
      ['scripts/test.sh', 'ls ../shared/realdata/samples'],
      ['test/x.test.ts', "const f = join(base, 'realdata', 'samples');"],
      ['lab/demo.ts', "const dir = process.env['AIRGAP_REALDATA'] ?? '/opt/x';"],
      ['src/cluster/x.ts', "import { realdata } from '../../lab/realdata.js';"],
    ];
    for (const [path, line] of bad) expect(problems(path, line), `${path}: ${line}`).not.toEqual([]);
    const good: [string, string][] = [
      ['lab/hub/index.ts', "import { crdDir, realCrdsAbsence } from '../realdata.js';"],
      ['test/x.test.ts', "const f = realdata('samples', 'coreos', 'x.json');"],
      ['test/x.test.ts', "import { realdata, withRealdata } from '../helpers/realdata.js';"],
      ['lab/realdata.ts', "return resolve(repoRoot(), '..', 'shared', 'realdata');"],
    ];
    for (const [path, line] of good) expect(problems(path, line), `${path}: ${line}`).toEqual([]);
  });
});
