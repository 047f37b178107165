import { Types, type ClientSession } from 'mongoose';
import type { Actor } from '../access/actor';
import { inTransaction } from '../database';
import { asChange } from '../execution/steps';
import type { StageOfRun } from '../contracts/pipelines';
import { parseDuration } from '../time/durations';
import { FINAL_STAGE_STATUSES, PipelineRunModel, type PipelineRun, type PipelineRunStatus, type StageStatus } from './model';
import { recordPipelineRunEvent } from './notification-events';

/*
 * The pipeline runs store: every write to a pipeline run goes through these transitions. Each
 * checks the state it leaves and advances the run's event sequence once; the API and the pipeline
 * run's activities call them. A stage's own run is a deployment run (deployments/runs.ts).
 */

const OPEN_STAGE: StageStatus[] = ['pending', 'awaiting_approval', 'running'];

/** The filter of a run whose stage `name` is in one of `statuses`, for a positional (`stages.$`) write. */
const stageIn = (runId: string | Types.ObjectId, name: string, statuses: StageStatus[]) => ({ _id: runId, stages: { $elemMatch: { name, status: { $in: statuses } } } });

/** What a pipeline run's status is while it goes on: waiting for people when a gate is open and nothing runs. */
async function settleStatus(runId: string | Types.ObjectId, session?: ClientSession): Promise<void> {
  const run = await PipelineRunModel.findById(runId, { status: 1, 'stages.status': 1 }).session(session ?? null).lean();
  if (!run || !['running', 'awaiting_approval'].includes(run.status)) return;
  const statuses = run.stages.map((stage) => stage.status);
  const status: PipelineRunStatus = statuses.includes('awaiting_approval') && !statuses.includes('running') ? 'awaiting_approval' : 'running';
  if (status !== run.status) await PipelineRunModel.updateOne({ _id: runId, status: run.status }, asChange({ $set: { status } }), { session });
}

/**
 * queued → running; the stages as its workflow schedules them, or null when it ended before (cancelled
 * while queued). A run already running is its workflow's own, begun before its worker died: it carries on.
 */
export async function beginPipelineRun(runId: string): Promise<StageOfRun[] | null> {
  const run =
    (await PipelineRunModel.findOneAndUpdate({ _id: runId, status: 'queued' }, asChange({ $set: { status: 'running', started_at: new Date() } }), { returnDocument: 'after' }).lean<PipelineRun>()) ??
    (await PipelineRunModel.findOne({ _id: runId, status: { $in: ['running', 'awaiting_approval'] } }).lean<PipelineRun>());
  if (!run) return null;
  return run.stages.map((stage) => ({
    name: stage.name,
    needs: stage.needs,
    when: stage.when as StageOfRun['when'],
    gate: stage.gate ? { approvals: stage.gate.approvals, expires_in: stage.gate.expires_in, expires_ms: parseDuration(stage.gate.expires_in) * 1000 } : null,
    status: stage.status,
  }));
}

/** A stage that will not run: skipped, with why. */
export async function skipStage(runId: string, name: string, reason: string): Promise<void> {
  await PipelineRunModel.updateOne(stageIn(runId, name, ['pending']), asChange({ $set: { 'stages.$.status': 'skipped', 'stages.$.error': reason, 'stages.$.completed_at': new Date() } }));
}

/** A stage's gate opens: the stage waits for people until `expires_at`; channels are told (pipeline.awaiting_approval) in the same transaction. */
export async function openStageGate(runId: string, name: string, gate: { approvals: number; expires_in: string }): Promise<Date> {
  const now = new Date();
  const expiresAt = new Date(now.getTime() + parseDuration(gate.expires_in) * 1000);
  await inTransaction(async (session) => {
    const opened = await PipelineRunModel.updateOne(
      stageIn(runId, name, ['pending']),
      asChange({
        $set: {
          'stages.$.status': 'awaiting_approval',
          'stages.$.gate_state': { before_batch: 0, approvals_required: gate.approvals, approvals: [], opened_at: now, expires_in: gate.expires_in, expires_at: expiresAt, outcome: null },
        },
      }),
      { session },
    );
    await settleStatus(runId, session);
    // Only the call that opened it tells (its activity may run again).
    if (opened.modifiedCount) await recordPipelineRunEvent(runId, 'pipeline.awaiting_approval', { session, stage: name });
  });
  const run = await PipelineRunModel.findById(runId, { stages: 1 }).lean<PipelineRun>();
  return run?.stages.find((stage) => stage.name === name)?.gate_state?.expires_at ?? expiresAt;
}

/** One approval, recorded once (by its decision id); the approvals the gate has after it. */
export async function recordStageApproval(runId: string, name: string, approval: { by: Actor; comment: string | null; decision_id: string }): Promise<number> {
  await PipelineRunModel.updateOne(
    { _id: runId, stages: { $elemMatch: { name, status: 'awaiting_approval', 'gate_state.approvals.decision_id': { $ne: approval.decision_id } } } },
    asChange({ $push: { 'stages.$.gate_state.approvals': { ...approval, at: new Date() } } }),
  );
  const run = await PipelineRunModel.findById(runId, { stages: 1 }).lean<PipelineRun>();
  return run?.stages.find((stage) => stage.name === name)?.gate_state?.approvals.length ?? 0;
}

