import { Types } from 'mongoose';
import { batcher, insertEach } from '../batch';
import { OrganizationSecretModel, type OrganizationSecret } from '../secrets/model';
import type { StoredServer } from '../servers/credentials';
import { ServerModel } from '../servers/model';
import { releaseTurn } from '../servers/store';
import { asChange, stepField, stepTransitions, type AttemptResult, type StepKind, type StepTransitions } from '../execution/steps';
import type { StoredParameter } from './parameters';
import { DeploymentModel, DeploymentRunModel, type DeploymentRun, type RunStatus, type StepStatus } from './model';

/*
 * The runs store: every write to a deployment run goes through these transitions (and a run's
 * mark on its deployment, `last_run_*`, with them). Each checks the state it leaves and advances
 * the run's event sequence once; API, activities and the worker's sweeps all call them.
 */

/** A step as a deployment defines it (the optional fields may be unset in older documents). */
type StepDefinition = { name: string; command: string; timeout_seconds?: number | null; retries?: number | null; continue_on_error?: boolean | null };

/** A deployment's steps as runs copy them and the API shows them: every field the schema defaults, set. */
export const stepDefinitions = (steps: readonly StepDefinition[]) =>
  steps.map(({ name, command, timeout_seconds, retries, continue_on_error }) => ({
    name,
    command,
    timeout_seconds: timeout_seconds ?? null,
    retries: retries ?? 0,
    continue_on_error: continue_on_error ?? false,
  }));

/** Inserts runs; one refused (a duplicate idempotency key) fails alone, with its code. Triggers at the same moment share one insert. */
const insertRuns = batcher((runs: Record<string, unknown>[]) => insertEach(DeploymentRunModel.collection, runs));

/**
 * A new queued run, as the schema would build it (every default, on the run and on each step), from
 * defaults taken once from the schema itself rather than a mongoose document per trigger.
 */
const newRun = (() => {
  const { _id, steps, ...runDefaults } = new DeploymentRunModel({ steps: [{ name: 'x', command: 'x' }] }).toObject();
  const { name: _name, command: _command, ...stepDefaults } = steps[0]!;
  return (fields: NewRun): DeploymentRun => {
    const now = new Date();
    return {
      ...runDefaults,
      _id: new Types.ObjectId(),
      ...fields,
      status: 'queued',
      // A retry's run skips the steps that succeeded before.
      steps: stepDefinitions(fields.steps).map((definition, index) => ({ ...stepDefaults, ...definition, status: index < (fields.start_step ?? 0) ? 'skipped' : 'pending' })),
      createdAt: now,
      updatedAt: now,
      __v: 0,
    } as unknown as DeploymentRun;
  };
})();

export type NewRun = Pick<DeploymentRun, 'organization_id' | 'deployment_id' | 'server_id' | 'triggered_by' | 'token_id' | 'idempotency_key' | 'queue_seq'> &
  Partial<Pick<DeploymentRun, 'request_digest' | 'retry_of' | 'start_step' | 'parent_run_id' | 'batch' | 'server_title' | 'server_host'>> & {
    steps: readonly StepDefinition[];
    parameters?: readonly StoredParameter[];
    fleet?: { total: number; batches: number; batch_size: number; max_failures: number; strategy: unknown } | null;
  };

/** A fleet run's target as its trigger creates it: queued, waiting for its batch (no place in its server's queue yet). */
export type NewTarget = Pick<NewRun, 'server_id' | 'batch' | 'server_title' | 'server_host' | 'start_step'>;

const TARGET_INSERT_CHUNK = 1000;

/**
 * A fleet run and its targets, queued. The run first (its idempotency key may refuse it, code
 * 11000), then its targets; if they cannot all be stored, the run is taken back.
 */
export async function createFleetRun(fields: NewRun, targets: NewTarget[]): Promise<DeploymentRun> {
  const run = await createRun(fields);
  try {
    for (let from = 0; from < targets.length; from += TARGET_INSERT_CHUNK) {
      const chunk = targets.slice(from, from + TARGET_INSERT_CHUNK).map((target) =>
        newRun({
          ...fields,
          ...target,
          idempotency_key: null,
          request_digest: null,
          fleet: null,
          retry_of: null,
          queue_seq: null,
          parent_run_id: run._id,
        }),
      );
      await DeploymentRunModel.collection.insertMany(chunk as never[], { ordered: false });
    }
  } catch (error) {
    await DeploymentRunModel.deleteMany({ $or: [{ _id: run._id }, { parent_run_id: run._id }] });
    throw error;
  }
  return run;
}

/** A trigger's run, queued (a snapshot of the deployment's steps). Rejects with code 11000 when its idempotency key was used. */
export async function createRun(fields: NewRun): Promise<DeploymentRun> {
  const run = newRun(fields);
  await insertRuns(run);
  return run;
}

/** A queued run taken back (its trigger could not finish); one a queue already started stays. */
export async function withdrawQueuedRun(runId: Types.ObjectId): Promise<void> {
  await DeploymentRunModel.deleteOne({ _id: runId, status: 'queued' });
}

