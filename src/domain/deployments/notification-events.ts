import type { ClientSession, Types } from 'mongoose';
import { actorView, triggeredByText } from '../access/actor';
import { ServerModel } from '../servers/model';
import { recordNotificationEvent, type EventType } from '../notifications/event-outbox';
import { DeploymentModel, DeploymentRunModel, type DeploymentRun } from './model';

/*
 * A deployment run's notification events, as its store transitions record them: only a run of a
 * deployment (a one-server run or a fleet run) is told of, never a fleet's target nor a rollback run
 * (the fleet run speaks for them).
 */

/** How many of the failed step's last lines an event carries (already redacted when stored). */
const FAILED_STEP_LINES = 20;

type RunId = string | Types.ObjectId;

const tail = (text: string | null | undefined, lines: number) => {
  const all = (text ?? '').replace(/\n+$/, '').split('\n');
  return all.slice(-lines).join('\n');
};

/** The run's console page, relative to the console's address (the sender prefixes PUBLIC_URL). */
export const runConsolePath = (deploymentId: string, runId: string) => `/deployments/${deploymentId}/runs/${runId}`;

/** The run's fields an event of `type` reads. */
export const runEventFields = (type: EventType) => ({
  organization_id: 1, deployment_id: 1, server_id: 1, parent_run_id: 1, rolls_back: 1, status: 1, error: 1, actor: 1, triggered_by: 1,
  started_at: 1, completed_at: 1, createdAt: 1, retry_of: 1, schedule: 1, fleet: 1, gate: 1, pause: 1, rollback: 1,
  // A step's output can be long: read only for a failure's last lines.
  'steps.name': 1, 'steps.status': 1, ...(type === 'run.failed' ? { 'steps.output': 1 } : {}),
} as const);

/** A run as an event reads it (`runEventFields`). */
export type EventRun = Pick<DeploymentRun, '_id' | 'organization_id' | 'deployment_id' | 'server_id' | 'parent_run_id' | 'rolls_back' | 'status' | 'error' | 'actor' | 'triggered_by' | 'started_at' | 'completed_at' | 'createdAt' | 'retry_of' | 'schedule' | 'fleet' | 'gate' | 'pause' | 'rollback'> & {
  steps: Array<{ name: string; status: string; output?: string | null }>;
};

/** What the caller read already, as the change left it: the run (`runEventFields`), its server's tags. */
export interface KnownForEvent {
  run?: EventRun;
  server?: { _id: Types.ObjectId; tags?: string[] | null };
}

/**
 * Records `type` for run `runId`, read in `session` (the transition's own transaction) as the change
 * left it. Nothing for a target or a rollback run. `key` makes it once-only when its transition may repeat.
 */
