/** The Socket.IO contract, shared by the server, the CLI and the tests. */

export interface RunStepState {
  name: string;
  status: string;
  exit_code: number | null;
  attempts: number;
  started_at: string | null;
  completed_at: string | null;
}

/** One persisted change of a run: its state after the change, and the output the change appended. */
/**
 * A change of a run, or of one target of a fleet run. For a run's own change `target` is null and the
 * run's fields are set; for a target's change `target` says which and how it is now, and the run's
 * own fields are null (its status changes come in events of their own).
 */
export interface DeploymentRunUpdatedEvent {
  run_id: string;
  deployment_id: string;
  /** Per run, +1 for every change of the run itself; a client that sees a gap re-reads the run over HTTP. Null in a target's event. */
  seq: number | null;
  status: string | null;
  started_at: string | null;
  completed_at: string | null;
  /** A failed run's one line: which step failed, where and why (as GET shows it); null otherwise. */
  error: string | null;
  /** A one-server run's steps; empty in a fleet run's events (its targets' events have theirs). */
  steps: RunStepState[];
  /** The target that changed (a fleet run's), as the run's `targets` show it, with its own `seq` (+1 per change of that target). */
  target: RunTargetState | null;
  /**
   * Output appended by this change, already redacted. `offset` counts the characters the step had
   * streamed before it, so a client that already printed past it can skip what it has seen.
   * `server_id` names the server it came from.
   */
  output: { server_id: string | null; step: number; step_name: string; offset: number; data: string } | null;
  /** A fleet run's approval gate (waiting, or as last decided) and its pause, as GET shows them; null in a target's event. */
  gate: RunGateState | null;
  pause: RunPauseState | null;
  /** A fleet run's rollback, from its start to its end; null in a target's event and when none ran. */
  rollback?: RunRollbackState | null;
  /** The change freezes a fleet run is held by between batches (status frozen); null otherwise and in a target's event. */
  freeze?: RunFreezeState | null;
  /** Who triggered the run through change freezes, and why; null when none was overridden. */
  freeze_override?: RunFreezeOverrideState | null;
  /** How long the run waited (at gates, paused, frozen) apart from the time it ran, as GET shows it; absent in a target's event. */
  waits?: RunWaitsState;
}

/**
 * How long a run waited, in whole seconds: the holds that ended, by kind, and the one going on
 * (counted from `since` until now); the same between two changes, so a client counts on from it.
 */
export interface RunWaitsState {
  approval_seconds: number;
  paused_seconds: number;
  frozen_seconds: number;
  /** The hold going on: at an approval gate, paused, or frozen, since when; null while the run runs, and once it ended. */
  current: { for: 'approval' | 'pause' | 'freeze'; since: string } | null;
}

export interface RunFreezeState {
  names: string[];
  /** When they lift, as things stood when last checked (the run checks again then, or sooner when a freeze changes). */
  until: string;
  since: string;
}

export interface RunFreezeOverrideState {
  by: EventActor;
  at: string;
  reason: string;
  freezes: string[];
}

export interface RunRollbackState {
  status: 'running' | 'success' | 'failed';
  reason: string;
  requested_by: EventActor | null;
  touched: number;
  succeeded: number;
  failed: number;
  summary: string | null;
  started_at: string;
  completed_at: string | null;
}

export interface EventActor {
  type: 'person' | 'service_account';
  id: string;
  name: string;
  token_id: string | null;
}

export interface RunGateState {
  before_batch: number;
  /** In a rolling window: the target it stands before (its group is before_batch); null with batches. */
  before_target: number | null;
  approvals_required: number;
  approvals: Array<{ by: EventActor; at: string; comment: string | null; plan_hash: string | null }>;
  opened_at: string;
  expires_at: string;
  outcome: 'approved' | 'rejected' | 'expired' | null;
  rejected_by: EventActor | null;
  reason: string | null;
}

export interface RunPauseState {
  by: EventActor;
  reason: string;
  requested_at: string;
  paused_at: string | null;
}

export interface RunTargetState {
  server_id: string;
  title: string;
  host: string | null;
  batch: number;
  status: string;
  started_at: string | null;
  completed_at: string | null;
  error: string | null;
  seq: number;
  steps: RunStepState[];
  /** Its health check after its batch (a fleet target's; null when none ran). */
  health: RunHealthState | null;
  /** Its rollback (a fleet target the run touched, once its run rolled back): the rollback run, its status and steps. Absent in events. */
  rollback?: { run_id: string; status: string; steps: RunStepState[] } | null;
}

export interface RunHealthState {
  status: 'running' | 'success' | 'failed';
  command: string;
  attempts: Array<{ attempt: number; at: string; exit_code: number | null; timed_out: boolean; output: string }>;
  started_at: string;
  completed_at: string | null;
}

