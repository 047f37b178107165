/*
 * What deployment runs' workflows take and give, and what their activities exchange with them.
 */

/** At most this many targets run at once: a batch's children are one workflow history's. */
export const MAX_BATCH_SIZE = 1000;

/** A step without timeout_seconds is still stopped after a day: nothing runs unwatched forever. */
export const DEFAULT_STEP_LIMIT_SECONDS = 24 * 3600;

/** A command still running after this long in its (local, non-heartbeating) first activity is handed off. */
export const STEP_HANDOFF_AFTER_MS = 2000;

/** A run on one server: a one-server run, or a fleet run's target. */
export interface QueuedRun {
  runId: string;
  organizationId: string;
  deploymentId: string;
  serverId: string;
  deploymentName: string;
  triggeredBy: string;
  /** The server's title, for the names a person reads in the Temporal UI (absent in runs queued before it existed). */
  serverTitle?: string;
  /**
   * The run's place in its server's queue, taken by its trigger, when its workflow was started
   * without the queue (by a worker's sweep, its queue's wake lost): it takes the server's turn
   * itself, or waits for its queue to give it when runs are ahead. Absent: the queue gave it the turn
   * and started its workflow (every run its trigger queued) — or it is a fleet target, placed when
   * its batch starts.
   */
  place?: number;
  /** A fleet run's target, in what queues read before runs took their turns: its workflow, which the queue signals. */
  fleetTargetWorkflowId?: string;
}

export type TargetRunInput = QueuedRun & { fleetRunId: string; batch: number };

/** A run's server and place, as taking its turn needs them. */
export interface RunPlace {
  runId: string;
  serverId: string;
  organizationId: string;
}

/** A run asking for its turn: its place when its trigger took one; the workflow it runs in when it shares one (a target group's). */
export type TurnRequest = RunPlace & { place?: number; workflowId?: string };

/**
 * Where a run stands once it asked for its server's turn: it has the turn (`steps`: begun with it,
 * null when the run had ended meanwhile), waits in the server's queue for it, or failed without
 * running (its server gone or never verified).
 */
/** Change freezes holding a run (status frozen): their names, and when they lift (ms since the epoch) as things stood. */
export interface FrozenHold {
  names: string[];
  until: number;
}

/** A one-server run begun: its steps (null: it had ended), and the freezes holding it before its first step, if any. */
export interface BegunRun {
  steps: RunStepDefinition[] | null;
  frozen: FrozenHold | null;
}

export type TurnOutcome = { turn: true; steps?: RunStepDefinition[] | null; frozen?: FrozenHold | null } | { queued: true } | { failed: string };

/** The queue → run hand-off, from the queue's side: the next run to give the turn to, taken for it. */
export interface NextRun extends QueuedRun {
  /** The workflow to tell "your turn": the run's own (one-server), its fleet target's, or its target group's. */
  workflowId: string;
  /** Its workflow runs other targets too (a target group's): "your turn" names the run. */
  sharedWorkflow?: boolean;
  /** A fleet run's target (its workflow a child of its fleet run's, never started by the queue). */
  fleetTarget: boolean;
}

/** What a wake of a server's queue carries: the runs that asked for their turn (absent in wakes sent before runs named themselves). */
export interface QueueWake {
  runIds: string[];
}

export interface RunQueueInput {
  serverId: string;
  organizationId: string;
}

export interface FleetRunInput {
  runId: string;
  organizationId: string;
  deploymentId: string;
  deploymentName: string;
  triggeredBy: string;
  /** Carried over a continue-as-new: where the run is. */
  progress?: FleetProgress;
}

export interface FleetPlan {
  total: number;
  /** How many batches; in a rolling window, how many groups of targets (see domain/deployments/window.ts). */
  batches: number;
  maxFailures: number;
  /** A rolling window: at most this many targets at once, the next starting as one ends (absent: batches). */
  maxConcurrency?: number;
  /** Approval gates within its batches, in batch order (absent in runs begun before gates existed). */
  gates?: FleetGate[];
  /** The check run on each target of a batch after it (absent: none). */
  healthCheck?: HealthCheck;
  /** The run has rollback steps, run as soon as it halts (absent: none, or only on request). */
  rollbackAutomatic?: boolean;
}

export interface HealthCheck {
  command: string;
  soakSeconds: number;
  timeoutSeconds: number;
  retries: number;
  intervalSeconds: number;
}

/** One attempt of a target's health check, as its workflow asks for it. */
export interface HealthAttempt {
  /** The target (its run document). */
  runId: string;
  serverId: string;
  /** 1-based. */
  attempt: number;
  command: string;
  timeoutSeconds: number;
}

/** How an attempt went: healthy (exit 0), or not with what it said (the end of its output). */
export interface HealthAttemptResult {
  healthy: boolean;
  exitCode: number | null;
  timedOut: boolean;
  output: string;
}

/** Before batch `beforeBatch` (a window's: before target `beforeTarget`), `approvals` distinct people approve within `expiresIn` ("24h"), or the run fails. */
export interface FleetGate {
  beforeBatch: number;
  /** In a rolling window: the target (1-based) it stands before, the first of group `beforeBatch`. */
  beforeTarget?: number;
  approvals: number;
  expiresIn: string;
  expiresInMs: number;
}

/** The actor of a decision, as a workflow carries it to the store (ids as strings). */
export interface DecidingActor {
  type: 'person' | 'service_account';
  id: string;
  name: string;
  token_id: string | null;
  /** The console session it decided in (absent in older histories). */
  session_id?: string | null;
}

