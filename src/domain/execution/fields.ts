import { Schema } from 'mongoose';

/**
 * The fields the step executor reads and writes (activities/step-execution.ts, step-log.ts): the same
 * names on a deployment run's steps and on a conversation's steps.
 */
export const executionFields = {
  // The execution log: output as produced (head and tail kept, the cut marked), then notes and failure details.
  output: { type: String, default: '' },
  output_bytes: { type: Number, default: 0 },
  // Characters streamed so far (uncapped): where the next live chunk starts.
  streamed: { type: Number, default: 0 },
  // The result of the latest exit attempt, so a retried activity never runs a finished command again.
  // `outputs_error`: what BOSUN_OUTPUT held was refused, failing a command that exited 0.
  last_exit: { type: new Schema({ attempt: Number, exit_code: Number, timed_out: Boolean, outputs_error: String }, { _id: false }), default: null },
  exit_code: { type: Number, default: null },
  attempts: { type: Number, default: 0 },
  // The exit attempt whose command was started last: started again without a result means it was interrupted.
  started_exit_attempt: { type: Number, default: null },
  started_at: { type: Date, default: null },
  completed_at: { type: Date, default: null },
  // The remote process group of the running command, so a retry or a cancel can stop it.
  pgid: { type: Number, default: null },
} as const;

/** On the document holding the steps: the output appended by its latest change, relayed as a chunk (older chunks live in the steps' output). */
export const lastChunkField = { type: new Schema({ step: Number, offset: Number, data: String }, { _id: false }), default: null } as const;
