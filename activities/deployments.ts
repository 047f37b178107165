import { DeploymentModel, DeploymentRunModel, type DeploymentRun, type RunStatus } from '../src/domain/deployments/model';
import * as runs from '../src/domain/deployments/runs';
import type { Logger } from '../src/logger';
import { openSecrets, organizationSecretValues } from '../src/domain/secrets/model';
import { ServerModel } from '../src/domain/servers/model';
import type { SecretBox } from '../src/domain/secrets/secret-box';
import { loadSshTarget } from '../src/domain/servers/credentials';
import type { SshPool } from '../src/domain/ssh/pool';
import { Types } from 'mongoose';
import { openParameters, parameterEnvironment, secretParameterValues } from '../src/domain/deployments/parameters';
import { releaseTurn, takePlaceAndTurn, takeRunQueuePlaces } from '../src/domain/servers/store';
import { runsAhead, runsWaitingOn, takeTurn, takeTurnIfFirst } from '../src/domain/deployments/turns';
import {
  DEFAULT_STEP_LIMIT_SECONDS,
  fleetTargetWorkflowId,
  type FleetPlan,
  type FleetTarget,
  type TargetQueued,
  type TargetTurn,
  type QueuedRun, type RunStepDefinition, type StepAttempt, type StepOutcome, type StepResult } from '../workflows/contracts';
import { failure } from '../workflows/failure-types';
import { credentialSecrets, verifiedTargetOf } from './ssh-target';
import { cancellingWith, executionSettings, follow, recordedResult, startStepExecution, stopLeftoverCommands, type StepExecution } from './step-execution';
import { StepLog } from './step-log';

export interface DeploymentActivityDeps {
  secretBox: SecretBox;
  sshPool: SshPool;
  log: Logger;
  /** Per-step output kept for polling: a quarter from the start, the rest from the end. */
  stepOutputLimitBytes: number;
  /** How much of a step's output its whole log keeps (default 64 MiB). */
  stepLogLimitBytes?: number;
  /** How often streamed output is persisted (and so relayed live). */
  outputFlushMs?: number;
  /** This worker's own task queue, where a long step's command is followed after its hand-off. */
  handoffTaskQueue: string;
  /** Wakes a server's run queue (starting it when idle): a fleet target that took its place there. */
  wakeQueue: (serverId: string, organizationId: string) => Promise<void>;
  /** How long a step runs as a local activity before its hand-off; the workflow's STEP_HANDOFF_AFTER_MS unless given (tests hold quick steps longer). */
  stepHandoffAfterMs?: number;
}

/** How long a handed-off command that finished stays claimable by `awaitStep`. */
const HELD_STEP_GRACE_MS = 5 * 60_000;
/** A fleet target and its server: what it needs to take its place in the server's queue. */
type TargetPlace = { runId: string; serverId: string; organizationId: string };

const heldStepKey = ({ runId, index, exitAttempt }: StepAttempt) => `${runId}:${index}:${exitAttempt}`;

