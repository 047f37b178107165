import type { SearchAttributeKey } from '@temporalio/common/lib/search-attributes';

/** Business ids: one verification and one health monitor per server, easy to find in the Temporal UI. */
export const serverVerifyWorkflowId = (serverId: string) => `server-verify-${serverId}`;
export const serverHealthWorkflowId = (serverId: string) => `server-health-${serverId}`;

const keyword = (name: string): SearchAttributeKey<'KEYWORD'> => ({ name, type: 'KEYWORD' });

/** Typed search attributes; the embedded dev server registers them at start, `ensureSearchAttributes` elsewhere. */
export const SEARCH_ATTRIBUTES = {
  organization: keyword('BosunOrganization'),
  server: keyword('BosunServer'),
  deployment: keyword('BosunDeployment'),
} as const;

export interface VerifyServerInput {
  serverId: string;
  organizationId: string;
  maxAttempts: number;
  healthIntervalSeconds: number;
  /** Accept whatever host key the server presents this time (after a reinstall), and pin it. */
  trustNewHostKey: boolean;
  /** "title (host)", for the summary of the health monitor it starts (absent in older verifications). */
  serverLabel?: string;
}

export interface ServerHealthInput {
  serverId: string;
  organizationId: string;
  intervalSeconds: number;
}

export type HealthOutcome = 'verified' | 'offline' | 'skipped' | 'gone';

export interface HealthCheckResult {
  outcome: HealthOutcome;
  /** The worker's configured interval, so a configuration change reaches monitors already running. */
  intervalSeconds: number;
}

/** Search attributes of a server's workflows, whoever starts them (the API or a parent workflow). */
export const serverSearchAttributes = (organizationId: string, serverId: string) => [
  { key: SEARCH_ATTRIBUTES.organization, value: organizationId },
  { key: SEARCH_ATTRIBUTES.server, value: serverId },
];

/** Deployment runs: one workflow per run, started in trigger order by one queue workflow per server. */
export const deploymentRunWorkflowId = (runId: string) => `deployment-run-${runId}`;
export const serverRunQueueWorkflowId = (serverId: string) => `server-run-queue-${serverId}`;

/** "Runs may be waiting": the queue reads them from the database, so wakes carry nothing and may coalesce. */
export const WAKE_QUEUE_SIGNAL = 'wake';

export interface QueuedRun {
  runId: string;
  organizationId: string;
  deploymentId: string;
  serverId: string;
  deploymentName: string;
  triggeredBy: string;
  /** The server's title, for the names a person reads in the Temporal UI (absent in runs queued before it existed). */
  serverTitle?: string;
  /** A fleet run's target: its workflow (a child of the fleet run's) waits for its turn, which the queue signals. */
  fleetTargetWorkflowId?: string;
}

/**
 * Fleet runs: one workflow per run (`deployment-run-<run id>`), starting one child per target, batch
 * by batch; each target waits for its turn in its server's queue, like a one-server run.
 */
export const fleetTargetWorkflowId = (runId: string, serverId: string) => `deployment-run-${runId}-${serverId}`;
/** Queue → target: "your turn on this server". */
export const TURN_SIGNAL = 'turn';
/** The patch after which a target takes its server's turn itself (kept in the database) when nothing is ahead of it. */
export const TURNS_IN_DATABASE = 'turns-in-database';
/** Target → queue: "done with this server" (the target's run id). */
export const RELEASED_SIGNAL = 'released';

/** At most this many targets run at once: a batch's children are one workflow history's. */
export const MAX_BATCH_SIZE = 1000;

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
  batches: number;
  maxFailures: number;
}

export interface FleetProgress {
  plan: FleetPlan;
  nextBatch: number;
  failed: number;
  firstFailure: string | null;
}

/** A target as the fleet run starts it. */
export interface FleetTarget {
  runId: string;
  serverId: string;
  serverTitle: string;
}

export type TargetRunInput = QueuedRun & { fleetRunId: string; batch: number };

/** A target's turn: queued in its server's queue, or failed without running (its server gone or never verified). */
export type TargetQueued = { queued: true } | { failed: string };
/**
 * A target's turn: taken at once (nothing ahead of it on its server; `steps`: begun with it, null when
 * the run had ended), queued, or failed without running.
 */
export type TargetTurn = { turn: true; steps?: RunStepDefinition[] | null } | TargetQueued;

export interface FleetResult {
  status: 'success';
  targets: number;
  duration_seconds: number;
}

