import { DEFAULT_STEP_LIMIT_SECONDS, type StepAttempt, type StepOutcome, type StepResult } from '../src/domain/contracts/runs';
import { failure } from '../src/domain/contracts/failure-types';
import { DeploymentRunModel } from '../src/domain/deployments/model';
import { openParameters, parameterEnvironment, secretParameterValues } from '../src/domain/deployments/parameters';
import * as runs from '../src/domain/deployments/runs';
import { openSecrets, organizationSecretValues } from '../src/domain/secrets/model';
import { loadSshTarget } from '../src/domain/servers/credentials';
import { HeldSteps } from './held-steps';
import { wakeWaiting as wakeWaitingRuns, type RunQueueActivityDeps } from './run-queue';
import { credentialSecrets, verifiedTargetOf } from './ssh-target';
import { executionSettings, recordedCommandResult, startStepExecution, type StepExecution, type StepExecutionDeps } from './step-execution';
import { follow, followLocally } from './step-follow';
import { stopLeftoverCommands } from './leftover-commands';
import { StepLog } from './step-log';

/**
 * A deployment run's steps, each one SSH command run by one activity: started locally, handed off
 * when it runs long, failed for good, cancelled.
 */
export interface DeploymentActivityDeps extends StepExecutionDeps {
  /** This worker's own task queue, where a long step's command is followed after its hand-off. */
  handoffTaskQueue: string;
  /** A run's last step ends it: the queue of its server is woken for the run waiting next. */
  wakeQueue: RunQueueActivityDeps['wakeQueue'];
  /** How long a step runs as a local activity before its hand-off; the workflow's STEP_HANDOFF_AFTER_MS unless given (tests hold quick steps longer). */
  stepHandoffAfterMs?: number;
}

/** The run's last step: its success ends the run in the same write, then its end is told (`afterEnd`) from the run that write returned. */
const endingFinish =
  (steps: runs.RunStepTransitions, afterEnd: (ended: runs.SucceededRun) => Promise<void>) =>
  async (index: number, result: Parameters<runs.RunStepTransitions['finishStepEndingRun']>[1]) => {
    const ended = await steps.finishStepEndingRun(index, result);
    return ended && (() => afterEnd(ended));
  };

/** Best effort: a step that ends without its command's result (cancelled in a retry pause, given up) may leave it running. */
function leftoverKiller(deps: Parameters<typeof stopLeftoverCommands>[0]) {
  return async (runId: string, pgids: number[], stepIndex: number | null = null) => {
    if (!pgids.length) return;
    const run = await DeploymentRunModel.findById(runId, { server_id: 1 }).lean();
    await stopLeftoverCommands(deps, run?.server_id, pgids, { kind: 'run', id: runId, stepIndex });
  };
}