/** A deployment's run history, deleted with it. */
export async function deleteRunsOf(deploymentId: Types.ObjectId): Promise<void> {
  await DeploymentRunModel.deleteMany({ deployment_id: deploymentId });
}

/**
 * queued → running; the run, or null when it has ended (cancelled while queued, closed by a sweep).
 * A run already running is its workflow's own, begun before its worker died: it carries on.
 */
export async function beginRun(runId: string): Promise<DeploymentRun | null> {
  const run =
    (await DeploymentRunModel.findOneAndUpdate({ _id: runId, status: 'queued' }, asChange({ $set: { status: 'running', started_at: new Date() } }), {
      returnDocument: 'after',
    }).lean<DeploymentRun>()) ?? (await DeploymentRunModel.findOne({ _id: runId, status: 'running' }).lean<DeploymentRun>());
  // A target is not its deployment's run: its fleet run is.
  // Only forward in time: a repeated begin of an older run (its activity retried) leaves a later run's mark.
  if (run && !run.parent_run_id) {
    await DeploymentModel.updateOne(
      { _id: run.deployment_id, $or: [{ last_run_at: null }, { last_run_at: { $lte: run.started_at } }] },
      { $set: { last_run_at: run.started_at, last_run_status: 'running' } },
    );
  }
  return run;
}

/** The fields a run's end sets: its status, error and time. The run's last step sets them with its own result (one write: `finishStepEndingRun`). */
const endFields = (status: RunStatus, error: string | null = null) => ({ status, error, completed_at: new Date() });

/** What a run's end needs of it after its final write (`runEnded`). */
export type EndedRun = Pick<DeploymentRun, '_id' | 'deployment_id' | 'parent_run_id' | 'server_id' | 'organization_id' | 'queue_seq' | 'started_at'>;
export const ENDED_RUN_FIELDS = { deployment_id: 1, parent_run_id: 1, server_id: 1, organization_id: 1, queue_seq: 1, started_at: 1 } as const;

/**
 * running → its final status, its server's turn given back. A run already closed (by the API, its
 * workflow gone) keeps the status it was given: null.
 */
export async function finishRun(runId: string, status: RunStatus, error: string | null) {
  const run = await DeploymentRunModel.findOneAndUpdate({ _id: runId, status: 'running' }, asChange({ $set: endFields(status, error) }), {
    returnDocument: 'after',
    projection: ENDED_RUN_FIELDS,
  }).lean();
  return run ? runEnded(run, status) : null;
}

/**
 * After a run's final write (its `endFields`): its deployment's mark (while this run is its last)
 * and its server's turn given back. Repeating it is harmless. The ended run's server, whether it
 * is a fleet target, and whether runs took places in the server's queue after its own while it
 * held the turn (they may be waiting).
 */
export async function runEnded(run: EndedRun, status: RunStatus) {
  const [, lastPlace] = await Promise.all([
    run.parent_run_id ? null : DeploymentModel.updateOne({ _id: run.deployment_id, last_run_at: run.started_at }, { $set: { last_run_status: status } }),
    run.server_id ? releaseTurn(run.server_id, run._id) : null,
  ]);
  return { serverId: run.server_id ?? null, organizationId: run.organization_id, fleetTarget: !!run.parent_run_id, placedAfter: lastPlace !== null && lastPlace > (run.queue_seq ?? 0) };
}

/**
 * Ends a run that nothing will carry on (still in `from`), its open steps closed as its workflow
 * would have: a cancelled run's cancelled; a failed run's running step failed and the rest skipped.
 * False when the run was no longer in `from`.
 */
export async function closeRun(runId: Types.ObjectId, from: 'queued' | 'running', to: 'cancelled' | 'failed', extra: { error?: string; cancel_requested_at?: Date } = {}) {
  const now = new Date();
  const closed = await DeploymentRunModel.findOneAndUpdate(
    { _id: runId, status: from },
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
    { arrayFilters: [{ 'running.status': 'running' }, { 'pending.status': 'pending' }], projection: { deployment_id: 1, parent_run_id: 1, fleet: 1, server_id: 1, started_at: 1 } },
  ).lean();
  if (!closed) return false;
  if (closed.server_id) await releaseTurn(closed.server_id, closed._id);
  // A run that had begun may be its deployment's last run (one closed while queued never was).
  if (from === 'running' && !closed.parent_run_id) await DeploymentModel.updateOne({ _id: closed.deployment_id, last_run_at: closed.started_at }, { $set: { last_run_status: to } });
  // A fleet run's targets close with it: those waiting as it ends, those running as a run would.
  if (closed.fleet) {
    await closeWaitingTargets(runId, to === 'cancelled' ? 'cancelled' : 'skipped');
    for await (const target of DeploymentRunModel.find({ parent_run_id: runId, status: { $in: ['queued', 'running'] } }, { status: 1 }).lean().cursor()) {
      await closeRun(target._id, target.status as 'queued' | 'running', to, extra.error ? { error: extra.error } : {});
    }
  }
  return true;
}