export function createDeploymentActivities({ secretBox, sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs = 200, handoffTaskQueue, wakeQueue, stepHandoffAfterMs }: DeploymentActivityDeps) {
  const settings = executionSettings({ sshPool, log, stepOutputLimitBytes, stepLogLimitBytes, outputFlushMs });
  /** Commands handed off by `startStep`, waiting for their `awaitStep`. */
  const heldSteps = new Map<string, StepExecution>();

  /** Best effort: a step that ends without its command's result (cancelled in a retry pause, given up) may leave it running. */
  async function killLeftovers(runId: string, pgids: number[]) {
    if (!pgids.length) return;
    const run = await DeploymentRunModel.findById(runId, { server_id: 1 }).lean();
    await stopLeftoverCommands({ secretBox, sshPool, log }, run?.server_id, pgids, { runId });
  }

  /**
   * After a run's final write: a fleet target that took its server's turn itself wakes the server's
   * queue when runs took places there after its own and wait.
   */
  async function wakeWaiting(ended: Awaited<ReturnType<typeof runs.runEnded>> | null) {
    if (ended?.fleetTarget && ended.placedAfter && (await runsWaitingOn(ended.serverId!))) await wakeQueue(ended.serverId!.toString(), ended.organizationId.toString());
  }

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
    const afterEnd = async () => wakeWaiting(await runs.runEnded(run, 'success'));
    const recorded = recordedResult(step, input.exitAttempt);
    if (recorded) {
      // Its result's write ended the run, and what follows may not have happened (its worker died): again.
      if (!input.endsRun || recorded.status !== 'success' || run.status !== 'success') return recorded;
      await afterEnd();
      return { ...recorded, endedRun: true };
    }
    const parameters = openParameters(run, secretBox);
    return startStepExecution(settings, {
      attempt: input,
      step,
      target,
      environment: parameterEnvironment(parameters),
      secrets: [...credentialSecrets(target), ...organizationSecrets, ...secretParameterValues(parameters)],
      limitSeconds: step.timeout_seconds ?? DEFAULT_STEP_LIMIT_SECONDS,
      steps: runs.runSteps(runId),
      successEnds: input.endsRun ? { fields: () => runs.endFields('success'), after: afterEnd } : undefined,
    });
  }

  /** A server that cannot take a target (gone, or never verified: its host key unknown): the target fails, unrun (false: it is not queued). */
  async function failUnplaceable({ runId, serverId, organizationId }: TargetPlace): Promise<{ failed: string } | null> {
    const exists = await ServerModel.exists({ _id: serverId, organization_id: organizationId });
    const why = `Not run: ${exists ? 'the server has not been verified: its host key is unknown, so Bosun will not connect' : 'the server no longer exists'}`;
    return (await runs.failTarget(runId, why)) ? { failed: why } : null;
  }

  /**
   * A target's place in its server's queue, taken once (a repeated call, its workflow task retried,
   * finds it placed); place null when it is no longer queued.
   */
  async function placeTarget({ runId, serverId, organizationId }: TargetPlace): Promise<{ place: number | null } | { failed: string }> {
    const target = await DeploymentRunModel.findById(runId, { status: 1, queue_seq: 1 }).lean();
    if (!target) throw failure('RunNotFound', `Target run ${runId} does not exist`);
    if (target.status !== 'queued') return { place: null };
    if (target.queue_seq != null) return { place: target.queue_seq };
    const place = await takeRunQueuePlaces(new Types.ObjectId(serverId), organizationId, 1);
    if (place === null) return (await failUnplaceable({ runId, serverId, organizationId })) ?? { place: null };
    await runs.enqueueTarget(runId, place);
    return { place };
  }

  /**
   * A target that found it had a place already, or no longer queued (`takeTargetTurn` repeated after
   * its workflow task was retried, or the target closed meanwhile): carries on from where it is.
   * `tookTurn`: the server's turn is this target's now.
   */
  async function resumeTarget({ runId, serverId, organizationId }: TargetPlace, tookTurn: boolean): Promise<TargetTurn> {
    const target = await DeploymentRunModel.findById(runId, { status: 1, queue_seq: 1 }).lean();
    // Begun before: the run's own begin carries on.
    if (target?.status === 'running') return { turn: true };
    if (target?.status !== 'queued' || target.queue_seq == null) {
      if (tookTurn) await releaseTurn(serverId, new Types.ObjectId(runId));
      if (!target) throw failure('RunNotFound', `Target run ${runId} does not exist`);
      // Ended: the run's begin finds how.
      return { turn: true };
    }
    if (await takeTurnIfFirst(serverId, runId, { place: target.queue_seq, turn: tookTurn })) return { turn: true, steps: await beginRun(runId) };
    await wakeQueue(serverId, organizationId);
    return { queued: true };
  }

  /** A run's steps to run: a retry's run skips the steps that succeeded before (marked only then: older histories replay the same). */
  const stepsToRun = (run: Pick<DeploymentRun, 'steps' | 'start_step'>): RunStepDefinition[] =>
    runs.stepDefinitions(run.steps).map((step, index) => (index < (run.start_step ?? 0) ? { ...step, skip: true } : step));

  /** queued → running; the steps to run (null: the run has ended). */
  async function beginRun(runId: string): Promise<RunStepDefinition[] | null> {
    const run = await runs.beginRun(runId);
    return run && stepsToRun(run);
  }

  return {
    /**
     * queued → running; returns the steps, or null when the run has ended (cancelled while queued).
     * A run already running is this workflow's own, begun before its worker died (a local activity
     * runs again when its workflow task is retried): it carries on.
     */
    beginRun: ({ runId }: { runId: string }) => beginRun(runId),

    /** A fleet run: queued → running, and what its workflow needs to run its batches; null when it has ended (cancelled while queued). */
    async beginFleet({ runId }: { runId: string }): Promise<FleetPlan | null> {
      const run = await runs.beginRun(runId);
      if (!run?.fleet) return null;
      return { total: run.fleet.total, batches: run.fleet.batches, maxFailures: run.fleet.max_failures };
    },

    /** A batch's targets still waiting to start (a target closed meanwhile, by a cancel, is not). */
    async batchTargets({ runId, batch }: { runId: string; batch: number }): Promise<FleetTarget[]> {
      const targets = await DeploymentRunModel.find({ parent_run_id: runId, batch, status: 'queued' }, { server_id: 1, server_title: 1 }).sort({ _id: 1 }).lean();
      return targets.map((t) => ({ runId: t._id.toString(), serverId: t.server_id!.toString(), serverTitle: t.server_title ?? t.server_id!.toString() }));
    },

    /**
     * A target whose batch starts takes its place in its server's queue and wakes it (how targets
     * began before turns were kept in the database: their workflows still call it).
     */
    async queueTarget(input: TargetPlace): Promise<TargetQueued> {
      const placed = await placeTarget(input);
      if ('failed' in placed) return placed;
      await wakeQueue(input.serverId, input.organizationId);
      return { queued: true };
    },

    /**
     * A target whose batch starts takes its place in its server's queue, and the server's turn with
     * it when nothing is ahead of it there (no run queued before it, none running): it begins at
     * once (its steps returned), without the queue, its place and its begin one write. Otherwise the
     * queue is woken and gives the target its turn in order.
     */
    async takeTargetTurn(input: TargetPlace): Promise<TargetTurn> {
      const { runId, serverId, organizationId } = input;
      const taken = await takePlaceAndTurn(new Types.ObjectId(serverId), organizationId, new Types.ObjectId(runId));
      if (!taken) return (await failUnplaceable(input)) ?? resumeTarget(input, false);
      if (taken.turn && !(await runsAhead(serverId, runId, taken.place))) {
        const begun = await runs.beginTarget(runId, taken.place);
        if (begun) return { turn: true, steps: stepsToRun(begun) };
      } else if (await runs.enqueueTarget(runId, taken.place)) {
        if (taken.turn) await releaseTurn(serverId, new Types.ObjectId(runId));
        await wakeQueue(serverId, organizationId);
        return { queued: true };
      }
      return resumeTarget(input, taken.turn);
    },

    /** A fleet run's targets still waiting for their batch (from `fromBatch` on): skipped (too many failures) or cancelled. */
    async closeWaitingTargets({ runId, to, fromBatch }: { runId: string; to: 'skipped' | 'cancelled'; fromBatch: number }): Promise<number> {
      return runs.closeWaitingTargets(runId, to, fromBatch);
    },

    /** A queued run (a target before its turn) that will never start: cancelled. */
    async cancelQueuedRun({ runId }: { runId: string }): Promise<void> {
      await runs.closeRun(new Types.ObjectId(runId), 'queued', 'cancelled');
    },

    /** A queued target whose workflow is gone when its turn comes: failed, so its fleet run and queue move on. */
    async failQueuedTarget({ runId, error }: { runId: string; error: string }): Promise<void> {
      await runs.closeRun(new Types.ObjectId(runId), 'queued', 'failed', { error });
    },

    /** A run that beginRun found already ended (cancelled while queued, or closed by a sweep): how it ended. */
    async endedRun({ runId }: { runId: string }): Promise<{ status: string; error: string | null } | null> {
      const run = await DeploymentRunModel.findById(runId, { status: 1, error: 1 }).lean();
      return run ? { status: run.status, error: run.error ?? null } : null;
    },

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
      const started = await startExecution(input);
      if ('status' in started) return started;
      let handoffTimer: NodeJS.Timeout | undefined;
      const handoff = new Promise<null>((resolve) => {
        handoffTimer = setTimeout(() => resolve(null), stepHandoffAfterMs ?? input.handoffAfterMs);
      });
      const finished = await cancellingWith(started, () => Promise.race([started.result, handoff])).finally(() => clearTimeout(handoffTimer));
      if (finished) return finished;
      const key = heldStepKey(input);
      heldSteps.set(key, started);
      // Nobody came for it (the workflow went another way): it still finishes and records its result.
      // Only this execution is forgotten: a later one under the same key (a replayed attempt) stays.
      const forget = () => {
        if (heldSteps.get(key) === started) heldSteps.delete(key);
      };
      void started.result.catch(() => undefined).finally(() => setTimeout(forget, HELD_STEP_GRACE_MS).unref());
      return { handedOff: handoffTaskQueue };
    },

    /** Follows a command handed off by `startStep` on this worker to its end. */
    async awaitStep(input: StepAttempt): Promise<StepResult> {
      const key = heldStepKey(input);
      const execution = heldSteps.get(key);
      if (!execution) throw failure('StepNotHeld', 'This worker no longer holds the command');
      heldSteps.delete(key);
      return follow(execution);
    },

    /**
     * A step whose activity failed for good (the server unreachable or refusing us, retries spent):
     * its leftover command is stopped and the step fails, with the reason at the end of its output.
     * Only a step still pending or running moves: a finished step keeps its result.
     */
    async failRunStep({ runId, index, message }: { runId: string; index: number; message: string }): Promise<void> {
      const run = await DeploymentRunModel.findById(runId, { server_id: 1, organization_id: 1, parameters: 1, steps: { $slice: [index, 1] } }).lean();
      const step = run?.steps[0];
      if (!run || !step) return;
      const [loaded, organizationSecrets] = await Promise.all([
        loadSshTarget(String(run.server_id), secretBox).catch(() => null),
        organizationSecretValues(run.organization_id.toString(), secretBox).catch(() => []),
      ]);
      const steps = runs.runSteps(runId);
      const secrets = [...(loaded ? credentialSecrets(loaded.target) : []), ...organizationSecrets, ...secretParameterValues(openParameters(run, secretBox))];
      const stepLog = new StepLog(steps, index, step, settings, secrets, log, { runId, index });
      stepLog.note(`${step.output && !step.output.endsWith('\n') ? '\n' : ''}--- failed: ${message} ---\n`);
      await steps.failStep(index, stepLog.finalFields());
      // Stopped once failed: a command killed before would record its own exit over this failure.
      if (step.pgid) await killLeftovers(runId, [step.pgid]);
      log.warn({ runId, index, message }, 'step failed for good');
    },

    /** Steps from `from` on that have not run: skipped. */
    async skipSteps({ runId, from }: { runId: string; from: number }): Promise<void> {
      await runs.skipSteps(runId, from);
    },

    /** After a cancel: the running step and every pending one become cancelled, and its command is stopped. */
    async cancelSteps({ runId }: { runId: string }): Promise<void> {
      const run = await DeploymentRunModel.findById(runId, { 'steps.pgid': 1 }).lean();
      if (!run) return;
      // Closed first: a command killed before would end as a failure in the execution still holding it.
      await runs.cancelSteps(runId);
      await killLeftovers(runId, run.steps.flatMap((step) => (step.pgid ? [step.pgid] : [])));
    },

    /** Only a running run ends here: one the API already closed (its workflow was gone) keeps its status. */
    async finishRun({ runId, status, error }: { runId: string; status: RunStatus; error: string | null }): Promise<void> {
      await wakeWaiting(await runs.finishRun(runId, status, error));
    },

    /**
     * The server's next run, its turn taken: the queued one with the lowest place in the queue. Null
     * when none is queued, or when another run holds the turn (a fleet target that took it itself
     * wakes the queue when it ends).
     */
    async nextQueuedRun({ serverId }: { serverId: string }): Promise<QueuedRun | null> {
      // A fleet target waiting for its batch has no place yet.
      const run = await DeploymentRunModel.findOne({ server_id: serverId, status: 'queued', queue_seq: { $ne: null } }, { steps: 0, parameters: 0 }).sort({ queue_seq: 1 }).lean();
      if (!run || (await takeTurn(serverId, run._id)) !== 'taken') return null;
      const [deployment, server] = await Promise.all([
        DeploymentModel.findById(run.deployment_id, { name: 1 }).lean(),
        ServerModel.findById(serverId, { title: 1 }).lean(),
      ]);
      return {
        runId: run._id.toString(),
        organizationId: run.organization_id.toString(),
        deploymentId: run.deployment_id.toString(),
        serverId,
        deploymentName: deployment?.name ?? '(deleted)',
        triggeredBy: `API token: ${run.triggered_by}`,
        serverTitle: server?.title ?? serverId,
        ...(run.parent_run_id ? { fleetTargetWorkflowId: fleetTargetWorkflowId(run.parent_run_id.toString(), serverId) } : {}),
      };
    },
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
