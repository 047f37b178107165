import { asChange } from '../execution/steps';
import { DeploymentRunModel } from './model';

/*
 * A fleet target's health check after its batch, part of the runs store: each attempt recorded as
 * it ends, then the check's end — a target whose check failed for good is failed with it, in one
 * write (a target is a run: its status is the runs store's).
 */

export interface RecordedHealthAttempt {
  attempt: number;
  at: Date;
  exit_code: number | null;
  timed_out: boolean;
  output: string;
}

/**
 * One attempt of a target's check, recorded once (a retried activity records it again as nothing).
 * A healthy attempt ends the check in the same write (`success`): the common case is one write.
 */
export async function recordHealthAttempt(targetId: string, command: string, attempt: RecordedHealthAttempt, healthy = false): Promise<void> {
  const ended = healthy ? { status: 'success', completed_at: attempt.at } : { status: 'running', completed_at: null };
  const first = await DeploymentRunModel.updateOne(
    { _id: targetId, health: null },
    asChange({ $set: { health: { command, attempts: [attempt], started_at: attempt.at, ...ended } } }),
  );
  if (first.modifiedCount) return;
  await DeploymentRunModel.updateOne(
    { _id: targetId, 'health.status': 'running', 'health.attempts.attempt': { $ne: attempt.attempt } },
    asChange({ $push: { 'health.attempts': attempt }, ...(healthy ? { $set: { 'health.status': 'success', 'health.completed_at': attempt.at } } : {}) }),
  );
}

/**
 * The check's end: healthy, or failed — the target then `failed` with `error` (it had succeeded).
 * False when it had ended already (a repeat).
 */
export async function finishHealth(targetId: string, healthy: boolean, error: string | null): Promise<boolean> {
  const now = new Date();
  const ended = await DeploymentRunModel.updateOne(
    { _id: targetId, 'health.status': 'running' },
    asChange({
      $set: {
        'health.status': healthy ? 'success' : 'failed',
        'health.completed_at': now,
        ...(healthy ? {} : { status: 'failed', error }),
      },
    }),
  );
  return ended.modifiedCount > 0;
}
