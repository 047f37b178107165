import { CancelledFailure } from '@temporalio/activity';
import type { StepResult } from '../src/domain/contracts/runs';
import { failure } from '../src/domain/contracts/failure-types';
import type { AttemptResult } from '../src/domain/execution/steps';
import { parseOutputFile } from '../src/domain/execution/output-file';
import type { RunningAttempt } from './step-attempt';
import { commandOutcome, type RanCommand } from './step-run';

/**
 * The command ended: its result recorded, once its entry in the trail is acknowledged and every kill
 * of it recorded (no result is stored without them). A command that was stopped ends the activity by
 * throwing (cancelled, or handed back at shutdown); any other's last output and result are one write,
 * with its end in the trail beside it. The run's last step ends the run in that write (`successEnds`).
 */
export async function recordAttemptResult(attempt: RunningAttempt, { exit, entry }: RanCommand): Promise<StepResult> {
  const { input, stepLog, start, stop } = attempt;
  const { index, finalExitAttempt } = input.attempt;
  await entry.written();
  await stop.settled();
  const reason = stop.reason;
  const ended = () => entry.end(commandOutcome(attempt, exit), exit);
  // A quick command that ended before its start was written: the result's write records the start
  // too (one change). A stopped one has its start written now, before its notes.
  const startInResult = reason === null ? start.intoResult() : undefined;
  if (reason !== null) start.write();
  if (reason === 'timeout') stepLog.note(`\n--- timed out after ${input.limitSeconds} s: the command's process group was killed ---\n`);
  if (reason === 'cancel') {
    stepLog.note("\n--- cancelled: the command's process group was killed ---\n");
    await Promise.all([stepLog.flush(), ended()]);
    throw new CancelledFailure('Cancelled while the command ran');
  }
  if (reason === 'shutdown') {
    stepLog.note("\n--- this Bosun worker is shutting down: the command's process group was killed; another worker runs it again ---\n");
    await Promise.all([stepLog.flush(), ended()]);
    // Killed: the next attempt has no group of this one's to stop (its id may be reused by then).
    await stepLog.write((s) => s.recordProcessGroup(index, null)).catch(stepLog.warn('the process group'));
    throw failure('WorkerShutdown', 'The worker shut down while the command ran');
  }
  // A command that ended on its own: what it wrote to BOSUN_OUTPUT is recorded, or refused (the step fails).
  const parsed = input.outputs && reason === null && exit.outputFile ? parseOutputFile(exit.outputFile, input.secrets, input.outputs.earlierNames) : null;
  // Refused after a zero exit, the file is why the step failed; after another, it is said beside the exit code.
  const outputsError = exit.exitCode === 0 ? (parsed?.error ?? null) : null;
  const succeeded = exit.exitCode === 0 && reason === null && !outputsError;
  if (parsed?.error) stepLog.note(`\n--- ${parsed.error}${outputsError && !finalExitAttempt ? '; retrying' : ''} ---\n`);
  if (!succeeded && !outputsError && !finalExitAttempt) stepLog.note(`\n--- exit code ${exit.exitCode ?? exit.signal}; retrying ---\n`);
  else if (!succeeded && !outputsError && input.failureNote && reason === null) stepLog.note(`\n--- failed: exit code ${exit.exitCode ?? exit.signal} ---\n`);
  const ends = succeeded ? input.successEnds : undefined;
  const result: AttemptResult = {
    succeeded,
    exitCode: exit.exitCode,
    timedOut: reason === 'timeout',
    exitAttempt: input.attempt.exitAttempt,
    final: succeeded || finalExitAttempt,
    start: startInResult,
    chunk: stepLog.finalChunk(),
    ...(input.outputs ? { outputs: parsed?.outputs ?? [], outputsError } : {}),
  };
  const [afterEnd] = await Promise.all([stepLog.write(async (s) => (ends ? ends.finish(index, result) : (await s.finishAttempt(index, result), null))), ended()]);
  const stepResult: StepResult = { status: succeeded ? 'success' : 'failed', exitCode: exit.exitCode, timedOut: reason === 'timeout', ...(outputsError ? { outputsError } : {}) };
  if (!afterEnd) return stepResult;
  await afterEnd();
  return { ...stepResult, endedRun: true };
}
