/**
 * The one progress model: library code emits events, commands render them (a single bar on a TTY,
 * plain periodic lines elsewhere, nothing extra with --json). Library code never writes to stdout.
 */
export type ProgressEvent =
  /**
   * A new phase. `moves: true` starts a step that moves bytes of its own (unpacking an archive,
   * copying images, writing archive parts): the byte counts, rate and ETA start again, so each
   * step's bar ends at the bytes that step moved. `counting: true`: the step's total grows until
   * a `total-known` event (images are still being resolved), and no ETA is shown before it.
   */
  | { type: 'phase'; name: string; detail?: string; moves?: boolean; counting?: boolean }
  /** The bytes planned so far are all the step will move (after a `counting` phase). */
  | { type: 'total-known' }
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
  /** When the current byte-moving step started (the rate is of that step). */
  started = Date.now();
  itemsTotal = 0;
  itemsDone = 0;
  itemsFailed = 0;
  bytesPlanned = 0;
  bytesDone = 0;
  /** The name of the byte-moving step under way (copy, unpack, archive), shown first. */
  step = '';
  /** False while the step's total still grows (images being resolved): no ETA, and it says so. */
  totalKnown = true;
  blobs = { uploaded: 0, mounted: 0, present: 0, downloaded: 0 };
  phase = '';

  apply(e: ProgressEvent): void {
    switch (e.type) {
      case 'phase':
        this.phase = e.detail ? `${e.name}: ${e.detail}` : e.name;
        if (e.moves) {
          this.step = e.name;
          this.bytesPlanned = 0;
          this.bytesDone = 0;
          this.started = Date.now();
        }
        this.totalKnown = !e.counting;
        break;
      case 'total-known':
        this.totalKnown = true;
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

  /**
   * The fields of the line, in display order, each with how much it matters: the byte counts
   * first, then failures, images, ETA, (the bar), rate, blobs. A narrow terminal drops the least first.
   */
  fields(): { text: string; keep: number }[] {
    const rate = this.rate();
    const left = Math.max(0, this.bytesPlanned - this.bytesDone);
    const blobs = this.blobs.uploaded + this.blobs.downloaded + this.blobs.mounted + this.blobs.present;
    // Counters that mean nothing for a run (no blobs in a file download, no items) are left out.
    const out: { text: string; keep: number }[] = [
      ...(this.step ? [{ text: `${this.step}:`, keep: 3 }] : []),
      {
        text: `${formatBytes(this.bytesDone)} / ${formatBytes(this.bytesPlanned)}${this.totalKnown ? '' : ' so far'}`,
        keep: 9,
      },
      { text: `at ${formatBytes(rate)}/s`, keep: 4 },
    ];
    if (rate > 0 && left > 0 && this.totalKnown)
      out.push({ text: `ETA ${formatDuration((left / rate) * 1000)}`, keep: 5 });
    if (blobs > 0) out.push({ text: `· blobs ${blobs}`, keep: 2 });
    if (this.itemsTotal > 0) out.push({ text: `· images ${this.itemsDone}/${this.itemsTotal}`, keep: 6 });
    if (this.itemsFailed) out.push({ text: `· ${this.itemsFailed} failed`, keep: 8 });
    return out;
  }

  line(): string {
    return joinFields(this.fields());
  }

  /** The line with a bar, fitted to `width` columns: fields are dropped, never wrapped. */
  fitted(width: number): string {
    const frac = this.bytesPlanned > 0 ? Math.min(1, this.bytesDone / this.bytesPlanned) : 0;
    const barWidth = Math.max(10, Math.min(30, width - 70));
    const filled = Math.round(frac * barWidth);
    const bar = { text: `[${'='.repeat(filled)}${' '.repeat(barWidth - filled)}]`, keep: 4.5 };
    const own = this.fields();
    // The step's name, then the bar, then the counts.
    const fields = this.step ? [own[0]!, bar, ...own.slice(1)] : [bar, ...own];
    const limit = Math.max(1, width - 1); // the last column would wrap on some terminals
    while (joinFields(fields).length > limit && fields.length > 1) {
      const drop = fields.reduce((lo, f, i) => (f.keep < fields[lo]!.keep ? i : lo), 0);
      fields.splice(drop, 1);
    }
    return joinFields(fields).slice(0, limit);
  }
}

function joinFields(fields: { text: string }[]): string {
  return fields.map((f) => f.text).join(' ');
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
      const text = state.fitted(out.columns ?? 80);
      out.write(`\r${text}${' '.repeat(Math.max(0, lastLen - text.length))}`);
      lastLen = text.length;
    } else {
      out.write(`progress: ${state.line()}\n`);
    }
  };
  // A terminal made narrower: clear what was drawn (it may have wrapped) and draw to the new width.
  const resized = () => {
    out.write(`\r${' '.repeat(Math.min(lastLen, Math.max(0, (out.columns ?? 80) - 1)))}\r`);
    lastLen = 0;
    draw();
  };
  if (tty) out.on('resize', resized);
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
      out.off?.('resize', resized);
      if (tty && lastLen) out.write(`\r${' '.repeat(lastLen)}\r`);
    },
  };
}