export function createDeploymentActivities({ secretBox, sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs = 200, handoffTaskQueue, wakeQueue, stepHandoffAfterMs }: DeploymentActivityDeps) {
  const settings = executionSettings({ sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs });
  const heldSteps = new HeldSteps();
  const wakeWaiting = wakeWaitingRuns(wakeQueue);

  const killLeftovers = leftoverKiller({ secretBox, sshPool, log });

  /**
   * Starts a step's command, or returns the result of this attempt when it already finished (its
   * worker died before reporting): a finished command never runs twice. The run's last step
   * (`endsRun`) ends the run with its success, in its result's write.
   */
  async function startExecution(input: StepAttempt): Promise<StepResult | StepExecution> {
    const { runId, index } = input;
    const found = await runs.stepToRun(runId, index);
    const step = found?.run.steps[0];
    if (!found || !step) throw failure('RunNotFound', `Run ${runId} has no step ${index}`);
    const { run } = found;
    const target = await verifiedTargetOf(found.server, secretBox);
    const organizationSecrets = openSecrets(found.secrets, input.organizationId, secretBox);
    // A fleet's target or a rollback run is not told of (its fleet run is); `ended`: the run as its last step's write left it.
    const afterEnd = async (ended?: runs.SucceededRun) => {
      if (runs.isDeploymentsOwnRun(run)) await runs.recordRunSucceeded(runId, ended && { run: ended, server: found.server ?? undefined });
      await wakeWaiting(await runs.runEnded(run));
    };
    const audit = { kind: 'run', stepName: step.name } as const;
    const recorded = await recordedCommandResult(step, { attempt: input, audit });
    if (recorded) {
      // Its result's write ended the run, and what follows may not have happened (its worker died): again.
      if (!input.endsRun || recorded.status !== 'success' || run.status !== 'success') return recorded;
      await afterEnd();
      return { ...recorded, endedRun: true };
    }
    const parameters = openParameters(run, secretBox);
    const steps = runs.runSteps(runId);
    return startStepExecution(settings, {
      attempt: input,
      step,
      target,
      // A rollback run's steps also learn why they run.
      environment: { ...parameterEnvironment(parameters), ...(run.rolls_back ? { BOSUN_ROLLBACK_REASON: run.rolls_back.reason } : {}) },
      secrets: [...credentialSecrets(target), ...organizationSecrets, ...secretParameterValues(parameters)],
      limitSeconds: step.timeout_seconds ?? DEFAULT_STEP_LIMIT_SECONDS,
      outputs: { earlierNames: run.output_names },
      steps,
      successEnds: input.endsRun ? { finish: endingFinish(steps, afterEnd) } : undefined,
      audit,
    });
  }

  return {
    /**
     * Runs one step's command once, to the end, heartbeating: streaming its output into the run
     * document while it runs. An exit status is a result (returned); a lost connection is a transport
     * failure (thrown, retried).
     */
    async runStep(input: StepAttempt): Promise<StepResult> {
      const started = await startExecution(input);
      if ('status' in started) return started;
      return follow(started);
    },

    /**
     * `runStep` as a local activity, which cannot heartbeat: a command still running after
     * `handoffAfterMs` is left running here and handed to `awaitStep` on this worker's own task queue.
     */
    async startStep(input: StepAttempt & { handoffAfterMs: number }): Promise<StepOutcome> {
      // This attempt run again while its command still runs (or just ended) here: followed, never started twice.
      const started = heldSteps.claim(input) ?? (await startExecution(input));
      if ('status' in started) return started;
      const finished = await followLocally(started, stepHandoffAfterMs ?? input.handoffAfterMs, () => heldSteps.hold(input, started));
      if (finished) return finished;
      heldSteps.hold(input, started);
      return { handedOff: handoffTaskQueue };
    },

    /** Follows a command handed off by `startStep` on this worker to its end. */
    async awaitStep(input: StepAttempt): Promise<StepResult> {
      const execution = heldSteps.claim(input);
      if (!execution) throw failure('StepNotHeld', 'This worker no longer holds the command');
      return follow(execution);
    },

    /**
     * A step whose activity failed for good (the server unreachable or refusing us, retries spent):
     * its leftover command is stopped and the step fails, with the reason at the end of its output.
     * Only a step still pending or running moves: a finished step keeps its result.
     */
    async failRunStep({ runId, index, message }: { runId: string; index: number; message: string }): Promise<void> {
      const found = await runs.findRunStep(runId, index);
      if (!found) return;
      const { run, step } = found;
      const [loaded, organizationSecrets] = await Promise.all([
        loadSshTarget(String(run.server_id), secretBox).catch(() => null),
        organizationSecretValues(run.organization_id.toString(), secretBox).catch(() => []),
      ]);
      const steps = runs.runSteps(runId);
      const secrets = [...(loaded ? credentialSecrets(loaded.target) : []), ...organizationSecrets, ...secretParameterValues(openParameters(run, secretBox))];
      const stepLog = new StepLog(steps, index, step, settings, secrets, log, { runId, index });
      stepLog.note(`${step.output && !step.output.endsWith('\n') ? '\n' : ''}--- failed: ${message} ---\n`);
      await steps.failStep(index, { chunk: stepLog.finalChunk() });
      // Stopped once failed: a command killed before would record its own exit over this failure.
      if (step.pgid) await killLeftovers(runId, [step.pgid], index);
      log.warn({ runId, index, message }, 'step failed for good');
    },

    /**
     * After a cancel: the running step and every pending one become cancelled, and its command is
     * stopped (by this worker when it holds it, handed off and not followed yet). Closed before the
     * kill: a command killed before would end as a failure in the execution still holding it.
     */
    async cancelSteps({ runId }: { runId: string }): Promise<void> {
      await heldSteps.cancelRun(runId);
      await killLeftovers(runId, await runs.cancelSteps(runId));
    },
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
