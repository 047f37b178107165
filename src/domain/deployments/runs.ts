import type { Actor } from '../access/actor';
import { Types, type ClientSession } from 'mongoose';
import type { RunStepDefinition } from '../contracts/runs';
import { giveBackTurn } from './turn-release';
import { OrganizationSecretModel, type OrganizationSecret } from '../secrets/model';
import type { StoredServer } from '../servers/credentials';
import { ServerModel, type Server } from '../servers/model';
import { asChange, stepField, stepTransitions, type AttemptResult, type StepKind, type StepTransitions } from '../execution/steps';
import { BEGUN_RUN_STATUSES, DeploymentRunModel, type BegunRunStatus, type DeploymentRun, type RunStatus, type StepStatus } from './model';
import { stepDefinitions } from './new-runs';
import { closeWaitingTargets } from './targets';
import { inTransaction } from '../database';
import { endEventOf, recordRunEvent, runEventFields, type EventRun, type KnownForEvent } from './notification-events';

/*
 * The runs store: every write to a deployment run goes through these transitions; new-runs.ts
 * creates runs, targets.ts moves a fleet run's targets to their places. Each checks the state it
 * leaves and advances the run's event sequence once; API, activities and the worker's sweeps all
 * call them. A run's end gives its server's turn back (turn-release.ts).
 */

/** A queued run taken back (its trigger could not finish); one a queue already started stays. */
export async function withdrawQueuedRun(runId: Types.ObjectId): Promise<void> {
  await DeploymentRunModel.deleteOne({ _id: runId, status: 'queued' });
}

/** A deployment's run history, deleted with it. */
export async function deleteRunsOf(deploymentId: Types.ObjectId, session?: ClientSession): Promise<void> {
  await DeploymentRunModel.deleteMany({ deployment_id: deploymentId }, { session });
}

/**
 * queued → running; the run, or null when it has ended (cancelled while queued, closed by a sweep).
 * A run already running is its workflow's own, begun before its worker died: it carries on.
 */
export async function beginRun(runId: string): Promise<DeploymentRun | null> {
  const run =
    (await DeploymentRunModel.findOneAndUpdate({ _id: runId, status: 'queued' }, asChange({ $set: { status: 'running', started_at: new Date() } }), {
      returnDocument: 'after',
    }).lean<DeploymentRun>()) ??
    // Begun already by this workflow (its local activity run again after its worker died), and maybe held by a freeze since.
    (await DeploymentRunModel.findOne({ _id: runId, status: { $in: ['running', 'frozen'] } }).lean<DeploymentRun>());
  return run;
}

/** The fields a run's end sets: its status, error and time. The run's last step sets them with its own result (one write: `finishStepEndingRun`). */
const endFields = (status: RunStatus, error: string | null = null) => ({ status, error, completed_at: new Date() });

/** What a run's end needs of it after its final write (`runEnded`). */
export type EndedRun = Pick<DeploymentRun, '_id' | 'parent_run_id' | 'server_id' | 'organization_id' | 'queue_seq'> & Partial<Pick<DeploymentRun, 'rolls_back'>>;
const ENDED_RUN_FIELDS = { parent_run_id: 1, server_id: 1, organization_id: 1, queue_seq: 1, rolls_back: 1 } as const;

/**
 * Whether a run is its deployment's own (its end is an event; it is in the deployment's runs list):
 * not a fleet's target (its fleet run is), not a rollback run (read through its fleet run's targets).
 */
export const isDeploymentsOwnRun = (run: Partial<Pick<DeploymentRun, 'parent_run_id' | 'rolls_back'>>) => !run.parent_run_id && !run.rolls_back;

/** The query of a deployment's own runs (`isDeploymentsOwnRun`): its runs list, its last run. */
export const ownRunsOf = (deploymentId: Types.ObjectId) => ({ deployment_id: deploymentId, parent_run_id: null, rolls_back: null });

/**
 * running (or a fleet run waiting between batches) → its final status, its server's turn given back.
 * A run already closed (by the API, its workflow gone) keeps the status it was given: null.
 */
export async function finishRun(runId: string, status: RunStatus, error: string | null) {
  // The end and its notification event, in one transaction.
  const run = await inTransaction(async (session) => {
    const ended = await DeploymentRunModel.findOneAndUpdate({ _id: runId, status: { $in: BEGUN_RUN_STATUSES } }, asChange({ $set: endFields(status, error) }), {
      returnDocument: 'after',
      projection: ENDED_RUN_FIELDS,
      session,
    }).lean();
    const event = endEventOf(status);
    if (ended && event && isDeploymentsOwnRun(ended)) await recordRunEvent(runId, event, { session, key: runEndKey(runId) });
    return ended;
  });
  return run ? runEnded(run) : null;
}

/** One end event per run, however its end is recorded (and repeated). */
const runEndKey = (runId: string | Types.ObjectId) => `run.end:${String(runId)}`;

/**
 * The event of a run its last step ended (that step's result and the run's end are one write, on
 * the hot path of every step): recorded by the step's activity after that write, and again by its
 * retry when its worker died between the two, once (`runEndKey`).
 */