/** A step of a conversation as GET /api/v1/conversations/{id} shows it. */
export interface ConversationStepState {
  id: string;
  status: string;
  execution_success: boolean | null;
  execution_log: string;
  created_at: string | null;
  title: string;
  command: string;
  target: string;
  server_id: string | null;
  /** Set on a step that moves data between a migration plan's servers. */
  transfer: {
    kind: string;
    source_server_id: string | null;
    from: string | null;
    to: string | null;
    source_command: string | null;
    target_command: string | null;
  } | null;
  risk: string;
  message_id: string;
  exit_code: number | null;
  approval: { decision: string | null; decided_by: string | null; decided_at: string | null } | null;
  started_at: string | null;
  completed_at: string | null;
}

/** One persisted change of a conversation's step. Several events share a seq when one change touched several steps. */
export interface ConversationStepUpdatedEvent {
  conversation_id: string;
  /** Per conversation, +1 for every change; a client that sees a gap re-reads the conversation over HTTP. */
  seq: number;
  /** The conversation's status after the change. */
  conversation_status: string;
  step: ConversationStepState;
  /** Output this change appended to the step's execution log (already redacted), from character `offset`. */
  chunk: { offset: number; data: string } | null;
}

/** The conversation's own status changed (running, awaiting_approval, completed, failed, cancelled). */
export interface ConversationUpdatedEvent {
  conversation_id: string;
  seq: number;
  status: string;
  completed_at: string | null;
  error: string | null;
}

/** A pipeline run changed (any change: each bumps its `seq`): the run as GET /pipelines/{id}/runs/{run_id} returns it. */
export interface PipelineRunUpdatedEvent {
  pipeline_run_id: string;
  /** Per pipeline run, +1 for every change; a client that sees a gap re-reads the run over HTTP. */
  seq: number;
  run: unknown;
}

export type Ack<T> = (response: { ok: true; data: T } | { ok: false; error: { code: string; message: string } }) => void;

export interface ClientToServerEvents {
  /** Start receiving a run's events; the answer is the run as GET returns it, with its current `seq`. */
  /** The acknowledgement is optional (typed as given, so clients' emitWithAck keeps its answer type). */
  subscribe: (request: { run_id: string }, ack: Ack<{ seq: number; run: unknown }>) => void;
  unsubscribe: (request: { run_id: string }, ack?: Ack<null>) => void;
  /**
   * Start receiving a conversation's events (all its steps, or only `step_ids`); the answer is the
   * conversation as GET returns it, with its current `seq`.
   */
  subscribe_conversation: (request: { conversation_id: string; step_ids?: string[] }, ack: Ack<{ seq: number; conversation: unknown }>) => void;
  unsubscribe_conversation: (request: { conversation_id: string }, ack?: Ack<null>) => void;
  /** Start receiving a pipeline run's events; the answer is the run as GET returns it, with its current `seq`. */
  subscribe_pipeline_run: (request: { pipeline_run_id: string }, ack: Ack<{ seq: number; run: unknown }>) => void;
  unsubscribe_pipeline_run: (request: { pipeline_run_id: string }, ack?: Ack<null>) => void;
}

export interface ServerToClientEvents {
  DeploymentRunUpdated: (event: DeploymentRunUpdatedEvent) => void;
  ConversationStepUpdated: (event: ConversationStepUpdatedEvent) => void;
  ConversationUpdated: (event: ConversationUpdatedEvent) => void;
  PipelineRunUpdated: (event: PipelineRunUpdatedEvent) => void;
  /**
   * The organization's runs changed in what lists of them show (a run began, changed status, or its
   * gate was decided on): sent to every socket of the organization, naming nothing; a client re-reads
   * what it shows (`GET /me/approvals`, `GET /runs`), which the gate filters.
   */
  RunsChanged: (info: Record<string, never>) => void;
  /**
   * What is kept in Git changed (issue 38): an apply by any path, a source made, changed, deleted or
   * synced, a managed definition changed by force. Sent to every socket of the organization, naming
   * nothing; a client re-reads what it shows (`GET /config/sources`, `/config/drift`, a definition).
   */
  ConfigChanged: (info: Record<string, never>) => void;
  /** Sent just before the server disconnects a socket whose token was revoked or expired, or whose console session was signed out. */
  session_ended: (info: { reason: 'revoked' | 'expired' | 'signed_out' | 'disabled'; message: string }) => void;
  /** A subscription sent without an acknowledgement callback was refused: why (as the ack would have said). */
  subscription_error: (info: { event: 'subscribe' | 'subscribe_conversation' | 'subscribe_pipeline_run'; request: unknown; error: { code: string; message: string } }) => void;
}

export const runRoom = (runId: string) => `run:${runId}`;
export const organizationRoom = (organizationId: string) => `organization:${organizationId}`;
export const conversationRoom = (conversationId: string) => `conversation:${conversationId}`;
export const pipelineRunRoom = (pipelineRunId: string) => `pipeline-run:${pipelineRunId}`;
export const conversationStepRoom = (stepId: string) => `conversation-step:${stepId}`;
