import type { ChangeStreamDocument } from 'mongodb';
import { changeShaped, pickFields, type ChangeListener } from '../change-streams';
import { actorView } from '../access/actor';
import type { DeploymentRunUpdatedEvent, RunFreezeOverrideState, RunFreezeState, RunGateState, RunHealthState, RunPauseState, RunRollbackState, RunStepState } from '../events';
import { iso } from '../timestamps';
import type { DeploymentRun } from './model';
import { toWaitsState } from './waits';

/*
 * How a change of a run (made by the transitions in runs.ts) becomes a DeploymentRunUpdated event:
 * what the relay asks the change stream for, and the event it makes of each change.
 */

/** A step's state, as events and the run's targets show it (no command, no output). */
export const toStepState = (s: DeploymentRun['steps'][number]) => ({
  name: s.name,
  status: s.status,
  exit_code: s.exit_code ?? null,
  attempts: s.attempts ?? 0,
  started_at: iso(s.started_at),
  completed_at: iso(s.completed_at),
}) satisfies RunStepState;

/** A fleet run's rollback as the API and its events show it. */
export const toRollbackState = (r: DeploymentRun['rollback']): RunRollbackState | null =>
  r
    ? {
        status: r.status as RunRollbackState['status'],
        reason: r.reason,
        requested_by: actorView(r.requested_by),
        touched: r.touched,
        succeeded: r.succeeded ?? 0,
        failed: r.failed ?? 0,
        summary: r.summary ?? null,
        started_at: iso(r.started_at)!,
        completed_at: iso(r.completed_at),
      }
    : null;

/** A fleet target's health check as the API and its events show it. */
export const toHealthState = (h: DeploymentRun['health']): RunHealthState | null =>
  h
    ? {
        status: h.status as RunHealthState['status'],
        command: h.command,
        attempts: h.attempts.map((a) => ({ attempt: a.attempt, at: iso(a.at)!, exit_code: a.exit_code ?? null, timed_out: !!a.timed_out, output: a.output ?? '' })),
        started_at: iso(h.started_at)!,
        completed_at: iso(h.completed_at),
      }
    : null;

/** A run's gate as the API and its events show it. */
export const toGateState = (g: NonNullable<DeploymentRun['gate']>): RunGateState => ({
  before_batch: g.before_batch,
  before_target: g.before_target ?? null,
  approvals_required: g.approvals_required,
  approvals: g.approvals.map((a) => ({ by: actorView(a.by)!, at: iso(a.at)!, comment: a.comment ?? null, plan_hash: a.plan_hash ?? null })),
  opened_at: iso(g.opened_at)!,
  expires_at: iso(g.expires_at)!,
  outcome: (g.outcome as RunGateState['outcome'] | undefined) ?? null,
  rejected_by: actorView(g.rejected_by),
  reason: g.reason ?? null,
});

/** A run's pause while it matters (asked or held; one still asked when the run ended is moot). */
export const toPauseState = (r: Pick<DeploymentRun, 'pause' | 'status'>): RunPauseState | null =>
  r.pause && (r.status === 'running' || r.status === 'paused')
    ? { by: actorView(r.pause.by)!, reason: r.pause.reason, requested_at: iso(r.pause.requested_at)!, paused_at: iso(r.pause.paused_at) }
    : null;

/** The freezes a run is held by, while it is (status frozen). */
export const toFreezeState = (r: Pick<DeploymentRun, 'freeze' | 'status'>): RunFreezeState | null =>
  r.freeze && r.status === 'frozen' ? { names: [...r.freeze.names], until: iso(r.freeze.until)!, since: iso(r.freeze.since)! } : null;

/** A person's override of the freezes the run was triggered through. */
export const toFreezeOverrideState = (o: DeploymentRun['freeze_override']): RunFreezeOverrideState | null =>
  o ? { by: actorView(o.by)!, at: iso(o.at)!, reason: o.reason, freezes: [...o.freezes] } : null;

/** A change as the relay receives it: the post-image without outputs, and the names of the fields it set. */
type RelayedChange = ChangeStreamDocument<DeploymentRun> & { changedKeys?: string[] };

