import type { AttemptStart } from '../src/domain/execution/steps';
import type { StepLog } from './step-log';

/** How long a step's start waits to be written together with its command's process group id. */
const START_WRITE_MS = 250;
/**
 * How long a step's start waits after its process group id is known, for the command to end: a
 * quick command's start is written with its result. Past this, the id is on record, so a rerun after
 * a crash stops the old command first.
 */
const PROCESS_GROUP_WRITE_MS = 40;

/**
 * When a step's start is written: with its command's process group id shortly after the wrapper
 * reports it (one write, not awaited: the command runs meanwhile), or after START_WRITE_MS without
 * it, or with the result if the command ends first (a quick command's start and end are one write).
 */
export class AttemptStartWrite {
  private written = false;
  private pgid: number | null = null;
  private timer: NodeJS.Timeout;

  constructor(
    private readonly stepLog: StepLog,
    private readonly index: number,
    private readonly start: AttemptStart,
  ) {
    this.timer = setTimeout(() => this.write(), START_WRITE_MS);
  }

  /** The command's process group: written with the start (shortly), or on its own once the start is. */
  processGroup(pgid: number): void {
    this.pgid = pgid;
    if (this.written) {
      this.stepLog.write((s) => s.recordProcessGroup(this.index, pgid)).catch(this.stepLog.warn('the process group'));
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.write(), PROCESS_GROUP_WRITE_MS);
  }

  /** The start written now, unless it was. */
  write(): void {
    if (this.written) return;
    this.written = true;
    clearTimeout(this.timer);
    this.stepLog.write((s) => s.startAttempt(this.index, { ...this.start, pgid: this.pgid ?? undefined })).catch(this.stepLog.warn('the step start'));
  }

  /** The command ended before its start was written: the start, to be written with the result (one change). */
  intoResult(): AttemptStart | undefined {
    if (this.written) return undefined;
    this.written = true;
    clearTimeout(this.timer);
    return this.start;
  }

  /** The execution is over: no start is written later. */
  cancel(): void {
    clearTimeout(this.timer);
  }
}
