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

/** `[hosts] BareMetalHost clusters-example/worker-0: provisioning`. */
export function formatEvent(e: InstallEvent): string {
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