/** A stage's gate decided: approved (the stage goes on), or rejected or expired (the stage fails, with why). */
export async function decideStageGate(runId: string, name: string, outcome: 'approved' | 'rejected' | 'expired', rejection?: { by: Actor; reason: string | null; id: string }): Promise<void> {
  const now = new Date();
  const ending = outcome === 'approved' ? {} : { 'stages.$.status': 'failed', 'stages.$.completed_at': now, 'stages.$.error': gateError(outcome, rejection) };
  await PipelineRunModel.updateOne(
    stageIn(runId, name, ['awaiting_approval']),
    asChange({
      $set: {
        'stages.$.gate_state.outcome': outcome,
        'stages.$.gate_state.decided_at': now,
        ...(rejection ? { 'stages.$.gate_state.rejected_by': rejection.by, 'stages.$.gate_state.reason': rejection.reason, 'stages.$.gate_state.rejection_id': rejection.id } : {}),
        ...ending,
      },
    }),
  );
  await settleStatus(runId);
}

const gateError = (outcome: 'rejected' | 'expired', rejection?: { by: Actor; reason: string | null }) =>
  outcome === 'expired' ? 'its approval gate expired before enough people approved' : `rejected at its approval gate by ${rejection?.by.name ?? 'someone'}${rejection?.reason ? `: ${rejection.reason}` : ''}`;

/** A stage's deployment run stored: the stage runs (its gate, if any, approved). */
export async function stageStarted(runId: string, name: string, deploymentRunId: string): Promise<void> {
  await PipelineRunModel.updateOne(
    stageIn(runId, name, ['pending', 'awaiting_approval']),
    asChange({ $set: { 'stages.$.status': 'running', 'stages.$.deployment_run_id': new Types.ObjectId(deploymentRunId), 'stages.$.started_at': new Date() } }),
  );
  await settleStatus(runId);
}

/** A stage ended: how, why, and the outputs its run recorded (with the names its targets disagreed on). */
export async function stageEnded(runId: string, name: string, end: { status: 'success' | 'failed' | 'cancelled'; error: string | null; outputs?: Record<string, string>; conflicts?: Record<string, string> }): Promise<void> {
  await PipelineRunModel.updateOne(
    stageIn(runId, name, OPEN_STAGE),
    asChange({
      $set: {
        'stages.$.status': end.status,
        'stages.$.error': end.error,
        'stages.$.completed_at': new Date(),
        'stages.$.outputs': end.outputs ?? {},
        'stages.$.output_conflicts': end.conflicts ?? {},
      },
    }),
  );
  await settleStatus(runId);
}

/** A cancel asked of a pipeline run (its workflow cancels its stages' runs and skips what has not begun). */
export async function requestPipelineCancel(runId: Types.ObjectId, by: Actor): Promise<void> {
  await PipelineRunModel.updateOne({ _id: runId, cancel_requested_at: null }, asChange({ $set: { cancel_requested_at: new Date(), cancelled_by: by } }));
}

/** A queued pipeline run that never began: cancelled, its stages with it. Null when it had begun. */
export async function cancelQueuedPipelineRun(runId: Types.ObjectId, by: Actor): Promise<boolean> {
  const now = new Date();
  const done = await PipelineRunModel.updateOne(
    { _id: runId, status: 'queued' },
    asChange({ $set: { status: 'cancelled', completed_at: now, cancel_requested_at: now, cancelled_by: by, 'stages.$[open].status': 'cancelled', 'stages.$[open].completed_at': now } }),
    { arrayFilters: [{ 'open.status': { $in: OPEN_STAGE } }] },
  );
  return done.modifiedCount > 0;
}

/**
 * The end of a pipeline run, from its stages: cancelled when it was, failed when a stage failed
 * (the error names the first), else success. Returns how it ended. A success or failure is told to
 * channels (pipeline.succeeded / pipeline.failed) in the same transaction, once.
 */
export async function finishPipelineRun(runId: string, cancelled: boolean, abandoned?: string): Promise<{ status: PipelineRunStatus; error: string | null }> {
  const run = await PipelineRunModel.findById(runId, { stages: 1, status: 1, error: 1 }).lean<PipelineRun>();
  if (!run) return { status: 'failed', error: 'The pipeline run was deleted' };
  const failed = run.stages.find((stage) => stage.status === 'failed');
  // `abandoned`: nothing will run it any more (its workflow is gone): failed, saying why, whatever its stages did.
  const status: PipelineRunStatus = cancelled ? 'cancelled' : failed || abandoned ? 'failed' : 'success';
  const error = abandoned ?? (failed ? `Stage "${failed.name}" failed: ${failed.error ?? 'its run failed'}` : null);
  const now = new Date();
  await inTransaction(async (session) => {
    const ended = await PipelineRunModel.updateOne(
      { _id: runId, status: { $in: ['queued', 'running', 'awaiting_approval'] } },
      asChange({ $set: { status, error, completed_at: now, 'stages.$[open].status': 'cancelled', 'stages.$[open].completed_at': now } }),
      { arrayFilters: [{ 'open.status': { $nin: FINAL_STAGE_STATUSES } }], session },
    );
    if (ended.modifiedCount && status !== 'cancelled') await recordPipelineRunEvent(runId, status === 'success' ? 'pipeline.succeeded' : 'pipeline.failed', { session });
  });
  const ended = await PipelineRunModel.findById(runId, { status: 1, error: 1 }).lean();
  return { status: (ended?.status as PipelineRunStatus) ?? status, error: ended?.error ?? error };
}
