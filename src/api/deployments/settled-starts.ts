/** How long an accepted trigger's start may wait for the triggers around it to be answered. */
const MAX_HOLD_MS = 100;

/**
 * The workflow starts of accepted triggers, sent once every trigger in flight has been answered (at
 * most MAX_HOLD_MS later): a burst of triggers is answered first and its runs start right after,
 * instead of each start — and the worker's first work on each run, in the same process — competing
 * with the answers still being made. A start that fails then is left to the workers' sweep, as any
 * start that fails after its 202.
 */
export class SettledStarts {
  private inFlight = 0;
  private pending: Array<() => void> = [];
  private holding: NodeJS.Timeout | undefined;

  /** A trigger is being handled; the function returned says it has been answered (calling it again does nothing). */
  begin(): () => void {
    this.inFlight += 1;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.inFlight -= 1;
      if (this.inFlight === 0) this.flushSoon();
    };
  }

  /** Sends `start` once the triggers in flight have been answered. */
  defer(start: () => void): void {
    this.pending.push(start);
    this.holding ??= setTimeout(() => this.flush(), MAX_HOLD_MS);
    if (this.inFlight === 0) this.flushSoon();
  }

  /** After the answers just made are written (their I/O callbacks run first), unless more triggers came meanwhile. */
  private flushSoon(): void {
    setImmediate(() => {
      if (this.inFlight === 0) this.flush();
    });
  }

  private flush(): void {
    clearTimeout(this.holding);
    this.holding = undefined;
    const starts = this.pending;
    this.pending = [];
    for (const start of starts) start();
  }
}
