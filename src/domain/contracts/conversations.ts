/** What a conversation's workflow takes and gives, and what its activities exchange with it. */

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
