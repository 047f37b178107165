import type { ChangeStreamDocument, Document } from 'mongodb';
import { FINAL_CONVERSATION_STATUSES, type Conversation } from '../../domain/conversations/model';
import { FINAL_RUN_STATUSES, type DeploymentRun } from '../../domain/deployments/model';
import type { Metrics, StepKind } from './metrics';

type Change<T extends Document> = ChangeStreamDocument<T> & { changedKeys?: string[] };

interface FinishedStep {
  status: string;
  seconds: number;
}

interface StepFields {
  status: string;
  started_at?: Date | null;
  completed_at?: Date | null;
}

/**
 * What one persisted change finished: the document's final status if this change set it, and the
 * steps it gave a final status (a step has its completion time from then on). Read from the fields
 * a change set, so a repeated write of the same status (a retried activity) counts nothing.
 */
export function finishedBy<S extends StepFields>(
  change: Change<{ status: string; steps: S[] }>,
  finalStatuses: readonly string[],
): { status: string | null; steps: FinishedStep[] } {
  if (change.operationType !== 'insert' && change.operationType !== 'update' && change.operationType !== 'replace') return { status: null, steps: [] };
  const doc = change.fullDocument;
  if (!doc) return { status: null, steps: [] };
  const keys = change.operationType === 'update' ? new Set(change.changedKeys ?? []) : null;
  const set = (key: string) => keys === null || keys.has(key);
  const status = set('status') && finalStatuses.includes(doc.status) ? doc.status : null;
  const steps = (doc.steps ?? []).flatMap((step, index) =>
    (set(`steps.${index}.status`) || set(`steps.${index}`)) && step.started_at && step.completed_at
      ? [{ status: step.status, seconds: Math.max(0, (step.completed_at.getTime() - step.started_at.getTime()) / 1000) }]
      : [],
  );
  return { status, steps };
}

function record(metrics: Metrics, kind: StepKind, finished: { status: string | null; steps: FinishedStep[] }, counter: Metrics['runsFinished']) {
  if (finished.status) counter.inc({ status: finished.status });
  for (const step of finished.steps) metrics.stepDuration.observe({ kind, status: step.status }, step.seconds);
}

/** Counts what a run change finished (the run relay hands every change here). */
export const countRunChange = (metrics: Metrics) => (change: Change<DeploymentRun>) =>
  record(metrics, 'deployment', finishedBy(change, FINAL_RUN_STATUSES), metrics.runsFinished);

/** Counts what a conversation change finished (the conversation relay hands every change here). */
export const countConversationChange = (metrics: Metrics) => (change: Change<Conversation>) =>
  record(metrics, 'conversation', finishedBy(change as Change<Conversation & { steps: StepFields[] }>, FINAL_CONVERSATION_STATUSES), metrics.conversationsFinished);