export async function recordRunEvent(runId: RunId, type: EventType, { session, key, extra = {}, known }: { session?: ClientSession; key?: string; extra?: Record<string, unknown>; known?: KnownForEvent } = {}): Promise<void> {
  const run = known?.run ?? (await DeploymentRunModel.findById(runId, runEventFields(type)).session(session ?? null).lean<EventRun>());
  if (!run || run.parent_run_id || run.rolls_back) return;
  const [deployment, serverIds] = await Promise.all([
    DeploymentModel.findById(run.deployment_id, { name: 1 }).session(session ?? null).lean(),
    run.server_id ? [run.server_id] : DeploymentRunModel.distinct('server_id', { parent_run_id: run._id }).session(session ?? null),
  ]);
  const servers =
    known?.server && run.server_id?.equals(known.server._id) ? [known.server] : await ServerModel.find({ _id: { $in: serverIds.filter(Boolean) } }, { tags: 1 }).session(session ?? null).lean();
  const failedStep = type === 'run.failed' ? await failedStepOf(run, session) : null;
  const runId_ = run._id.toString();
  const deploymentId = run.deployment_id.toString();
  const summary = summaryOf(type, deployment?.name ?? deploymentId, run);
  await recordNotificationEvent(
    {
      organizationId: run.organization_id,
      type,
      subject: { kind: 'run', id: runId_ },
      deploymentId: run.deployment_id,
      serverIds: serverIds.filter(Boolean) as Types.ObjectId[],
      tags: [...new Set(servers.flatMap((s) => (s.tags as string[] | undefined) ?? []))],
      superseded: type === 'run.failed' && run.rollback?.status != null && run.rollback.requested_by == null,
      payload: {
        summary,
        run: {
          id: runId_,
          status: run.status,
          error: run.error ?? null,
          actor: actorView(run.actor),
          triggered_by: triggeredByText(run),
          started_at: run.started_at?.toISOString() ?? null,
          completed_at: run.completed_at?.toISOString() ?? null,
          retry_of: run.retry_of?.toString() ?? null,
          schedule: run.schedule ? { id: run.schedule.id.toString(), name: run.schedule.name } : null,
          fleet: run.fleet ? { targets: run.fleet.total ?? null } : null,
          ...(run.gate && (type === 'run.awaiting_approval' || type === 'run.approval_expiring') ? { gate: { before_batch: run.gate.before_batch, ...(run.gate.before_target ? { before_target: run.gate.before_target } : {}), approvals_required: run.gate.approvals_required, expires_at: run.gate.expires_at.toISOString() } } : {}),
          ...(run.pause && type === 'run.paused' ? { pause: { by: run.pause.by.name, reason: run.pause.reason } } : {}),
          ...(run.rollback && type === 'run.rolled_back' ? { rollback: { status: run.rollback.status, summary: run.rollback.summary, reason: run.rollback.reason } } : {}),
          ...(failedStep ? { failed_step: failedStep } : {}),
        },
        deployment: { id: deploymentId, name: deployment?.name ?? null },
        // A run waiting for people opens with its gate in view.
        console_path: `${runConsolePath(deploymentId, runId_)}${type === 'run.awaiting_approval' || type === 'run.approval_expiring' ? '#gate' : ''}`,
        ...extra,
      },
      key,
    },
    { session },
  );
}

type RunForEvent = { _id: Types.ObjectId; fleet?: unknown; steps: Array<{ name: string; status: string; output?: string | null }> };

/** The step that failed and its last lines: the run's own, or for a fleet run its first failed target's. */
async function failedStepOf(run: RunForEvent, session?: ClientSession) {
  let steps = run.steps;
  let server: string | null = null;
  if (run.fleet) {
    const target = await DeploymentRunModel.findOne({ parent_run_id: run._id, status: 'failed' }, { server_title: 1, 'steps.name': 1, 'steps.status': 1, 'steps.output': 1 })
      .sort({ completed_at: 1 })
      .session(session ?? null)
      .lean();
    if (!target) return null;
    steps = target.steps;
    server = target.server_title ?? null;
  }
  const index = steps.findIndex((s) => s.status === 'failed');
  if (index < 0) return null;
  const step = steps[index]!;
  return { index: index + 1, name: step.name, server, last_lines: tail(step.output, FAILED_STEP_LINES) };
}

const SUMMARIES: Partial<Record<EventType, string>> = {
  'run.succeeded': 'succeeded',
  'run.failed': 'failed',
  'run.cancelled': 'was cancelled',
  'run.awaiting_approval': 'is waiting for approval',
  'run.approval_expiring': 'is waiting for approval: the gate expires within the hour',
  'run.paused': 'is paused',
  'run.rolled_back': 'rolled back',
};

function summaryOf(type: EventType, name: string, run: { error?: string | null; rollback?: { summary?: string | null } | null }) {
  const base = `Run of ${name} ${SUMMARIES[type] ?? type}`;
  if (type === 'run.failed' && run.error) return `${base}: ${run.error}`;
  if (type === 'run.rolled_back' && run.rollback?.summary) return `${base}: ${run.rollback.summary}`;
  return base;
}

/** The event a run's end becomes. */
export const endEventOf = (status: string): EventType | null =>
  status === 'success' ? 'run.succeeded' : status === 'failed' ? 'run.failed' : status === 'cancelled' ? 'run.cancelled' : null;
