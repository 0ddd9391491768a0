/** The install's progress lines: durations, repeats dropped, and the redrawn summary on a terminal. */
import { describe, expect, it } from 'vitest';
import { dedupe, lineReporter, parseDuration, type InstallEvent } from '../../src/cluster/progress.js';

function stream(isTTY: boolean): NodeJS.WriteStream & { text: string } {
  const s = { isTTY, columns: 40, text: '', write: (t: string) => ((s.text += t), true) };
  return s as unknown as NodeJS.WriteStream & { text: string };
}

describe('install progress', () => {
  it('reads durations as --timeout takes them, and refuses what is not one', () => {
    expect(parseDuration('45m')).toBe(45 * 60_000);
    expect(parseDuration('1h30m')).toBe(90 * 60_000);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('120')).toBe(120_000);
    for (const bad of ['', 'soon', '5 m', '10x', '1h-30m']) expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('drops a message repeated for the same object, keeps changes and other objects', () => {
    const seen: string[] = [];
    const r = dedupe((e) => seen.push(`${e.object}: ${e.message}`));
    const ev = (object: string, message: string): InstallEvent => ({ phase: 'hosts', object, message });
    r(ev('a', 'registering'));
    r(ev('a', 'registering'));
    r(ev('b', 'registering'));
    r(ev('a', 'provisioning'));
    r(ev('a', 'registering'));
    expect(seen).toEqual(['a: registering', 'b: registering', 'a: provisioning', 'a: registering']);
  });

  it('on a terminal, a summary is one redrawn line, cleared around permanent lines; elsewhere it is left out', () => {
    const tty = stream(true);
    const r = lineReporter(tty);
    r({
      phase: 'install',
      message: '0/2 Agents installed; worker-0 Rebooting, worker-1 Rebooting',
      transient: true,
    });
    r({ phase: 'install', object: 'Agent x', message: 'Joined' });
    r({ phase: 'install', message: '1/2 Agents installed', transient: true });
    const lines = tty.text.split('\n');
    expect(lines[0]).toBe('\r\x1b[K[install] 0/2 Agents installed; worker…\r\x1b[K[install] Agent x: Joined');
    expect(lines[1]).toContain('\r\x1b[K[install] 1/2 Agents installed');

    const plain = stream(false);
    const p = lineReporter(plain);
    p({ phase: 'install', message: '0/2 Agents installed', transient: true });
    p({ phase: 'install', object: 'Agent x', message: 'Joined' });
    expect(plain.text).toBe('[install] Agent x: Joined\n');
  });
});
