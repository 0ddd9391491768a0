/** A counting semaphore: at most `n` tasks inside `run` at once. */
export class Limiter {
  private active = 0;
  private readonly queue: (() => void)[] = [];

  constructor(private readonly n: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.n) await new Promise<void>((r) => this.queue.push(r));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.queue.shift()?.();
    }
  }
}

/** Each key's work started once, however many callers ask for it: the same promise for all. */
export class Once<T> {
  private readonly done = new Map<string, Promise<T>>();

  get(key: string, work: () => Promise<T>): Promise<T> {
    let p = this.done.get(key);
    if (!p) {
      p = work();
      this.done.set(key, p);
    }
    return p;
  }
}
