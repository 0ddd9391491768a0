/**
 * The one progress model: library code emits events, commands render them (a single bar on a TTY,
 * plain periodic lines elsewhere, nothing extra with --json). Library code never writes to stdout.
 */
export type ProgressEvent =
  | { type: 'phase'; name: string; detail?: string }
  | { type: 'items-total'; total: number }
  | { type: 'bytes-planned'; bytes: number }
  | { type: 'bytes'; bytes: number }
  | { type: 'blob-done'; how: 'uploaded' | 'mounted' | 'present' | 'downloaded'; size: number }
  | { type: 'item-done'; ok: boolean; name: string; message?: string }
  | { type: 'warning'; message: string };

export type ProgressSink = (e: ProgressEvent) => void;

export const noProgress: ProgressSink = () => undefined;

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function formatBytes(n: number): string {
  let v = n;
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v.toFixed(0) : v.toFixed(1)} ${UNITS[u]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

/** Totals kept from events; also what the renderer draws. */
export class ProgressState {
  readonly started = Date.now();
  itemsTotal = 0;
  itemsDone = 0;
  itemsFailed = 0;
  bytesPlanned = 0;
  bytesDone = 0;
  blobs = { uploaded: 0, mounted: 0, present: 0, downloaded: 0 };
  phase = '';

  apply(e: ProgressEvent): void {
    switch (e.type) {
      case 'phase':
        this.phase = e.detail ? `${e.name}: ${e.detail}` : e.name;
        break;
      case 'items-total':
        this.itemsTotal = e.total;
        break;
      case 'bytes-planned':
        this.bytesPlanned += e.bytes;
        break;
      case 'bytes':
        this.bytesDone += e.bytes;
        break;
      case 'blob-done':
        this.blobs[e.how]++;
        break;
      case 'item-done':
        this.itemsDone++;
        if (!e.ok) this.itemsFailed++;
        break;
      default:
        break;
    }
  }

  rate(): number {
    const secs = (Date.now() - this.started) / 1000;
    return secs > 0 ? this.bytesDone / secs : 0;
  }

  line(): string {
    const rate = this.rate();
    const left = Math.max(0, this.bytesPlanned - this.bytesDone);
    const eta = rate > 0 && left > 0 ? ` ETA ${formatDuration((left / rate) * 1000)}` : '';
    const blobs = this.blobs.uploaded + this.blobs.downloaded + this.blobs.mounted + this.blobs.present;
    const failed = this.itemsFailed ? `, ${this.itemsFailed} failed` : '';
    // Counters that mean nothing for a run (no blobs in a file download, no items) are left out.
    const counts = `${blobs > 0 ? ` · blobs ${blobs}` : ''}${this.itemsTotal > 0 ? ` · images ${this.itemsDone}/${this.itemsTotal}` : ''}`;
    return `${formatBytes(this.bytesDone)} / ${formatBytes(this.bytesPlanned)} at ${formatBytes(rate)}/s${eta}${counts}${failed}`;
  }
}

/** Renders progress to a stream: one redrawn bar on a TTY, a plain line every `intervalMs` otherwise. */
export function renderProgress(
  out: NodeJS.WriteStream,
  opts: { tty?: boolean; intervalMs?: number } = {},
): { sink: ProgressSink; stop: () => void; state: ProgressState } {
  const state = new ProgressState();
  const tty = opts.tty ?? Boolean(out.isTTY);
  const interval = opts.intervalMs ?? (tty ? 200 : 5000);
  let lastLen = 0;
  const draw = () => {
    if (tty) {
      const width = Math.max(10, Math.min(30, (out.columns ?? 80) - 90));
      const frac = state.bytesPlanned > 0 ? Math.min(1, state.bytesDone / state.bytesPlanned) : 0;
      const filled = Math.round(frac * width);
      const bar = `[${'='.repeat(filled)}${' '.repeat(width - filled)}]`;
      const text = `${bar} ${state.line()}`;
      out.write(`\r${text}${' '.repeat(Math.max(0, lastLen - text.length))}`);
      lastLen = text.length;
    } else {
      out.write(`progress: ${state.line()}\n`);
    }
  };
  const timer = setInterval(draw, interval);
  timer.unref();
  return {
    state,
    sink: (e) => {
      state.apply(e);
      if (e.type === 'warning') {
        if (tty && lastLen) out.write(`\r${' '.repeat(lastLen)}\r`);
        out.write(`warning: ${e.message}\n`);
      }
    },
    stop: () => {
      clearInterval(timer);
      if (tty && lastLen) out.write(`\r${' '.repeat(lastLen)}\r`);
    },
  };
}
