import { shellQuote } from '../shell';
import { classify, isSystemDirectory } from './command-rules';
import { higherRisk, riskRank, type Risk, type Transfer } from './types';

/** An organization's rules for what conversations may run; stored on the organization. */
export interface CommandPolicy {
  /** Destructive commands are refused unless this is true (and then wait for approval by default). */
  allow_destructive: boolean;
  /** Steps of these risks wait for a person's approval before they run. */
  require_approval_for: Risk[];
}

export const DEFAULT_POLICY: CommandPolicy = { allow_destructive: false, require_approval_for: ['destructive'] };

export interface CommandAssessment {
  risk: Risk;
  /** Why it is destructive (empty unless it is). */
  reasons: string[];
}

/**
 * What a command line does, judged from the commands its syntax tree runs (not from words that
 * merely appear in it); a line the shell parser cannot read is destructive. See command-rules.ts.
 */
export function assessCommand(line: string): CommandAssessment {
  const { risk, reasons } = classify(line);
  return { risk, reasons };
}

/** What a step runs: its command, or a transfer's commands on each server (a copy runs tar on both). */
export function commandLines(step: { command: string; transfer?: Transfer | null }): string[] {
  const transfer = step.transfer;
  if (!transfer) return [step.command];
  if (transfer.kind === 'copy') return [`tar -C ${shellQuote(transfer.from)} -cf - .`, `tar -C ${shellQuote(transfer.to)} -xpf -`];
  return [transfer.source_command, transfer.target_command];
}

/** How every refusal by the organization's command policy begins. */
export const POLICY_REFUSAL = "Refused by the organization's command policy: ";

export type PolicyVerdict =
  | { allowed: true; risk: Risk; needsApproval: boolean }
  | { allowed: false; risk: Risk; reason: string };

/**
 * The policy's verdict on a planned step: its risk is the higher of the planner's claim and what
 * the command is seen to do; destructive commands are refused unless the organization allows them.
 */
export function judgeStep(step: { command: string; risk: Risk; title?: string; transfer?: Transfer | null }, policy: CommandPolicy, requireApproval = false): PolicyVerdict {
  const assessment = commandLines(step)
    .map((line) => assessCommand(line))
    .reduce((a, b) => ({ risk: higherRisk(a.risk, b.risk), reasons: [...a.reasons, ...b.reasons] }), { risk: 'read' as Risk, reasons: [] as string[] });
  // A tree copied onto a system directory overwrites what the target runs on.
  if (step.transfer?.kind === 'copy' && isSystemDirectory(step.transfer.to)) {
    assessment.risk = 'destructive';
    assessment.reasons.push(`a copy onto ${step.transfer.to}, a system directory`);
  }
  const risk = higherRisk(step.risk, assessment.risk);
  if (risk === 'destructive' && !policy.allow_destructive) {
    const why = assessment.reasons.length ? assessment.reasons.join('; ') : step.title ? `the planner marked "${step.title}" destructive` : 'the planner marked it destructive';
    return { allowed: false, risk, reason: `${POLICY_REFUSAL}this command is destructive (${why}). An administrator can allow destructive commands with PUT /api/v1/policy.` };
  }
  const needsApproval = policy.require_approval_for.includes(risk) || (requireApproval && riskRank(risk) >= riskRank('change'));
  return { allowed: true, risk, needsApproval };
}
