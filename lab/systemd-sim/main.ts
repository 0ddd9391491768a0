/**
 * The simulator's entry point, run by the generated `systemctl` and `journalctl` shims (see
 * index.ts) as `node --import ts-resolve.mjs main.ts <systemctl|journalctl|supervise> ARGS...`.
 */
import { journalctl } from './journalctl.js';
import { simDir } from './state.js';
import { Supervisor } from './supervisor.js';
import { systemctl, type Options } from './systemctl.js';

function parseSystemctl(args: string[]): { verb: string; units: string[]; opts: Options } {
  const opts: Options = { now: false, quiet: false, value: false, noBlock: false, properties: undefined };
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const addProps = (v: string) =>
      (opts.properties = [...(opts.properties ?? []), ...v.split(',').filter((p) => p)]);
    if (a === '--now') opts.now = true;
    else if (a === '-q' || a === '--quiet') opts.quiet = true;
    else if (a === '--value') opts.value = true;
    else if (a === '--no-block') opts.noBlock = true;
    else if (a === '-p' || a === '--property') addProps(args[++i] ?? '');
    else if (a.startsWith('--property=')) addProps(a.slice('--property='.length));
    else if (/^-p./.test(a)) addProps(a.slice(2));
    else if (a.startsWith('-'))
      continue; // --no-pager, --system, --full, --no-legend, --plain, -l ...
    else words.push(a);
  }
  return { verb: words[0] ?? 'list-units', units: words.slice(1), opts };
}

async function main(): Promise<number> {
  const [tool, ...args] = process.argv.slice(2);
  const dir = simDir();
  if (tool === 'journalctl') return journalctl(dir, args);
  if (tool === 'supervise') {
    await new Supervisor(dir, args[0]!).main();
    process.exit(0); // timers of an interrupted wait (RestartSec, TimeoutStopSec) would keep it alive
  }
  const { verb, units, opts } = parseSystemctl(args);
  return systemctl(dir, verb, units, opts);
}

main().then(
  (rc) => (process.exitCode = rc),
  (e: unknown) => {
    process.stderr.write(`systemd simulator: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
