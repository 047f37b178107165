import { ActivityFailure, ChildWorkflowFailure, isCancellation } from '@temporalio/workflow';
import type { FleetTarget } from '../src/domain/contracts/runs';
import { isPatched, PATCHES } from './patches';

/** The message of a failure: its cause's, for an activity's (the activity's own says only that it failed). */
export const messageOf = (error: unknown) => {
  const cause = error instanceof ActivityFailure && error.cause ? error.cause : error;
  return cause instanceof Error ? cause.message : String(cause);
};

/** A message's first non-empty line: what fits in a run's or a conversation's one-line `error`. */
export const firstLine = (message: string) => message.split('\n').find((line) => line.trim())?.trim() ?? message;

/** Why a fleet target failed, in one line: its run's failure (the first failed step, its server and why), or its workflow's. */
export function targetFailureLine(target: FleetTarget, error: unknown): string {
  const cause = error instanceof ChildWorkflowFailure && error.cause ? error.cause : error;
  if (isCancellation(cause)) return `${target.serverTitle}: cancelled`;
  return firstLine(cause instanceof Error ? cause.message : String(cause));
}

/**
 * Whether this workflow ends as its run or conversation did (Failed, Cancelled). Workflows recorded
 * before that (Bosun 0895c8d and older) completed whatever happened: replayed — a query on a closed
 * one, a worker picking up an open one — they still must. Asked at each end, never earlier.
 */
export const endsAsItsOutcome = () => isPatched(PATCHES.honestWorkflowOutcome);

/** What a workflow recorded before endsAsItsOutcome returned: nothing. */
export const RECORDED_WITHOUT_RESULT = undefined as never;
