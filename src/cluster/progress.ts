/**
 * The progress model of the install phases: each phase reports events (what changed, on which
 * object); the command renders them as plain lines (or a --json stream). Repeated identical
 * messages for the same object are dropped, so a watch that wakes often does not flood the output.
 */

export type InstallLevel = 'info' | 'warn' | 'error';

export interface InstallEvent {
  /** `preflight`, `apply`, `control-plane`, `iso`, `hosts`, `agents`, `scale`, `install`, `complete`, `kubeconfig`, … */
  phase: string;
  message: string;
  /** `HostedCluster clusters/example`, `BareMetalHost clusters-example/worker-0`. */
  object?: string;
  level?: InstallLevel;
  /**
   * A summary that replaces the previous one (`1/2 Agents installed; worker-1 Rebooting`): a
   * terminal shows it on one redrawn line; plain output leaves it out (the lines around it say it).
   */
  transient?: boolean;
}

export type InstallReporter = (e: InstallEvent) => void;

export const silent: InstallReporter = () => undefined;

/** A reporter that forwards only events whose (phase, object, message) differ from the last one for that object. */
export function dedupe(report: InstallReporter): InstallReporter {
  const last = new Map<string, string>();
  return (e) => {
    const key = `${e.phase}\u0000${e.object ?? ''}`;
    if (last.get(key) === e.message) return;
    last.set(key, e.message);
    report(e);
  };
}

/**
 * A reporter that writes lines to `out`. On a terminal, transient summaries share one line that is
 * redrawn (and cleared before each permanent line); elsewhere they are dropped.
 */
export function lineReporter(out: NodeJS.WriteStream): InstallReporter {
  let shown = '';
  return (e) => {
    if (e.transient) {
      if (!out.isTTY) return;
      const width = Math.max(20, (out.columns ?? 100) - 1);
      const text = formatEvent(e);
      shown = text.length > width ? `${text.slice(0, width - 1)}…` : text;
      out.write(`\r\x1b[K${shown}`);
      return;
    }
    if (shown) out.write('\r\x1b[K');
    out.write(`${formatEvent(e)}\n`);
    if (shown) out.write(shown);
  };
}

/** `[hosts] BareMetalHost clusters-example/worker-0: provisioning`. */
function formatEvent(e: InstallEvent): string {
  const mark = e.level === 'error' ? 'error: ' : e.level === 'warn' ? 'warning: ' : '';
  return `[${e.phase}] ${mark}${e.object ? `${e.object}: ` : ''}${e.message}`;
}

/** `45m`, `90s`, `2h`, `1h30m`, or bare seconds → milliseconds; undefined when not a duration. */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t) * 1000;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (const m of t.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3_600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;
    matched += m[0].length;
  }
  return matched === t.length && matched > 0 ? total : undefined;
}
