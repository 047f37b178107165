/** What a planned step may do to its server: nothing, change it, or destroy something. */
export const RISKS = ['read', 'change', 'destructive'] as const;
export type Risk = (typeof RISKS)[number];
export const riskRank = (risk: Risk) => RISKS.indexOf(risk);
export const higherRisk = (a: Risk, b: Risk): Risk => (riskRank(a) >= riskRank(b) ? a : b);

/** Where a step runs: the conversation's server, or one of a migration plan's two servers. */
export type StepTarget = 'server' | 'source' | 'target';

/**
 * A step of a migration plan that moves data from the source to the target, streamed through the
 * worker (the two servers need not reach each other): a directory tree (resumable), or one
 * command's output fed to another (a database dump into a restore), or two outputs compared.
 */
export type Transfer =
  | { kind: 'copy'; from: string; to: string }
  | { kind: 'pipe'; source_command: string; target_command: string }
  | { kind: 'compare'; source_command: string; target_command: string };

export interface PlannedStep {
  title: string;
  /** What runs; for a transfer, both sides' commands as one line (what the policy judges and people read). */
  command: string;
  /** A transfer's target is always `target` (where it writes or what it compares against). */
  target: StepTarget;
  risk: Risk;
  transfer?: Transfer;
}

export type OsFamily = 'debian' | 'rhel' | 'alpine' | 'unknown';

export interface ServerContext {
  title: string;
  username: string;
  os: { name: string | null; version: string | null; kernel: string | null } | null;
}

/** What the planner knows: the server, or the plan's two servers. */
export type PlanContext =
  | { kind: 'server'; server: ServerContext }
  | { kind: 'migration_plan'; title: string; notes: string; source: ServerContext; target: ServerContext };

export type PlanResult =
  | { ok: true; steps: PlannedStep[] }
  /** Not planned: why. `risk` is what was asked (destructive, for a request refused as such), `read` unless said. */
  | { ok: false; reason: string; risk?: Risk };

export interface PlanOptions {
  /** Why the organization's command policy would refuse this step, or null: a planner may try again without it. */
  refusal?: (step: PlannedStep) => string | null;
}

/** A step already run for the instruction being re-planned, as the planner is told about it. */
export interface StepReport {
  title: string;
  command: string;
  target: StepTarget;
  status: 'completed' | 'failed';
  /** The end of its execution log. */
  log: string;
}

export interface Planner {
  readonly name: string;
  /** How many times one instruction may be re-planned after a failed step (none without `replan`). */
  readonly maxReplans?: number;
  plan(instruction: string, context: PlanContext, options?: PlanOptions): Promise<PlanResult>;
  /**
   * After a step failed (the last of `history`): the steps to run instead of the rest of the plan,
   * or a reason to stop. Planners that cannot re-plan leave it out.
   */
  replan?(instruction: string, context: PlanContext, history: StepReport[], options?: PlanOptions): Promise<PlanResult>;
}