/** The summary and details the Temporal UI shows for a fleet run's workflow. */
export const fleetWorkflowMetadata = (run: FleetRunInput, targets: number) => ({
  staticSummary: `${run.deploymentName} on ${targets} servers`,
  staticDetails: [`**Deployment** ${run.deploymentName} (${run.deploymentId})`, `**Targets** ${targets}`, `**Triggered by** ${run.triggeredBy}`, `**Run** ${run.runId}`].join('\n\n'),
});

/** What a run's workflow completes with when the run succeeded (a failed run fails its workflow; a cancelled one is cancelled). */
export interface RunResult {
  status: 'success';
  steps: number;
  duration_seconds: number;
}

/** What a failed step's failure carries, beside its one-line message. */
export interface StepFailureDetails {
  step: string;
  index: number;
  server: string;
  exit_code: number | null;
}

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

export interface RunQueueInput {
  serverId: string;
  organizationId: string;
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

/** A step without timeout_seconds is still stopped after a day: nothing runs unwatched forever. */
export const DEFAULT_STEP_LIMIT_SECONDS = 24 * 3600;

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
}

/** A step's first activity either finishes it or hands its still-running command to the task queue named here. */
export type StepOutcome = StepResult | { handedOff: string };

/** A command still running after this long in its (local, non-heartbeating) first activity is handed off. */
export const STEP_HANDOFF_AFTER_MS = 2000;

/** Search attributes of a run: find it by organization, server or deployment. */
export const runSearchAttributes = (run: QueuedRun) => [
  ...serverSearchAttributes(run.organizationId, run.serverId),
  { key: SEARCH_ATTRIBUTES.deployment, value: run.deploymentId },
];

/** Conversations: one workflow per conversation, planning each instruction and running its steps in order. */
export const conversationWorkflowId = (conversationId: string) => `conversation-${conversationId}`;
export const CONVERSATION_MESSAGE_SIGNAL = 'message';
export const STEP_DECISION_UPDATE = 'decide';

export interface ConversationInput {
  conversationId: string;
  organizationId: string;
  /** Instructions (message ids) not yet planned: the first one, or those carried over a continue-as-new. */
  inbox: string[];
}

/** A conversation workflow that completed: its last instruction succeeded. */
export interface ConversationResult {
  status: 'completed';
  /** Instructions planned by this workflow run (a continue-as-new starts counting again). */
  instructions: number;
  steps_run: number;
}

export interface StepDecision {
  stepId: string;
  approved: boolean;
  by: string;
}

/** A planned step as the workflow sees it: where it is, and what must happen before it runs. */
export interface PlannedStepRef {
  stepId: string;
  index: number;
  /** The step's title (shown in the Temporal UI); absent from steps planned before it was carried. */
  title?: string;
  serverId: string;
  /** Refused by the command policy: never runs. */
  refused: boolean;
  needsApproval: boolean;
  /** A transfer from the migration plan's source server (its id), not a command. */
  sourceServerId: string | null;
}

export type PlanOutcome = { ok: true; steps: PlannedStepRef[] } | { ok: false };

export interface ConversationStepAttempt {
  conversationId: string;
  organizationId: string;
  stepId: string;
  index: number;
  serverId: string;
}

export interface TransferStepAttempt {
  conversationId: string;
  organizationId: string;
  stepId: string;
  index: number;
  sourceServerId: string;
  targetServerId: string;
}

/** Search attributes of a conversation: find it by organization and server. */
export const conversationSearchAttributes = (organizationId: string, serverId: string) => serverSearchAttributes(organizationId, serverId);

/**
 * The workflows as their clients see them: started by name with these signatures, so code that
 * starts them (src/) never imports the workflows themselves. Each workflow is checked against its
 * signature in workflows/index.ts.
 */
export interface WorkflowSignatures {
  serverVerificationWorkflow: (input: VerifyServerInput) => Promise<void>;
  serverHealthWorkflow: (input: ServerHealthInput) => Promise<void>;
  serverRunQueueWorkflow: (input: RunQueueInput) => Promise<void>;
  deploymentRunWorkflow: (run: QueuedRun) => Promise<RunResult>;
  deploymentFleetWorkflow: (run: FleetRunInput) => Promise<FleetResult>;
  deploymentTargetWorkflow: (target: TargetRunInput) => Promise<RunResult>;
  conversationWorkflow: (input: ConversationInput) => Promise<ConversationResult>;
}
