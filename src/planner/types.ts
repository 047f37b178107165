/** What a planned step may do to its server: nothing, change it, or destroy something. */
export const RISKS = ['read', 'change', 'destructive'] as const;
export type Risk = (typeof RISKS)[number];
export const riskRank = (risk: Risk) => RISKS.indexOf(risk);
export const higherRisk = (a: Risk, b: Risk): Risk => (riskRank(a) >= riskRank(b) ? a : b);

/** Where a step runs: the conversation's server, or one of a migration plan's two servers. */
export type StepTarget = 'server' | 'source' | 'target';

export interface PlannedStep {
  title: string;
  command: string;
  target: StepTarget;
  risk: Risk;
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

export type PlanResult = { ok: true; steps: PlannedStep[] } | { ok: false; reason: string };

export interface Planner {
  readonly name: string;
  plan(instruction: string, context: PlanContext): Promise<PlanResult>;
}
