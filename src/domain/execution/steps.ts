import type { Model, Types } from 'mongoose';
import { asObjectId } from '../ids';
import { appendStepLog } from './step-logs';

/** A MongoDB update: `$set`, `$inc`, `$push`, … */
export type Update = Record<string, unknown> & { $set?: Record<string, unknown>; $inc?: Record<string, number> };

/** Progress (not results) is acknowledged once applied, without waiting for the journal: a step's fsyncs are its result's. */
export const PROGRESS = { writeConcern: { w: 1, j: false } } as const;

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

/** The fields of a chunk of output, as StepLog computes them (the step's capped output, its counters, `last_chunk`). */
export type OutputFields = Record<string, unknown>;

/**
 * The writes an execution makes to one step of the document holding it (a deployment run, a
 * conversation): the only place those fields change. A finished step is never started or finished
 * again: such a transition leaves it as it is.
 */
export interface StepTransitions {
  /**
   * A chunk of output (progress: not journaled before it is acknowledged). Only an open step takes
   * it: a step closed by someone else (a cancel without its workflow) keeps the log it was closed with.
   */
  appendOutput(index: number, output: OutputFields): Promise<unknown>;
  /** The same output into the step's whole log (src/domain/execution/step-logs.ts), at its offset in the step's stream: written first, idempotent. */
  appendLog(index: number, offset: number, data: string): Promise<unknown>;
  /** An exit attempt starts: the step is running; `pgid` when the command's process group is known already. */
  startAttempt(index: number, start: AttemptStart): Promise<unknown>;
  /** Bookkeeping, not a change a client sees: the running command's process group (null once it is gone). */
  recordProcessGroup(index: number, pgid: number | null): Promise<unknown>;
  /**
   * An exit attempt's result, the last output with it (one change, one event); `start` when its
   * start was never written. False when the step was no longer open (closed by someone else).
   */
  finishAttempt(index: number, result: AttemptResult): Promise<boolean>;
  /** The step fails without a result of its command (the server unreachable, a person's rejection…): `fields` say how. */
  failStep(index: number, fields: Record<string, unknown>): Promise<unknown>;
}

export interface AttemptStart {
  startedAt: Date;
  exitAttempt: number;
  pgid?: number;
}

export interface AttemptResult {
  /** The step's status after this attempt: running while retries are left. */
  status: string;
  exitCode: number | null;
  timedOut: boolean;
  exitAttempt: number;
  /** The step is over (success, or its last attempt failed). */
  final: boolean;
  start?: AttemptStart;
  /** The last output, and whatever else the document's kind records with a final result. */
  fields: Record<string, unknown>;
}

const startFields = (index: number, start: AttemptStart) => ({
  [stepField(index, 'status')]: 'running',
  [stepField(index, 'started_at')]: start.startedAt,
  [stepField(index, 'started_exit_attempt')]: start.exitAttempt,
  ...(start.pgid !== undefined ? { [stepField(index, 'pgid')]: start.pgid } : {}),
});

// Runs and conversations are different models with the same step fields.
export function stepTransitions(model: Model<any>, id: string | Types.ObjectId): StepTransitions {
  const _id = asObjectId(id);
  // The driver's own update: these writes come with every step of every run, and every value in them
  // has its schema type already, so mongoose's casting of each path would only cost CPU. It sets
  // `updatedAt` as mongoose would.
  const update = (filter: Record<string, unknown>, change: Update, options = {}) =>
    model.collection.updateOne({ _id, ...filter }, { ...change, $set: { ...change.$set, updatedAt: new Date() } }, options);
  return {
    appendOutput: (index, output) => update(stepIsOpen(index), asChange({ $set: output }), PROGRESS),

    appendLog: (index, offset, data) => appendStepLog(id, index, offset, data),

    startAttempt: (index, start) =>
      update(stepIsOpen(index), asChange({ $set: startFields(index, start), $inc: { [stepField(index, 'attempts')]: 1 } }), PROGRESS),

    recordProcessGroup: (index, pgid) => update({}, { $set: { [stepField(index, 'pgid')]: pgid } }, PROGRESS),

    finishAttempt: (index, result) =>
      update(
        stepIsOpen(index),
        asChange({
          $set: {
            ...(result.start ? startFields(index, result.start) : {}),
            [stepField(index, 'status')]: result.status,
            [stepField(index, 'exit_code')]: result.exitCode,
            [stepField(index, 'pgid')]: null,
            [stepField(index, 'last_exit')]: { attempt: result.exitAttempt, exit_code: result.exitCode, timed_out: result.timedOut },
            ...(result.final ? { [stepField(index, 'completed_at')]: new Date() } : {}),
            ...result.fields,
          },
          ...(result.start ? { $inc: { [stepField(index, 'attempts')]: 1 } } : {}),
        }),
      ).then((written) => written.matchedCount > 0),

    failStep: (index, fields) =>
      update(
        stepIsOpen(index),
        asChange({ $set: { [stepField(index, 'status')]: 'failed', [stepField(index, 'completed_at')]: new Date(), [stepField(index, 'pgid')]: null, ...fields } }),
      ),
  };
}