/** The event of one change; null for bookkeeping writes that do not advance the run's sequence. */
export function toRunEvent(change: RelayedChange): DeploymentRunUpdatedEvent | null {
  if (change.operationType !== 'insert' && change.operationType !== 'update' && change.operationType !== 'replace') return null;
  const doc = change.fullDocument;
  if (!doc) return null;
  const updated = change.operationType === 'update' ? (change.changedKeys ?? []) : ['seq', 'last_chunk'];
  if (!updated.includes('seq')) return null;
  const chunk = updated.includes('last_chunk') ? doc.last_chunk : null;
  const steps = doc.steps.map(toStepState);
  const output =
    chunk && typeof chunk.step === 'number'
      ? { server_id: doc.server_id ? doc.server_id.toString() : null, step: chunk.step, step_name: doc.steps[chunk.step]?.name ?? '', offset: chunk.offset ?? 0, data: chunk.data ?? '' }
      : null;
  if (doc.parent_run_id) {
    // A fleet run's target: the event is its run's, naming the target.
    return {
      run_id: doc.parent_run_id.toString(),
      deployment_id: doc.deployment_id.toString(),
      seq: null,
      status: null,
      started_at: null,
      completed_at: null,
      error: null,
      steps: [],
      target: {
        server_id: String(doc.server_id),
        title: doc.server_title ?? String(doc.server_id),
        host: doc.server_host ?? null,
        batch: doc.batch ?? 1,
        status: doc.status,
        started_at: iso(doc.started_at),
        completed_at: iso(doc.completed_at),
        error: doc.error ?? null,
        seq: doc.seq,
        steps,
        health: toHealthState(doc.health),
      },
      output,
      gate: null,
      pause: null,
    };
  }
  return {
    run_id: doc._id.toString(),
    deployment_id: doc.deployment_id.toString(),
    seq: doc.seq,
    status: doc.status,
    started_at: iso(doc.started_at),
    completed_at: iso(doc.completed_at),
    error: doc.error ?? null,
    steps: doc.fleet ? [] : steps,
    target: null,
    output,
    gate: doc.gate ? toGateState(doc.gate) : null,
    pause: toPauseState(doc),
    rollback: toRollbackState(doc.rollback),
    freeze: toFreezeState(doc),
    freeze_override: toFreezeOverrideState(doc.freeze_override),
    waits: toWaitsState(doc),
  };
}

/** Of a run's post-image, what an event shows: never outputs (events carry each change's appended chunk), nor commands, nor the execution bookkeeping of every step. */
const RUN_FIELDS = ['_id', 'organization_id', 'deployment_id', 'seq', 'status', 'started_at', 'completed_at', 'error', 'last_chunk', 'parent_run_id', 'server_id', 'server_title', 'server_host', 'batch', 'gate', 'pause', 'health', 'rollback', 'freeze', 'freeze_override', 'waited'];
const STEP_FIELDS = ['name', 'status', 'exit_code', 'attempts', 'started_at', 'completed_at'];

/**
 * What the relay asks the API's change stream for, and is given of each change (src/api/realtime/relay.ts):
 * only changes that advance the run's sequence (every change of a status or of output does;
 * bookkeeping writes such as a command's process group id are not sent to the API at all), and of
 * the post-image only RUN_FIELDS, the fleet's size and each step's STEP_FIELDS.
 */
export const runChanges = (collection: string): Pick<ChangeListener, 'collections' | 'match' | 'shape'> => ({
  collections: [collection],
  match: { $or: [{ operationType: { $ne: 'update' } }, { 'updateDescription.updatedFields.seq': { $exists: true } }] },
  shape: changeShaped({
    $mergeObjects: [
      pickFields('$fullDocument', RUN_FIELDS),
      { fleet: { $cond: [{ $eq: [{ $type: '$fullDocument.fleet' }, 'object'] }, { total: '$fullDocument.fleet.total' }, '$$REMOVE'] } },
      { steps: { $cond: [{ $isArray: '$fullDocument.steps' }, { $map: { input: '$fullDocument.steps', in: pickFields('$$this', STEP_FIELDS) } }, '$$REMOVE'] } },
    ],
  }),
});
