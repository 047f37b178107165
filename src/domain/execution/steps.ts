import type { Model, Types } from 'mongoose';
import { asObjectId } from '../ids';
import { appendStepLog } from './step-logs';
import type { StepOutput } from './output-file';

/** A MongoDB update: `$set`, `$inc`, `$push`, … (the stores' own: nobody else builds one). */
export type Update = Record<string, unknown> & { $set?: Record<string, unknown>; $inc?: Record<string, number> };

/** Progress (not results) is acknowledged once applied, without waiting for the journal: a step's fsyncs are its result's. */
const PROGRESS = { writeConcern: { w: 1, j: false } } as const;

/** The path of one field of one step (`steps.3.output`): for the stores' own updates only, as they alone write a step. */
export const stepField = (index: number, field: string) => `steps.${index}.${field}`;

/**
 * A change a client should see: it advances the document's event sequence (`seq`) by one, which is
 * what the relays send and what a client checks for gaps. Every store transition that makes such a
 * change goes through here; bookkeeping writes (a process group id) do not.
 */
export const asChange = (update: Update): Update => ({ ...update, $inc: { ...update.$inc, seq: 1 } });

/** The statuses a step is still open in: only such a step starts, or ends. */
export const OPEN_STEP_STATUSES = ['pending', 'running'];
const stepIsOpen = (index: number) => ({ [stepField(index, 'status')]: { $in: OPEN_STEP_STATUSES } });

/**
 * A chunk of a step's output as StepLog makes it: the step's output with the chunk (capped: head and
 * tail kept), the bytes of output so far (uncapped), and the chunk itself at its offset in the step's
 * stream (characters), which is what a client is sent live.
 */
export interface OutputChunk {
  output: string;
  bytes: number;
  offset: number;
  data: string;
}

/**
 * The writes an execution makes to one step of the document holding it (a deployment run, a
 * conversation): the only place those fields change. A finished step is never started or finished
 * again: such a transition leaves it as it is.
 */
export interface StepTransitions {
  /**
   * The step's output grew by a chunk (progress: not journaled before it is acknowledged). Only an
   * open step takes it: a step closed by someone else (a cancel without its workflow) keeps the log
   * it was closed with.
   */
  appendOutput(index: number, chunk: OutputChunk): Promise<unknown>;
  /** The same output into the step's whole log (src/domain/execution/step-logs.ts), at its offset in the step's stream: written first, idempotent. */
  appendLog(index: number, offset: number, data: string): Promise<unknown>;
  /** An exit attempt starts: the step is running; `pgid` when the command's process group is known already. */
  startAttempt(index: number, start: AttemptStart): Promise<unknown>;
  /** Bookkeeping, not a change a client sees: the running command's process group (null once it is gone). */
  recordProcessGroup(index: number, pgid: number | null): Promise<unknown>;
  /**
   * An exit attempt's result, with the output not yet written (one change, one event); its start
   * too when that was never written. False when the step was no longer open (closed by someone else).
   */
  finishAttempt(index: number, result: AttemptResult): Promise<boolean>;
  /**
   * The step fails without a result of its command (the server unreachable, retries spent): with
   * the last chunk of its output (the note saying why), or its execution log rewritten whole (`log`).
   */
  failStep(index: number, ending: { chunk: OutputChunk | null } | { log: string }): Promise<unknown>;
}

export interface AttemptStart {
  startedAt: Date;
  exitAttempt: number;
  pgid?: number;
}

export interface AttemptResult {
  /** The command exited 0 and was not stopped. */
  succeeded: boolean;
  exitCode: number | null;
  timedOut: boolean;
  exitAttempt: number;
  /** The step is over: it succeeded, or this was its last attempt (else it stays running, to be retried). */
  final: boolean;
  /** Its start, when that was never written (a quick command's start and result are one write). */
  start?: AttemptStart;
  /** The output since the last write. */
  chunk: OutputChunk | null;
  /** What the command wrote to BOSUN_OUTPUT (a deployment run's step; none when refused), replacing an earlier attempt's. */
  outputs?: StepOutput[];
  /** Why that file was refused, failing a command that exited 0. */
  outputsError?: string | null;
}

/** A final result that also ends the document holding the step (a run's last step): the document's own fields it sets. */
export interface DocumentEnd {
  status: string;
  error: string | null;
  completed_at: Date;
}

/** What differs between the kinds of document holding steps. */
export interface StepKind {
  model: Model<any>;
  /** A step's status once its command succeeded. */
  successStatus: string;
  /** A final result also records whether the command succeeded (`execution_success`, a conversation step's). */
  recordsExecutionSuccess: boolean;
}