/** Targets of a fleet run still waiting for their batch (no place in a queue): skipped, or cancelled. One change each. */
export async function closeWaitingTargets(runId: Types.ObjectId | string, to: 'skipped' | 'cancelled', fromBatch = 0): Promise<number> {
  const closed = await DeploymentRunModel.updateMany(
    { parent_run_id: runId, status: 'queued', queue_seq: null, batch: { $gte: fromBatch } },
    asChange({ $set: { status: to, completed_at: new Date(), 'steps.$[open].status': to } }),
    { arrayFilters: [{ 'open.status': 'pending' }] },
  );
  return closed.modifiedCount;
}

/** A target whose batch started takes its place in its server's queue (bookkeeping: its status stays queued); false when it had one, or is not queued. */
export async function enqueueTarget(targetId: string, queueSeq: number): Promise<boolean> {
  const placed = await DeploymentRunModel.updateOne({ _id: targetId, status: 'queued', queue_seq: null }, { $set: { queue_seq: queueSeq } });
  return placed.modifiedCount > 0;
}

/**
 * A target whose batch started, placed in its server's queue and begun at once (it holds the
 * server's turn, nothing ahead of it): queued → running in one write. Null when it had a place
 * already, or is not queued.
 */
export async function beginTarget(targetId: string, queueSeq: number): Promise<Pick<DeploymentRun, 'steps' | 'start_step'> | null> {
  // The driver's own: one per fleet target, every value typed already.
  const now = new Date();
  return DeploymentRunModel.collection.findOneAndUpdate(
    { _id: new Types.ObjectId(targetId), status: 'queued', queue_seq: null },
    asChange({ $set: { queue_seq: queueSeq, status: 'running', started_at: now, updatedAt: now } }),
    { returnDocument: 'after', projection: { steps: 1, start_step: 1 } },
  ) as Promise<Pick<DeploymentRun, 'steps' | 'start_step'> | null>;
}

/** A target that cannot run (its server gone, or never verified): failed, with why, without a step run. False when it was not queued. */
export async function failTarget(targetId: string, error: string): Promise<boolean> {
  const failed = await DeploymentRunModel.updateOne(
    { _id: targetId, status: 'queued' },
    asChange({ $set: { status: 'failed', error, completed_at: new Date(), 'steps.$[open].status': 'skipped' } }),
    { arrayFilters: [{ 'open.status': 'pending' }] },
  );
  return failed.modifiedCount > 0;
}

/** How many of each fleet run's targets are in each status. */
export async function targetCounts(runIds: Types.ObjectId[]): Promise<Map<string, Record<string, number>>> {
  const counts = new Map<string, Record<string, number>>();
  if (!runIds.length) return counts;
  const rows = await DeploymentRunModel.aggregate<{ _id: { run: Types.ObjectId; status: string }; n: number }>([
    { $match: { parent_run_id: { $in: runIds } } },
    { $group: { _id: { run: '$parent_run_id', status: '$status' }, n: { $sum: 1 } } },
  ]);
  for (const row of rows) {
    const key = row._id.run.toString();
    counts.set(key, { ...counts.get(key), [row._id.status]: row.n });
  }
  return counts;
}

/** Bookkeeping: a person asked to cancel (the API shows the run's status, not this). */
export async function requestCancel(runId: Types.ObjectId): Promise<void> {
  await DeploymentRunModel.updateOne({ _id: runId }, { $set: { cancel_requested_at: new Date() } });
}

/**
 * What running one step of a run needs, in one round trip: the run with just that step (the others'
 * output can be megabytes), its server with the sealed credentials (null when deleted), and its
 * organization's sealed secrets. Null when the run does not exist.
 */
export async function stepToRun(runId: string, index: number) {
  const [found] = await DeploymentRunModel.aggregate<{
    run: Pick<DeploymentRun, 'status' | 'parameters' | 'steps'> & EndedRun;
    server: StoredServer[];
    secrets: Array<Pick<OrganizationSecret, 'name' | 'value'>>;
  }>([
    { $match: { _id: new Types.ObjectId(runId) } },
    {
      $project: {
        run: {
          ...Object.fromEntries(['_id', 'status', 'parameters', ...Object.keys(ENDED_RUN_FIELDS)].map((field) => [field, `$${field}`])),
          steps: { $slice: ['$steps', index, 1] },
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
   * (one change, one `seq`; `runEnded` follows). False when the step was no longer open: the run is
   * left as it is.
   */
  finishStepEndingRun(index: number, result: Omit<AttemptResult, 'succeeded' | 'final'>): Promise<boolean>;
}

export function runSteps(runId: string): RunStepTransitions {
  const steps = stepTransitions(RUN_STEPS, runId);
  return { ...steps, finishStepEndingRun: (index, result) => steps.finishAttemptEnding(index, { ...result, succeeded: true, final: true }, endFields('success')) };
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
