import type { Deployment } from '../../domain/deployments/model';
import { agentHeldRisks, organizationPolicy } from '../../domain/organizations/policy';
import { assessCommand } from '../../domain/planner/policy';
import { higherRisk, type Risk } from '../../domain/planner/types';
import type { Principal } from '../../domain/tokens/service';
import { actsAsAgent } from '../mcp/agent-door';

/*
 * An agent's pipeline run waits for a person before each stage that changes servers, as an agent's
 * `change` and `destructive` commands do in a conversation: the stage's deployment's commands are
 * judged by the command policy, and a stage whose risk the organization holds for agents
 * (`agentHeldRisks`) and that has no gate of its own gets one, of one person's approval.
 */

/** The gate an agent's run stops at before a stage that changes servers: one person (never an agent) approves within a day, as a stage gate's default. */
export const AGENT_HOLD_GATE = { approvals: 1, expires_in: '24h' } as const;

/** The highest risk of what a deployment runs: its steps, its fleet health check, its rollback's steps. */
export function deploymentRisk(deployment: Pick<Deployment, 'steps' | 'strategy' | 'rollback'>): Risk {
  const lines = [...deployment.steps.map((step) => step.command), ...(deployment.strategy?.health_check ? [deployment.strategy.health_check.command] : []), ...(deployment.rollback?.steps ?? []).map((step) => step.command)];
  return lines.reduce<Risk>((risk, line) => higherRisk(risk, assessCommand(line).risk), 'read');
}

/**
 * For a run an agent triggers (or retries), the gate each stage without one waits at because its
 * deployment changes servers; empty for anyone else's run.
 */
export async function agentHolds(principal: Principal, viaAgentDoor: boolean, stages: Array<{ stage: { name: string; gate?: unknown }; deployment: Pick<Deployment, 'steps' | 'strategy' | 'rollback'> }>) {
  const holds = new Map<string, typeof AGENT_HOLD_GATE>();
  if (!(await actsAsAgent(principal, viaAgentDoor))) return holds;
  const held = agentHeldRisks(await organizationPolicy(principal.organizationId));
  for (const { stage, deployment } of stages) if (!stage.gate && held.includes(deploymentRisk(deployment))) holds.set(stage.name, AGENT_HOLD_GATE);
  return holds;
}
