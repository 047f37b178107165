import { ActivityFailure } from '@temporalio/workflow';

/** The message of a failure: its cause's, for an activity's (the activity's own says only that it failed). */
export const messageOf = (error: unknown) => {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
};

/** A message's first non-empty line: what fits in a run's or a conversation's one-line `error`. */
export const firstLine = (message: string) => message.split('\n').find((line) => line.trim())?.trim() ?? message;