export async function recordRunSucceeded(runId: string, known?: KnownForEvent): Promise<void> {
  await recordRunEvent(runId, 'run.succeeded', { key: runEndKey(runId), known });
}

/**
 * After a run's final write (its `endFields`): its server's turn given back. Repeating it is
 * harmless. The ended run's server and organization, and the run waiting first in the server's
 * queue when the turn was this run's and runs took places after its own: the queue must be woken for it.
 */
export async function runEnded(run: EndedRun) {
  const waiting = await giveBackTurn(run);
  return { serverId: run.server_id ?? null, organizationId: run.organization_id, waiting };
}

/**
 * Ends a run that nothing will carry on (still in `from`), its open steps closed as its workflow
 * would have: a cancelled run's cancelled; a failed run's running step failed and the rest skipped.
 * False when the run was no longer in `from` (`begun`: any of running, awaiting_approval, paused, frozen).
 */
export async function closeRun(runId: Types.ObjectId, from: 'queued' | BegunRunStatus | 'begun', to: 'cancelled' | 'failed', extra: { error?: string; cancel_requested_at?: Date; cancelled_by?: Actor } = {}) {
  const now = new Date();
  // The close and (for a deployment's run) its notification event, in one transaction.
  const closed = await inTransaction(async (session) => {
    const found = await DeploymentRunModel.findOneAndUpdate(
      { _id: runId, status: from === 'begun' ? { $in: BEGUN_RUN_STATUSES } : from },
      asChange({
        $set: {
          ...extra,
          status: to,
          completed_at: now,
          'steps.$[running].status': to,
          'steps.$[running].completed_at': now,
          'steps.$[running].pgid': null,
          'steps.$[pending].status': to === 'cancelled' ? 'cancelled' : 'skipped',
        },
      }),
      { arrayFilters: [{ 'running.status': 'running' }, { 'pending.status': 'pending' }], projection: { parent_run_id: 1, rolls_back: 1, fleet: 1, server_id: 1, queue_seq: 1 }, session },
    ).lean();
    if (found && isDeploymentsOwnRun(found)) await recordRunEvent(runId, to === 'cancelled' ? 'run.cancelled' : 'run.failed', { session, key: runEndKey(runId) });
    return found;
  });
  if (!closed) return false;
  await giveBackTurn(closed);
  // A fleet run's targets close with it: those waiting as it ends, those running as a run would.
  if (closed.fleet) {
    await closeWaitingTargets(runId, to === 'cancelled' ? 'cancelled' : 'skipped');
    for await (const target of DeploymentRunModel.find({ parent_run_id: runId, status: { $in: ['queued', 'running'] } }, { status: 1 }).lean().cursor()) {
      await closeRun(target._id, target.status as 'queued' | 'running', to, extra.error ? { error: extra.error } : {});
    }
  }
  return true;
}

/** How a run ended (its status and error), for a workflow that found it ended before it began; null when it does not exist. */
export async function howRunEnded(runId: string): Promise<{ status: string; error: string | null } | null> {
  const run = await DeploymentRunModel.findById(runId, { status: 1, error: 1 }).lean();
  return run ? { status: run.status, error: run.error ?? null } : null;
}

/** A run's steps as its workflow runs them: a retry's run skips the steps that succeeded before (marked only then: older histories replay the same). */
export const stepsToRun = (run: Pick<DeploymentRun, 'steps' | 'start_step'>): RunStepDefinition[] =>
  stepDefinitions(run.steps).map((step, index) => (index < (run.start_step ?? 0) ? { ...step, skip: true } : step));

/** Bookkeeping: a person asked to cancel (the API shows the run's status, not this). */
export async function requestCancel(runId: Types.ObjectId, by: Actor): Promise<void> {
  await DeploymentRunModel.updateOne({ _id: runId }, { $set: { cancel_requested_at: new Date(), cancelled_by: by } });
}

/**
 * What running one step of a run needs, in one round trip: the run with just that step (the others'
 * output can be megabytes) and the names of the outputs its earlier steps recorded, its server with
 * the sealed credentials (null when deleted), and its organization's sealed secrets. Null when the
 * run does not exist.
 */
export async function stepToRun(runId: string, index: number) {
  const [found] = await DeploymentRunModel.aggregate<{
    run: Pick<DeploymentRun, 'status' | 'parameters' | 'steps' | 'rolls_back'> & EndedRun & { output_names: string[] };
    server: Array<StoredServer & Pick<Server, 'tags'>>;
    secrets: Array<Pick<OrganizationSecret, 'name' | 'value'>>;
  }>([
    { $match: { _id: new Types.ObjectId(runId) } },
    {
      $project: {
        run: {
          ...Object.fromEntries(['_id', 'status', 'parameters', ...Object.keys(ENDED_RUN_FIELDS)].map((field) => [field, `$${field}`])),
          steps: { $slice: ['$steps', index, 1] },
          // The outputs earlier steps recorded, by name alone (their values can be megabytes).
          output_names: {
            $reduce: { input: { $slice: ['$steps', index] }, initialValue: [], in: { $setUnion: ['$$value', { $ifNull: ['$$this.outputs.name', []] }] } },
          },
        },
      },
    },
    { $lookup: { from: ServerModel.collection.collectionName, localField: 'run.server_id', foreignField: '_id', as: 'server' } },
    {
      $lookup: {
        from: OrganizationSecretModel.collection.collectionName,
        localField: 'run.organization_id',
        foreignField: 'organization_id',
        as: 'secrets',
        pipeline: [{ $project: { name: 1, value: 1 } }],
      },
    },
  ]);
  return found ? { run: found.run, server: found.server[0] ?? null, secrets: found.secrets } : null;
}

