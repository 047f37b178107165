import { CappedOutput, Redactor } from '../src/domain/execution/output';
import type { OutputChunk, StepTransitions } from '../src/domain/execution/steps';
import type { Logger } from '../src/logger';

/**
 * A step's execution log as it is persisted: text redacted, capped (head and tail kept), written in
 * chunks. Persist-then-relay: each write is one change event with one sequence number. Writes are
 * chained so they land in order, and one that fails does not stop the later ones.
 */
export class StepLog {
  private readonly redactor: Redactor;
  private readonly output: CappedOutput;
  private pending = '';
  private streamed: number;
  private writes: Promise<unknown> = Promise.resolve();
  /** Chunks for the whole log, written before the step's own next write (so what the step shows, the log has). */
  private logChunks: Array<{ offset: number; data: string }> = [];
  /** Bytes of output the whole log has taken so far (it stops at `logLimit`). */
  private logged: number;
  private readonly logLimit: number;
  /**
   * While the step's own output holds all of it (nothing cut, within the whole log's limit), that
   * is its whole log: no chunk is written. The text since offset `from`, kept for the first chunk
   * once it outgrows that; null from then on.
   */
  private inline: { from: number; text: string } | null;

  constructor(
    private readonly steps: StepTransitions,
    private readonly index: number,
    step: { output?: string | null; streamed?: number | null },
    limits: { headLimit: number; tailLimit: number; logLimitBytes: number },
    secrets: string[],
    private readonly log: Logger,
    private readonly logContext: Record<string, unknown>,
  ) {
    this.redactor = new Redactor(secrets);
    this.output = new CappedOutput(limits.headLimit, limits.tailLimit, step.output ?? '');
    this.streamed = step.streamed ?? 0;
    this.logLimit = limits.logLimitBytes;
    this.logged = Math.min(this.output.bytes, this.logLimit);
    // An earlier attempt's output that is still whole was not chunked either: it goes with the first chunk.
    this.inline = this.output.whole && this.output.bytes <= this.logLimit ? { from: this.streamed - (step.output ?? '').length, text: step.output ?? '' } : null;
  }

  get bytes(): number {
    return this.output.bytes;
  }

  /** Output as produced (it may end inside a secret: the redactor holds such a tail back until more comes). */
  push(text: string): void {
    this.pending += this.redactor.push(text);
  }

  /**
   * A line of Bosun's own (a note, progress, a failure that may quote a server's stderr): after
   * whatever output came before it, and redacted like output.
   */
  note(text: string): void {
    this.pending += this.redactor.flush();
    this.pending += this.redactor.push(text) + this.redactor.flush();
  }

  /** Makes a transition of the step after the writes already asked for, in order. */
  write<T>(transition: (steps: StepTransitions) => Promise<T>): Promise<T> {
    const next = this.writes.then(async () => {
      const chunks = this.logChunks.splice(0);
      // The whole log is best effort: a failed write of it never holds up the step.
      for (const { offset, data } of chunks) await this.steps.appendLog(this.index, offset, data).catch(this.warn('the step’s whole log'));
      return transition(this.steps);
    });
    this.writes = next.catch(() => undefined);
    return next;
  }

  warn(what: string) {
    return (err: unknown) => this.log.warn({ err, ...this.logContext }, `could not persist ${what}`);
  }

  /** Writes what is pending (if anything) as one chunk. */
  flush(): Promise<unknown> {
    if (!this.pending) return this.writes;
    const chunk = this.nextChunk(this.takePending());
    return this.write((steps) => steps.appendOutput(this.index, chunk)).catch(this.warn('step output'));
  }

  /** The pending output as the chunk of a final write (which also holds the result: one change, one event); null when there is none. */
  finalChunk(): OutputChunk | null {
    this.pending += this.redactor.flush();
    const text = this.takePending();
    return text ? this.nextChunk(text) : null;
  }

  private takePending() {
    const chunk = this.pending;
    this.pending = '';
    return chunk;
  }

  private nextChunk(chunk: string): OutputChunk {
    this.output.append(chunk);
    if (this.inline && this.output.whole && this.output.bytes <= this.logLimit) this.inline.text += chunk;
    else {
      const earlier = this.inline;
      this.inline = null;
      // The first chunk: everything before it too (the step's output no longer holds all of it).
      if (earlier) {
        this.logChunks.push({ offset: earlier.from, data: earlier.text });
        this.logged = Buffer.byteLength(earlier.text, 'utf8');
      }
      this.keepInLog(chunk);
    }
    const next = { output: this.output.toString(), bytes: this.output.bytes, offset: this.streamed, data: chunk };
    this.streamed += chunk.length;
    return next;
  }

  /** Queues a chunk for the whole log, up to its limit (then one line says where it stopped). */
  private keepInLog(chunk: string) {
    if (this.logged >= this.logLimit) return;
    const bytes = Buffer.byteLength(chunk, 'utf8');
    let kept = chunk;
    if (this.logged + bytes > this.logLimit) {
      const room = this.logLimit - this.logged;
      kept = Buffer.from(chunk, 'utf8').subarray(0, room).toString('utf8').replace(/\uFFFD$/, '');
      kept += `\n… [the whole log stops here: the step wrote more than ${Math.round(this.logLimit / 1048576)} MiB (STEP_LOG_LIMIT_BYTES); its output goes on, see its tail in the step’s output] …\n`;
    }
    this.logged = Math.min(this.logLimit, this.logged + bytes);
    this.logChunks.push({ offset: this.streamed, data: kept });
  }
}
