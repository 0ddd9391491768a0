/**
 * `journalctl` for the simulator's journal: `-u UNIT` (repeatable), `-n N`/`--lines=N`, `-e`,
 * `-o short|cat` (`--output=`), `-q`, `--no-pager`; other flags are accepted and ignored.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { HOST, readJournal, unitName, type JournalEntry } from './state.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** journald's "short" format: `Nov 27 20:43:24 host ident[pid]: message`. */
function short(e: JournalEntry): string {
  const d = new Date(e.ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  const time = `${MONTHS[d.getMonth()]} ${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return `${time} ${HOST} ${e.ident}[${e.pid}]: ${e.message}`;
}

export function journalctl(dir: string, args: string[]): number {
  const units: string[] = [];
  let lines: number | undefined;
  let output = 'short';
  let quiet = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const value = () =>
      a.includes('=') ? a.slice(a.indexOf('=') + 1) : /^-[un]./.test(a) ? a.slice(2) : args[++i]!;
    if (a === '-u' || a.startsWith('--unit') || /^-u./.test(a)) units.push(unitName(value()));
    else if (a === '-n' || a.startsWith('--lines') || /^-n./.test(a)) lines = Number(value());
    else if (a === '-o' || a.startsWith('--output')) output = value();
    else if (a === '-e' || a === '--pager-end') lines ??= 1000;
    else if (a === '-q' || a === '--quiet') quiet = true;
    else if (a === '-f' || a === '--follow') {
      process.stderr.write('journalctl simulator: --follow is not supported\n');
      return 1;
    } else if (/^-[a-z]*x[a-z]*$/.test(a) && a.includes('e')) lines ??= 1000; // -xe, -xeu given as one
  }
  const names =
    units.length > 0 ? units : readdirSync(join(dir, 'journal')).map((f) => f.replace(/\.log$/, ''));
  let entries = names.flatMap((n) => readJournal(dir, n)).sort((a, b) => a.ms - b.ms);
  if (lines !== undefined) entries = lines > 0 ? entries.slice(-lines) : [];
  if (entries.length === 0) {
    if (!quiet) process.stdout.write('-- No entries --\n');
    return 0;
  }
  const format = output === 'cat' ? (e: JournalEntry) => e.message : short;
  process.stdout.write(entries.map((e) => `${format(e)}\n`).join(''));
  return 0;
}