const startFields = (index: number, start: AttemptStart) => ({
  [stepField(index, 'status')]: 'running',
  [stepField(index, 'started_at')]: start.startedAt,
  [stepField(index, 'started_exit_attempt')]: start.exitAttempt,
  ...(start.pgid !== undefined ? { [stepField(index, 'pgid')]: start.pgid } : {}),
});

const chunkFields = (index: number, chunk: OutputChunk | null) =>
  chunk
    ? {
        [stepField(index, 'output')]: chunk.output,
        [stepField(index, 'output_bytes')]: chunk.bytes,
        [stepField(index, 'streamed')]: chunk.offset + chunk.data.length,
        // The offset makes every chunk a change, even one identical to the last.
        last_chunk: { step: index, offset: chunk.offset, data: chunk.data },
      }
    : {};

/**
 * The step transitions of one document of a kind, and for its store the one write that finishes a
 * step and ends the document with it (`finishAttemptEnding`: a run's last step ends the run).
 */
export function stepTransitions(
  kind: StepKind,
  id: string | Types.ObjectId,
): StepTransitions & { finishAttemptEnding<D>(index: number, result: AttemptResult, end: DocumentEnd, projection: Record<string, number>): Promise<D | null> } {
  const _id = asObjectId(id);
  // The driver's own update: these writes come with every step of every run, and every value in them
  // has its schema type already, so mongoose's casting of each path would only cost CPU. It sets
  // `updatedAt` as mongoose would.
  const stamped = (change: Update) => ({ ...change, $set: { ...change.$set, updatedAt: new Date() } });
  const update = (filter: Record<string, unknown>, change: Update, options = {}) => kind.model.collection.updateOne({ _id, ...filter }, stamped(change), options);
  const executionSuccess = (index: number, succeeded: boolean) => (kind.recordsExecutionSuccess ? { [stepField(index, 'execution_success')]: succeeded } : {});

  const finishing = (index: number, result: AttemptResult, end?: DocumentEnd) =>
    asChange({
      $set: {
        ...(result.start ? startFields(index, result.start) : {}),
        [stepField(index, 'status')]: result.succeeded ? kind.successStatus : result.final ? 'failed' : 'running',
        [stepField(index, 'exit_code')]: result.exitCode,
        [stepField(index, 'pgid')]: null,
        [stepField(index, 'last_exit')]: { attempt: result.exitAttempt, exit_code: result.exitCode, timed_out: result.timedOut, ...(result.outputsError ? { outputs_error: result.outputsError } : {}) },
        ...(result.outputs ? { [stepField(index, 'outputs')]: result.outputs } : {}),
        ...(result.final ? { [stepField(index, 'completed_at')]: new Date(), ...executionSuccess(index, result.succeeded) } : {}),
        ...end,
        ...chunkFields(index, result.chunk),
      },
      ...(result.start ? { $inc: { [stepField(index, 'attempts')]: 1 } } : {}),
    });

  return {
    appendOutput: (index, chunk) => update(stepIsOpen(index), asChange({ $set: chunkFields(index, chunk) }), PROGRESS),

    appendLog: (index, offset, data) => appendStepLog(id, index, offset, data),

    startAttempt: (index, start) =>
      update(stepIsOpen(index), asChange({ $set: startFields(index, start), $inc: { [stepField(index, 'attempts')]: 1 } }), PROGRESS),

    recordProcessGroup: (index, pgid) => update({}, { $set: { [stepField(index, 'pgid')]: pgid } }, PROGRESS),

    finishAttempt: (index, result) => update(stepIsOpen(index), finishing(index, result)).then((written) => written.matchedCount > 0),

    // The document as the end left it, for what follows the end (its event) to read no more.
    finishAttemptEnding: <D>(index: number, result: AttemptResult, end: DocumentEnd, projection: Record<string, number>) =>
      kind.model.collection.findOneAndUpdate({ _id, ...stepIsOpen(index) }, stamped(finishing(index, result, end)), { returnDocument: 'after', projection }) as Promise<D | null>,

    failStep: (index, ending) =>
      update(
        stepIsOpen(index),
        asChange({
          $set: {
            [stepField(index, 'status')]: 'failed',
            [stepField(index, 'completed_at')]: new Date(),
            [stepField(index, 'pgid')]: null,
            ...executionSuccess(index, false),
            ...('log' in ending ? { [stepField(index, 'output')]: ending.log } : chunkFields(index, ending.chunk)),
          },
        }),
      ),
  };
}
