import { isCancellation, proxyLocalActivities, setCurrentDetails, sleep } from '@temporalio/workflow';
import type { HealthCheckActivities } from '../activities/health-checks';
import { NON_RETRYABLE_FAILURES } from '../src/domain/contracts/failure-types';
import type { FleetTarget, HealthAttemptResult, HealthCheck } from '../src/domain/contracts/runs';
import { firstLine, messageOf } from './failures';

/** Short database work: recording a check's end, or an attempt that could not run. */
const recording = proxyLocalActivities<HealthCheckActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '500 milliseconds', maximumInterval: '10 seconds' },
});

/** Why an attempt was not healthy, in a few words: its exit, and the last line it printed. */
function reasonOf(result: HealthAttemptResult | null, unreachable: string | null, timeoutSeconds: number): string {
  if (!result) return `could not run: ${unreachable ?? 'unknown error'}`;
  const exit = result.timedOut ? `timed out after ${timeoutSeconds} s` : `exit code ${result.exitCode}`;
  const last = result.output.split('\n').map((line) => line.trim()).filter(Boolean).pop();
  return last ? `${exit}: ${last.slice(0, 200)}` : exit;
}

/**
 * One target's health check, as a function the fleet workflow calls: the command on the target
 * (`retries` more after the first attempt, `intervalSeconds` apart), each attempt recorded on it; a
 * target still unhealthy after its attempts is failed, its error naming the check and what it said
 * last. Resolves to that error, or null when healthy.
 */
export function targetHealthCheck(check: HealthCheck): (target: FleetTarget) => Promise<string | null> {
  // Local: a check takes milliseconds, a round trip through Temporal's task queue would cost more. A
  // worker that dies mid-check runs it again from the workflow's replay on another worker.
  const checking = proxyLocalActivities<HealthCheckActivities>({
    startToCloseTimeout: (check.timeoutSeconds + 60) * 1000,
    retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 4, nonRetryableErrorTypes: NON_RETRYABLE_FAILURES },
    localRetryThreshold: '100 milliseconds',
  });
  const attempts = check.retries + 1;

  return async function checkTarget(target: FleetTarget): Promise<string | null> {
    let last: HealthAttemptResult | null = null;
    let unreachable: string | null = null;
    for (let attempt = 1; attempt <= attempts; attempt += 1) {
      try {
        last = await checking.runHealthCheck.executeWithOptions({ summary: `health check on ${target.serverTitle} (${attempt}/${attempts})` }, [
          { runId: target.runId, serverId: target.serverId, attempt, command: check.command, timeoutSeconds: check.timeoutSeconds },
        ]);
        unreachable = null;
      } catch (error) {
        if (isCancellation(error)) throw error;
        last = null;
        unreachable = firstLine(messageOf(error));
        await recording.recordUnreachableHealthCheck({ runId: target.runId, attempt, command: check.command, message: unreachable });
      }
      // A healthy attempt ended the check in its own write.
      if (last?.healthy) return null;
      if (attempt < attempts && check.intervalSeconds > 0) await sleep(check.intervalSeconds * 1000);
    }
    const error = `Health check "${firstLine(check.command).slice(0, 120)}" failed on ${target.serverTitle} after ${attempts} attempt${attempts > 1 ? 's' : ''}: ${reasonOf(last, unreachable, check.timeoutSeconds)}`;
    await recording.finishHealthCheck({ runId: target.runId, healthy: false, error });
    return error;
  };
}

/**
 * A batch's health check: after `soakSeconds` (a durable timer), each target whose steps succeeded
 * is checked (targetHealthCheck), all at once. Returns each failed target's error.
 */
export async function checkBatchHealth(targets: FleetTarget[], check: HealthCheck, where: string): Promise<string[]> {
  if (!targets.length) return [];
  if (check.soakSeconds > 0) {
    setCurrentDetails(`${where}: soaking ${check.soakSeconds} s before the health check`);
    await sleep(check.soakSeconds * 1000);
  }
  setCurrentDetails(`${where}: health check on ${targets.length} target${targets.length > 1 ? 's' : ''}`);
  const checkTarget = targetHealthCheck(check);
  return (await Promise.all(targets.map(checkTarget))).filter((error): error is string => error !== null);
}