/**
 * A person's decision on the gate a fleet run waits at, as the API passes it (after its checks) to the
 * run's workflow. `id`, one per request: a decision its workflow records again (its handler run again
 * after a worker died before the workflow's task was done) is found recorded, not refused.
 */
export type GateDecision = ({ kind: 'approve'; by: DecidingActor; comment: string | null } | { kind: 'reject'; by: DecidingActor; reason: string }) & { id?: string };

/** How a fleet run's gate stands in the store: undecided (null), or how people or its expiry decided it. */
export type StoredGateOutcome = 'approved' | 'rejected' | 'expired' | null;

/** A gate as the store opened it, or finds it opened already: its expiry, and how it was decided since. */
export interface OpenedGate {
  expiresAt: number;
  outcome: StoredGateOutcome;
  /** Who rejected it and why (gateRejection), when rejected. */
  rejection: string | null;
}

/** A rejected run's error: who rejected its gate and why. */
export const gateRejection = (name: string, reason: string) => `approval rejected by ${name}: ${reason}`;

/**
 * What became of a decision, as the run's store found it: recorded (`approvals` now given, the gate
 * `approved` once enough are), or refused with why (the API's code: `already_approved`,
 * `self_approval`, `expired`, `not_awaiting_approval`).
 */
export type GateDecisionResult = { recorded: true; approvals: number; outcome: 'approved' | 'rejected' | null } | { refused: GateRefusal; message: string };
export type GateRefusal = 'already_approved' | 'self_approval' | 'expired' | 'not_awaiting_approval';

/** A rollback a person asked for, of a finished fleet run (`deployment-rollback-<run id>`). */
export interface RollbackRunInput {
  runId: string;
  reason: string;
  requestedBy: DecidingActor | null;
}

/** A pause asked of a fleet run, or its resume, as the API passes it to the run's workflow. */
export interface PauseRequest {
  by: DecidingActor;
  reason: string;
}
/**
 * What became of a pause or resume: recorded, or refused with why — and whether the store holds a
 * pause after all (`pause_asked`), which its workflow follows: a request its handler made again after
 * a worker died, refused the second time, is not lost.
 */
export type PauseResult = { recorded: true } | { refused: 'not_running' | 'not_paused'; message: string; pause_asked?: boolean };

export interface FleetProgress {
  plan: FleetPlan;
  nextBatch: number;
  failed: number;
  firstFailure: string | null;
  /** When the run's first workflow began (ms since the epoch), so a continued run still counts from there (absent before it was carried). */
  startedAt?: number;
  /** A pause asked during the batch before the continue-as-new, still to be held. */
  pauseAsked?: boolean;
}

/** A target as the fleet run starts it. */
export interface FleetTarget {
  runId: string;
  serverId: string;
  serverTitle: string;
}

export interface FleetResult {
  status: 'success';
  targets: number;
  duration_seconds: number;
}

/** What a run's workflow completes with when the run succeeded (a failed run fails its workflow; a cancelled one is cancelled). */
export interface RunResult {
  status: 'success';
  steps: number;
  duration_seconds: number;
}

/** How a run ended, as its workflow reads it when it finds the run ended before it began. */
export interface HowRunEnded {
  status: string;
  error: string | null;
}

/** What a failed step's failure carries, beside its one-line message. */
export interface StepFailureDetails {
  step: string;
  index: number;
  server: string;
  exit_code: number | null;
}

export interface RunStepDefinition {
  name: string;
  command: string;
  timeout_seconds: number | null;
  retries: number;
  continue_on_error: boolean;
  /** Not run: it succeeded in the run this one retries (absent before retries existed). */
  skip?: boolean;
}

export interface StepAttempt {
  runId: string;
  /** The run's server and organization, so the step reads its run, credentials and secrets at once. */
  serverId: string;
  organizationId: string;
  index: number;
  /** Which exit-code retry this is (0 for the first run of the command). */
  exitAttempt: number;
  finalExitAttempt: boolean;
  /** The run's last step, nothing failed before it: its success ends the run (success) in the same write. */
  endsRun?: boolean;
}

export interface StepResult {
  status: 'success' | 'failed';
  exitCode: number | null;
  timedOut: boolean;
  /** The step's success ended its run too (`endsRun`): the run needs no `finishRun`. */
  endedRun?: boolean;
  /** Why what the command wrote to BOSUN_OUTPUT was refused: the step failed though its command exited 0. */
  outputsError?: string;
}

/** A step's first activity either finishes it or hands its still-running command to the task queue named here. */
export type StepOutcome = StepResult | { handedOff: string };

/** How a person reads the server of a run: its title, else its id. */
export const serverLabel = (run: Pick<QueuedRun, 'serverId' | 'serverTitle'>) => run.serverTitle || run.serverId;

/** The summary and details the Temporal UI shows for a run's workflow. */
export const runWorkflowMetadata = (run: QueuedRun) => ({
  staticSummary: `${run.deploymentName} on ${serverLabel(run)}`,
  staticDetails: [
    `**Deployment** ${run.deploymentName} (${run.deploymentId})`,
    `**Server** ${serverLabel(run)} (${run.serverId})`,
    `**Triggered by** ${run.triggeredBy}`,
    `**Run** ${run.runId}`,
  ].join('\n\n'),
});

/** The summary and details the Temporal UI shows for a fleet run's workflow. */
export const fleetWorkflowMetadata = (run: FleetRunInput, targets: number) => ({
  staticSummary: `${run.deploymentName} on ${targets} servers`,
  staticDetails: [`**Deployment** ${run.deploymentName} (${run.deploymentId})`, `**Targets** ${targets}`, `**Triggered by** ${run.triggeredBy}`, `**Run** ${run.runId}`].join('\n\n'),
});
