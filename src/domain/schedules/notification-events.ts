import type { ClientSession, Types } from 'mongoose';
import { recordNotificationEvent } from '../notifications/event-outbox';

/* A schedule's notification event, as its store records a tick that did not run (in its transaction). */

type Id = string | Types.ObjectId;

export interface SkippedTick {
  organizationId: Id;
  scheduleId: Id;
  scheduleName: string;
  deploymentId: Id | null;
  pipelineId: Id | null;
  scheduledAt: Date;
  outcome: string;
  message: string | null;
}

export async function recordTickSkipped(tick: SkippedTick, session: ClientSession): Promise<void> {
  const id = String(tick.scheduleId);
  await recordNotificationEvent(
    {
      organizationId: tick.organizationId,
      type: 'schedule.tick_skipped',
      subject: { kind: 'schedule', id },
      deploymentId: tick.deploymentId,
      payload: {
        summary: `Schedule ${tick.scheduleName}: the tick of ${tick.scheduledAt.toISOString()} did not run (${tick.outcome}${tick.message ? `: ${tick.message}` : ''})`,
        schedule: {
          id,
          name: tick.scheduleName,
          deployment_id: tick.deploymentId ? String(tick.deploymentId) : null,
          pipeline_id: tick.pipelineId ? String(tick.pipelineId) : null,
          scheduled_at: tick.scheduledAt.toISOString(),
          outcome: tick.outcome,
          message: tick.message,
        },
        console_path: tick.pipelineId ? `/pipelines/${String(tick.pipelineId)}` : `/deployments/${String(tick.deploymentId)}`,
      },
    },
    { session },
  );
}