/** A run's one step (its output alone can be megabytes, the others' too), with what failing it needs of the run; null when either is gone. */
export async function findRunStep(runId: string, index: number) {
  const run = await DeploymentRunModel.findById(runId, { server_id: 1, organization_id: 1, parameters: 1, steps: { $slice: [index, 1] } }).lean();
  const step = run?.steps[0];
  return run && step ? { run, step } : null;
}

const RUN_STEPS: StepKind = { model: DeploymentRunModel, successStatus: 'success', recordsExecutionSuccess: false };

/** The writes of a run's steps as a command runs (see StepTransitions), and the one that ends the run with its last step. */
export interface RunStepTransitions extends StepTransitions {
  /**
   * The run's last step succeeded: the step's result, its output and the run's success in one write
   * (one change, one `seq`; `runEnded` and its event follow, from the run it returns). Null when the
   * step was no longer open: the run is left as it is.
   */
  finishStepEndingRun(index: number, result: Omit<AttemptResult, 'succeeded' | 'final'>): Promise<SucceededRun | null>;
}

/** A run as its last step's success left it: what its end and its event read. */
export type SucceededRun = EventRun & EndedRun;
const SUCCEEDED_RUN_FIELDS = { ...runEventFields('run.succeeded'), ...ENDED_RUN_FIELDS };

export function runSteps(runId: string): RunStepTransitions {
  const steps = stepTransitions(RUN_STEPS, runId);
  return {
    ...steps,
    finishStepEndingRun: (index, result) => steps.finishAttemptEnding<SucceededRun>(index, { ...result, succeeded: true, final: true }, endFields('success'), SUCCEEDED_RUN_FIELDS),
  };
}

/** Steps in `statuses` (of those `which` picks) move to `to`; one change, or none when no step moved. Returns the process groups the run's steps had. */
async function moveSteps(runId: string, statuses: StepStatus[], to: StepStatus, which: (index: number) => boolean, finished = false): Promise<number[]> {
  const run = await DeploymentRunModel.findById(runId, { 'steps.status': 1, 'steps.pgid': 1 }).lean();
  if (!run) return [];
  const now = new Date();
  const $set: Record<string, unknown> = {};
  run.steps.forEach((step, index) => {
    if (!statuses.includes(step.status) || !which(index)) return;
    $set[stepField(index, 'status')] = to;
    if (step.status === 'running' && finished) $set[stepField(index, 'completed_at')] = now;
    if (finished) $set[stepField(index, 'pgid')] = null;
  });
  if (Object.keys($set).length) await DeploymentRunModel.updateOne({ _id: runId }, asChange({ $set }));
  return run.steps.flatMap((step) => (step.pgid ? [step.pgid] : []));
}

/** Steps from `from` on that have not run: skipped. */
export const skipSteps = async (runId: string, from: number): Promise<void> => {
  await moveSteps(runId, ['pending'], 'skipped', (index) => index >= from);
};

/**
 * After a cancel: the running step and every pending one become cancelled. The process groups of
 * the commands the run's steps had, read before (to stop once they are closed).
 */
export const cancelSteps = (runId: string) => moveSteps(runId, ['pending', 'running'], 'cancelled', () => true, true);

/** A deployment's last run, as its list and page show it. */
export interface LastRun {
  status: RunStatus;
  /** When it began; while it is queued, when it was triggered. */
  at: Date;
}

/**
 * Each deployment's last run: its newest run (the first of its runs list: not a fleet's target, not
 * a rollback run), read from the run itself, so what the list says is the run's status now, whatever
 * it went through (queued, awaiting approval, paused, frozen, ended).
 */
export async function lastRunsOf(deploymentIds: Types.ObjectId[]): Promise<Map<string, LastRun>> {
  const runs = await Promise.all(
    deploymentIds.map((id) =>
      DeploymentRunModel.findOne(ownRunsOf(id), { deployment_id: 1, status: 1, started_at: 1, createdAt: 1 })
        .sort({ createdAt: -1, _id: -1 })
        .lean<Pick<DeploymentRun, '_id' | 'deployment_id' | 'status' | 'started_at' | 'createdAt'>>(),
    ),
  );
  return new Map(runs.flatMap((run) => (run ? [[run.deployment_id.toString(), { status: run.status as RunStatus, at: run.started_at ?? run.createdAt }] as const] : [])));
}
